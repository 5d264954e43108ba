"""torch.distributed.fsdp's configuration values and wrap policies equal PyTorch's; FSDP itself
raises NotImplementedError naming itself."""
import dataclasses

import pytest

import mindtorch_v2 as mt
from mindtorch_v2.distributed import fsdp
from mindtorch_v2.distributed.fsdp import wrap


def test_enums_and_dataclasses_equal_pytorch():
    tf = pytest.importorskip("torch.distributed.fsdp")
    for name in ("ShardingStrategy", "StateDictType", "BackwardPrefetch", "OptimStateKeyType"):
        assert [(m.name, m.value) for m in getattr(fsdp, name)] == [(m.name, m.value) for m in getattr(tf, name)]
    for name in ("CPUOffload", "FullStateDictConfig", "ShardedStateDictConfig", "LocalStateDictConfig",
                 "FullOptimStateDictConfig", "ShardedOptimStateDictConfig", "LocalOptimStateDictConfig",
                 "MixedPrecisionPolicy", "CPUOffloadPolicy"):
        ours, theirs = getattr(fsdp, name), getattr(tf, name)
        assert [(f.name, f.default) for f in dataclasses.fields(ours)] == \
               [(f.name, f.default) for f in dataclasses.fields(theirs)], name
    assert [f.name for f in dataclasses.fields(fsdp.MixedPrecision)] == [f.name for f in dataclasses.fields(tf.MixedPrecision)]


def test_wrap_policies_equal_pytorch():
    import torch
    from torch.distributed.fsdp import wrap as twrap
    ours_mods = [mt.nn.Linear(2, 2), mt.nn.ModuleList(), mt.nn.MultiheadAttention(4, 2)]
    their_mods = [torch.nn.Linear(2, 2), torch.nn.ModuleList(), torch.nn.MultiheadAttention(4, 2)]
    for om, tm in zip(ours_mods, their_mods):
        for recurse in (True, False):
            for numel in (10, 10**9):
                assert wrap.size_based_auto_wrap_policy(om, recurse, numel) == \
                    twrap.size_based_auto_wrap_policy(tm, recurse, numel)
                assert wrap.transformer_auto_wrap_policy(om, recurse, numel, {type(ours_mods[0])}) == \
                    twrap.transformer_auto_wrap_policy(tm, recurse, numel, {torch.nn.Linear})
                assert wrap.lambda_auto_wrap_policy(om, recurse, numel, lambda m: False) == \
                    twrap.lambda_auto_wrap_policy(tm, recurse, numel, lambda m: False)


def test_sharding_is_not_implemented():
    with pytest.raises(NotImplementedError, match="torch.distributed.fsdp.FullyShardedDataParallel"):
        fsdp.FullyShardedDataParallel(mt.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="torch.distributed.fsdp.fully_shard"):
        fsdp.fully_shard(mt.nn.Linear(2, 2))
    assert not isinstance(mt.nn.Linear(2, 2), fsdp.FullyShardedDataParallel)
