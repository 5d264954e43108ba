"""Once a Tensor subclass defines __torch_function__, every torch function is wrapped (overrides.py). The
wrappers stay invisible: a warning raised inside a torch function still points at the caller, the profiler's
stacks start at the caller, functions captured before the wrapping (default arguments) keep pickling, and
PyTorch's activation checks (activation is F.gelu) still hold."""
import pickle
import warnings

import mindtorch_v2 as mt
from mindtorch_v2 import overrides


class _Sub(mt.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def test_wrappers_installed():
    assert overrides.WRAPPER_CODES and overrides.unwrapped(mt.add) is not mt.add


def test_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mt.nn.functional.softmax(mt.ones(2, 3))  # implicit dim: PyTorch's UserWarning, stacklevel 2
    assert len(w) == 1 and w[0].filename == __file__


def test_profiler_stack_starts_at_the_caller():
    from mindtorch_v2.profiler import profile
    x = mt.ones(2)
    with profile(with_stack=True) as prof:
        mt.add(x, x)
    add = [e for e in prof.events() if e.name == "aten::add"][0]
    assert "test_profiler_stack_starts_at_the_caller" in add.stack[0]


def test_captured_functions_pickle_and_compare():
    layer = mt.nn.TransformerEncoderLayer(8, 2, 16)  # activation=F.relu, captured at class definition
    assert layer.activation_relu_or_gelu == 1 and layer.activation is mt.nn.functional.relu
    again = pickle.loads(pickle.dumps(mt.nn.TransformerEncoderLayer(8, 2, 16, activation="gelu")))
    assert again.activation is mt.nn.functional.gelu and again.activation_relu_or_gelu == 2
    assert pickle.loads(pickle.dumps(mt.nn.functional.gelu)) is mt.nn.functional.gelu
