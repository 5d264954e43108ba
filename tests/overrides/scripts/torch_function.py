"""The __torch_function__ protocol on a logging subclass, NotImplemented, several overriding types, a
non-Tensor class, the disabling context, torch.overrides' helpers and the errors: one JSON line."""
import json
import sys

import torch
import torch.nn.functional as F
from torch.overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,
                             has_torch_function_variadic, is_tensor_like)

result = {"_library": "mindtorch_v2" if "mindtorch_v2" in torch.__file__ else "torch"}
LOG = []


def name(func):
    return getattr(func, "__name__", repr(func))


class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LOG.append([cls.__name__, name(func), [t.__name__ for t in types]])
        return super().__torch_function__(func, types, args, kwargs)


class Child(Logged):
    pass


class Refuses(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LOG.append([cls.__name__, name(func), [t.__name__ for t in types]])
        return NotImplemented


class Duck:  # not a Tensor: takes over every torch call it is passed to
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LOG.append(["Duck", name(func), [t.__name__ for t in types]])
        return "duck:" + name(func)


def describe(x):
    if isinstance(x, torch.Tensor):
        return [type(x).__name__, x.detach().flatten().tolist()]
    if isinstance(x, (tuple, list)):
        return [describe(v) for v in x]
    return repr(x) if not isinstance(x, (int, float, str, bool)) else x


def run(label, fn):
    LOG.clear()
    try:
        out = describe(fn())
    except Exception as e:
        out = ["raised", type(e).__name__, str(e)]
    result[label] = {"out": out, "log": list(LOG)}


base = torch.arange(6.0).reshape(2, 3)
s, plain = base.as_subclass(Logged), torch.ones(2, 3)
c, r = base.as_subclass(Child), base.as_subclass(Refuses)
cases = {
    "torch_add": lambda: torch.add(s, 1), "method_add": lambda: s.add(plain, alpha=2), "operator": lambda: s * plain,
    "plain_first": lambda: torch.mul(plain, s), "cat_list": lambda: torch.cat([plain, s]), "relu": lambda: F.relu(s),
    "linear": lambda: F.linear(s, torch.ones(4, 3)), "sum": lambda: s.sum(), "max_dim": lambda: s.max(1),
    "getitem": lambda: s[0], "neg": lambda: -s, "matmul": lambda: s @ plain.t(), "reshape": lambda: s.reshape(3, 2),
    "clone_detach": lambda: s.clone().detach(), "chunk": lambda: torch.chunk(s, 2, 1),
    "child_before_parent": lambda: torch.add(s, c), "child_before_parent_2": lambda: torch.add(c, s),
    "refused_then_logged": lambda: torch.add(r, s), "refused_only": lambda: torch.add(r, 1),
    "refused_method": lambda: r.add(1), "refused_operator": lambda: r + 1, "refused_relu": lambda: F.relu(r),
    "duck": lambda: torch.add(Duck(), 1), "duck_kwarg": lambda: torch.add(plain, other=Duck()),
    "duck_in_list": lambda: torch.stack([plain, Duck()]),
    "as_subclass_int": lambda: base.as_subclass(int), "param": lambda: torch.nn.Parameter(base) + 1,
    "handle_python": lambda: handle_torch_function(torch.add, (Duck(),), Duck(), 1),
    "handle_not_implemented": lambda: handle_torch_function(torch.add, (r,), r, 1),
}
for label, fn in cases.items():
    run(label, fn)


def disabled():
    with torch._C.DisableTorchFunctionSubclass():
        return [s + 1, torch.add(s, 1), torch._C._is_torch_function_enabled()]


run("disabled", disabled)
run("enabled_again", lambda: torch._C._is_torch_function_enabled())
run("predicates", lambda: [has_torch_function((plain, 1)), has_torch_function((plain, s)), has_torch_function_unary(s),
                           has_torch_function_unary(plain), has_torch_function_variadic(1, Duck()),
                           has_torch_function((torch.nn.Parameter(base),)), is_tensor_like(Duck()), is_tensor_like(s),
                           is_tensor_like(3), is_tensor_like(plain)])


def my_op(x, y):  # a library function following PyTorch's pattern
    if has_torch_function_variadic(x, y):
        return handle_torch_function(my_op, (x, y), x, y)
    return x + y


run("library_function", lambda: [my_op(s, 1), my_op(plain, 1)])


def grad():
    leaf = base.clone().requires_grad_()
    x = leaf.as_subclass(Logged)
    (x * x).sum().backward()
    return [leaf.grad, type(x).__name__, x.requires_grad]


run("autograd", grad)
print("RESULT " + json.dumps(result))
