"""torch.onnx.symbolic_helper: the decorator symbolic functions are written with. Symbolic functions run
only inside an ONNX export, which mindtorch_v2 does not implement, so parse_args only marks them."""
import functools


def parse_args(*arg_descriptors):
    def decorator(fn):
        fn._arg_descriptors = arg_descriptors

        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            return fn(g, *args, **kwargs)
        return wrapper
    return decorator
