"""torch.cuda.graphs: CUDA graph capture, which needs CUDA; the names exist (libraries annotate
with them), and using them raises PyTorch's errors for a build without CUDA."""


class CUDAGraph:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class CUDAGraph")


class graph:
    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        from . import Stream
        Stream()  # capture runs on a side stream: "torch.cuda.Stream requires CUDA support"


def graph_pool_handle():
    raise RuntimeError("Tried to instantiate dummy base class _graph_pool_handle")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    raise RuntimeError("torch.cuda.make_graphed_callables requires CUDA support")


def is_current_stream_capturing():
    return False
