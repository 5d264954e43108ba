"""init_method URLs: rendezvous's argument errors (type and text) equal PyTorch's."""
import importlib
import os

import pytest

URLS = ["file:///tmp/mt_rdv", "file:///tmp/mt_rdv?rank=0", "file://", "tcp://localhost", "tcp://localhost:1234",
        "tcp://localhost:1234?rank=1", "env://", "unknown://x?rank=0&world_size=1"]


def _outcomes(module):
    r = importlib.import_module(module)  # torch.distributed.rendezvous is also a function's name
    out = []
    env = {k: os.environ.pop(k) for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k in os.environ}
    try:
        for url in URLS:
            try:
                next(r.rendezvous(url))
                out.append((url, "ok"))
            except Exception as e:
                out.append((url, type(e).__name__, str(e)))
    finally:
        os.environ.update(env)
    return out


def test_rendezvous_errors_equal_pytorch():
    pytest.importorskip("torch.distributed")
    assert _outcomes("mindtorch_v2.distributed.rendezvous") == _outcomes("torch.distributed.rendezvous")
