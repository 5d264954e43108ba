"""DTensor placement values (Shard/Replicate/Partial) behave as PyTorch's: repr, str, equality,
hashing and the is_* predicates."""
import pytest

from mindtorch_v2.distributed.tensor import Partial, Replicate, Shard


def _describe(mod):
    items = [mod.Shard(0), mod.Shard(1), mod.Replicate(), mod.Partial(), mod.Partial("max"), mod.Partial(None)]
    out = []
    for p in items:
        out.append((repr(p), str(p), p.is_shard(), p.is_shard(0), p.is_shard(1), p.is_replicate(), p.is_partial(),
                    p.is_partial("sum"), p.is_partial("max")))
    out.append([a == b for a in items for b in items])
    out.append([hash(a) == hash(b) for a in items for b in items if a == b])
    return out


def test_placements_equal_pytorch():
    td = pytest.importorskip("torch.distributed.tensor")

    class Ours:
        pass
    Ours.Shard, Ours.Replicate, Ours.Partial = Shard, Replicate, Partial
    assert _describe(Ours) == _describe(td)
