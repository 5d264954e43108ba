"""torch.library: operators defined from Python, as PyTorch's torch/library.py and
torch/_library/custom_ops.py define them for eager use.

The registry and the dispatch live in _ops.py (torch.ops); this module is the registration API:
Library / define / impl (kernels by dispatch key or device type), custom_op (a function becomes an
operator whose schema is inferred from its annotations, with register_kernel / register_fake /
register_autograd / register_vmap), and opcheck's eager checks.

Autograd through an operator is an autograd.Function generated per operator (named
GeneratedBackwardFor_<ns>_<op>_<overload>, as PyTorch's), registered as its Autograd kernel: forward
runs the operator below autograd, then setup_context; backward is the registered backward.
What is absent: overriding built-in operators (aten::..., which torch.ops serves from PyTorch's
schema table in _aten.py, not from this registry); torch_dispatch rules; register_vmap is recorded (vmap runs an operator
per sample, which gives the same values).
"""
import collections.abc
import dataclasses
import enum
import inspect
import re
import sys
import typing
import warnings
import weakref
from types import GenericAlias

from . import _ops
from ._ops import OpOverload, Tag, fill_defaults, flat_tensors
from ._tensor import Tensor

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_autocast", "register_fake",
           "register_torch_dispatch", "register_vmap", "get_ctx", "get_kernel", "custom_op", "triton_op",
           "wrap_triton", "infer_schema", "opcheck", "register_autograd", "register_kernel"]

_reserved_namespaces = ["prim"]


class EffectType(enum.Enum):
    """torch._library.effects.EffectType: the side effects an operator can declare (for graph capture, which
    keeps ORDERED ops in program order; eager calls run in order anyway)."""
    ORDERED = "Ordered"


EffectType.__module__ = "torch._library.effects"
_keep_alive = []   # the Libraries the function forms create: they live as long as the process
_impls = set()     # "ns/name/key" of every Python kernel
_defs = set()
_DEF_LIBS = {}     # namespace -> where its "DEF" Library was made


def fallthrough_kernel():
    """A dummy function to pass to Library.impl to register a fallthrough."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def parse_namespace(qualname):
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname '
                         "passed to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin")
    return splits[0], splits[1]


def _caller(depth=2):
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def _destroy(defs, impls):
    for qualname in defs:
        _ops.undefine(qualname)
        _defs.discard(qualname)
    for qualname, key in impls:
        _ops._KERNELS.get(qualname, {}).pop(key, None)
        if key == "Fake":
            _ops._FAKES.pop(qualname, None)
        _impls.discard(f"{qualname.replace('::', '/')}/{key}")
    defs.clear()
    impls.clear()


class Library:
    """A set of operator definitions and kernels of one namespace; destroying it (or its garbage
    collection) removes them. kind: "DEF" (the namespace's one definition), "FRAGMENT", "IMPL"."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        where = _caller()
        if kind == "DEF":
            if ns in _DEF_LIBS:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please "
                                   "put all of your definitions in a single TORCH_LIBRARY block.  If you were trying "
                                   "to specify implementations, consider using TORCH_LIBRARY_IMPL (which can be "
                                   "duplicated).  If you really intended to define operators for a single namespace "
                                   "in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate "
                                   f"this.  Previous registration of TORCH_LIBRARY was registered at "
                                   f"{_DEF_LIBS[ns]}; latest registration was registered at {where}")
            _DEF_LIBS[ns] = where
        self.m = object()  # None once destroyed
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs, self._op_impls = set(), set()
        self._finalizer = weakref.finalize(self, Library._cleanup, self._op_defs, self._op_impls,
                                           ns if kind == "DEF" else None)

    @staticmethod
    def _cleanup(defs, impls, def_ns):
        _destroy(defs, impls)
        if def_ns is not None:
            _DEF_LIBS.pop(def_ns, None)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def _check_alive(self):
        if self.m is None:
            raise AssertionError("Library object has been destroyed")

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines a new operator in this namespace from its schema; returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_alive()
        if isinstance(tags, Tag):
            tags = (tags,)
        qualname = _ops.define(self.ns, schema, tags, _caller())
        self._op_defs.add(qualname)
        _defs.add(qualname)
        return schema.split("(")[0].split(".")[0]

    def _resolve_op_name(self, op_name, api_name):
        if isinstance(op_name, str):
            return op_name
        if isinstance(op_name, OpOverload):
            return op_name._qualname.split("::")[1]
        raise RuntimeError(f"{api_name} should be passed either a name or an OpOverload object as the first "
                           f"argument, got {type(op_name)}")

    def _qualname(self, name):
        return _ops._key(self.ns, name)

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Registers fn as the operator's kernel for a dispatch key ("CPU", "Meta", "Autograd",
        "CompositeExplicitAutograd", "CompositeImplicitAutograd" (the default), ...)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        name = self._resolve_op_name(op_name, "impl")
        key = self.ns + "/" + name.split("::")[-1] + "/" + dispatch_key
        if not allow_override and key in _impls:
            raise RuntimeError("This is not allowed since there's already a kernel registered from python overriding "
                               f"{name.split('::')[-1]}'s behavior for {dispatch_key} dispatch key and {self.ns} "
                               "namespace.")
        self._check_alive()
        qualname = self._qualname(name)
        if qualname not in _ops._DEFS and self.ns in ("aten", "prim", "prims", "quantized"):
            raise NotImplementedError(f"torch.library.Library.impl: a kernel for the built-in operator {qualname} is "
                                      "not implemented (mindtorch_v2's own operators do not dispatch through "
                                      "torch.library)")
        dispatch_key = dispatch_key or "CompositeImplicitAutograd"
        if dispatch_key.startswith("Autograd"):  # AutogradCPU and friends: one Autograd kernel here
            dispatch_key = "Autograd"
        if fn is fallthrough_kernel:
            _ops._KERNELS.get(qualname, {}).pop(dispatch_key, None)
        else:
            _ops._KERNELS.setdefault(qualname, {})[dispatch_key] = (fn, with_keyset)
        self._op_impls.add((qualname, dispatch_key))
        _impls.add(key)

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=True):
        """Registers the fake impl (meta-tensor behaviour) of an operator of this namespace."""
        qualname = self._qualname(self._resolve_op_name(op_name, "_register_fake"))
        if qualname not in _ops._DEFS:
            raise RuntimeError(f"operator {qualname} does not exist")
        if not allow_override and qualname in _ops._FAKES:
            raise RuntimeError(f"register_fake(...): the operator {qualname} already has an fake impl registered at "
                               f"{getattr(_ops._FAKES[qualname], '_where', '<unknown>')}.")
        _ops._FAKES[qualname] = fn
        self._op_impls.add((qualname, "Fake"))

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("torch.library.Library.fallback is not implemented (mindtorch_v2's own operators "
                                  "do not dispatch through torch.library)")

    def _destroy(self):
        self.m = None
        self._finalizer()


def define(qualname, schema, *, lib=None, tags=()):
    """Defines a new operator "ns::name" from a schema without its name, e.g. "(Tensor x) -> Tensor".
    The old form define(lib, schema, alias_analysis="") returns a decorator that registers the kernel."""
    if isinstance(qualname, Library):
        lib, schema_ = qualname, schema

        def wrap(f):
            name = lib.define(schema_)
            lib.impl(name, f)
            return f
        return wrap
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = parse_namespace(qualname)
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not re.fullmatch(r"\(.*\) -> .*", schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" '
                         f'but got "{schema}"')
    lib.define(name + schema, alias_analysis="", tags=tags)


def _device_type_to_key(device_type):
    if device_type == "default":
        return "CompositeExplicitAutograd"
    return _ops.dispatch_key_for_device(device_type)


_DISPATCH_KEYS = {"CPU", "CUDA", "Meta", "Autograd", "AutogradCPU", "AutogradCUDA", "CompositeExplicitAutograd",
                  "CompositeImplicitAutograd", "BackendSelect", "FuncTorchBatched", "ADInplaceOrView", "XPU", "MPS",
                  "PrivateUse1", "AutocastCPU", "AutocastCUDA"}


def impl(qualname, types, func=None, *, lib=None):
    """Registers func as the kernel of operator "ns::name" for device types ("cpu", "cuda", "default"
    for all) or dispatch keys. The old form impl(lib, name, dispatch_key="") returns a decorator."""
    if isinstance(qualname, Library):
        lib_, name, key = qualname, types, func or ""

        def wrap(f):
            lib_.impl(name, f, key)
            return f
        return wrap
    if isinstance(types, str):
        types = (types,)
    keys = {t if t in _DISPATCH_KEYS else _device_type_to_key(t) for t in types}

    def register(func):
        namespace, _ = parse_namespace(qualname)
        use_lib = _library_for_registration(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, func, key)

    if func is None:
        return register
    register(func)


def _library_for_registration(namespace, lib):
    if lib is not None:
        return lib
    use_lib = Library(namespace, "FRAGMENT")
    _keep_alive.append(use_lib)
    return use_lib


def _resolve_op(op, registration_name):
    """A CustomOpDef when op names one, else its "ns::name" string."""
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"{registration_name}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, OpOverload):
        op = op._qualname
    if isinstance(op, CustomOpDef):
        return op
    return OPDEFS.get(op, op)


# ---- infer_schema ----

def _derived(base, text, list_base, optional_base_list, optional_list_base):
    seqs = lambda t: (typing.Sequence[t], typing.List[t], GenericAlias(collections.abc.Sequence, (t,)),  # noqa: E731
                      GenericAlias(list, (t,)))
    out = [(base, text), (typing.Optional[base], f"{text}?")]
    if list_base:
        out += [(s, f"{text}[]") for s in seqs(base)]
    if optional_base_list:
        out += [(s, f"{text}?[]") for s in seqs(typing.Optional[base])]
    if optional_list_base:
        out += [(typing.Optional[s], f"{text}[]?") for s in seqs(base)]
    return out


def _param_types():
    from . import types as _types
    from ._device import device
    from ._dtype import dtype
    rows = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True), (str, "str", False, False, False),
            (_types.Number, "Scalar", True, False, False), (dtype, "ScalarType", False, False, False),
            (device, "Device", False, False, False)]
    return dict(p for row in rows for p in _derived(*row))


def _return_types():
    from . import types as _types
    return {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]", int: "SymInt",
            float: "float", bool: "bool", _types.Number: "Scalar"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The schema of a function from its type annotations, e.g. "(Tensor x) -> Tensor"."""
    from ._device import device
    from ._dtype import dtype
    sig = inspect.signature(prototype_function)
    tags = () if tags is None else (tags,) if isinstance(tags, Tag) else tuple(tags)
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    scope = dict(prototype_function.__globals__)

    def resolve(ty):
        if isinstance(ty, str):
            try:
                return eval(ty, scope)
            except NameError as e:
                error_fn(f"Unsupported type annotation {ty}. It is not a type. ({e}). If you are using 'from "
                         "__future__ import annotations', note that annotations are evaluated lazily as strings; make "
                         "sure all types referenced in annotations are importable at module scope, not only inside a "
                         "local function.")
            except Exception as e:
                error_fn(f"Unsupported type annotation {ty}. It is not a type. ({type(e).__name__}: {e})")
        origin = typing.get_origin(ty)
        if origin is not None and any(isinstance(a, str) for a in typing.get_args(ty)):
            return GenericAlias(origin, tuple(resolve(a) for a in typing.get_args(ty)))
        return ty

    supported = _param_types()
    params, seen, kwarg_only = [], set(), False
    first_name = first_type = first_alias = None
    out_aliases, out_names = [], []
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not kwarg_only:
            params.append("*")
            kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = resolve(param.annotation)
        if ann not in supported:
            if typing.get_origin(ann) is tuple:
                targs = typing.get_args(ann)
                as_list = (list if not targs else list[targs[0]] if len(targs) == 1 or targs[1:] == (Ellipsis,)
                           else list[typing.Union[targs]])
                example = f"For example, {as_list}.\n\n" if as_list in supported else "\n\n"
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs "
                         f"in schema. As a workaround, please try to use List instead. {example}"
                         f"The valid types are: {supported.keys()}.")
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. The valid types are: "
                     f"{supported.keys()}.")
        schema_type = supported[ann]
        if param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and first_name is None:
            first_name, first_type, first_alias = name, schema_type, f"a{idx}"
        mutated = False
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            mutated = schema_type.startswith("Tensor")
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                         "mutated")
            mutated = True
        if mutated:
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        if is_out and mutated:
            if param.kind != inspect.Parameter.KEYWORD_ONLY:
                error_fn("torch.Tag.out requires mutable arguments to be keyword-only.")
            if schema_type != f"Tensor(a{idx}!)":
                error_fn("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
            out_aliases.append(f"a{idx}")
            out_names.append(name)
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
            continue
        d = param.default
        if d is None or isinstance(d, (int, float, bool)):
            text = str(d)
        elif isinstance(d, (str, device)):
            text = f'"{d}"'
        elif isinstance(d, dtype):
            text = str(d)[len("torch."):]
        else:
            error_fn(f"Parameter {name} has an unsupported default value type {type(d)}. Please file an issue on "
                     "GitHub so we can prioritize this.")
        params.append(f"{schema_type} {name}={text}")
    if mutates_args != "unknown":
        missing = set(mutates_args) - seen
        if missing:
            error_fn(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
                     "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                     "don't know.")
    if is_inplace:
        if first_name is None:
            error_fn("torch.Tag.inplace requires a positional Tensor argument.")
        if first_type != "Tensor":
            error_fn("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if type(mutates_args) is str or set(mutates_args) != {first_name}:
            error_fn(f"torch.Tag.inplace requires mutates_args to contain exactly the first positional argument, got "
                     f"{mutates_args}.")
    if is_out and not out_aliases:
        error_fn("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    ret_ann = resolve(sig.return_annotation)
    if is_out:
        want = Tensor if len(out_aliases) == 1 else None
        ok = ret_ann is want if want is not None else (typing.get_origin(ret_ann) is tuple and
                                                       typing.get_args(ret_ann) == (Tensor,) * len(out_aliases))
        if not ok:
            error_fn("torch.Tag.out requires the return annotation to match the mutable keyword-only Tensor "
                     f"arguments {tuple(out_names)}.")
        rets = [f"Tensor({a}!)" for a in out_aliases]
        ret = rets[0] if len(rets) == 1 else f"({', '.join(rets)})"
    else:
        ret = _parse_return(ret_ann, error_fn)
    if is_inplace:
        if ret != "Tensor":
            error_fn("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        ret = f"Tensor({first_alias}!)"
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


def _parse_return(annotation, error_fn):
    supported = _return_types()
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in supported:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {supported}.")
        return supported[annotation]
    args = typing.get_args(annotation)
    for a in args:
        if a not in supported:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {supported}.")
    out = ", ".join(supported[a] for a in args)
    return f"(({out}))" if len(args) == 1 else f"({out})"


# ---- autograd through an operator ----

@dataclasses.dataclass
class _Info:
    _backward_fn: object
    _setup_context_fn: object


@dataclasses.dataclass
class _Metadata:
    keyword_only_args: dict
    spec: object = None          # the input tree (operators with tensor lists)
    output_spec: object = None
    result_is_tuple: bool = None


def _not_list_of_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(not isinstance(x, Tensor) for x in tree)
    return True


def _not_list_of_optional_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(x is not None and not isinstance(x, Tensor) for x in tree)
    return True


def _is_out(schema):
    return any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def make_autograd_impl(op, info):
    """The Autograd kernel of op: an autograd.Function whose forward runs op below autograd and then
    info's setup_context, and whose backward is info's backward. Tensor lists in the arguments or
    results are flattened into the Function's inputs and outputs (PyTorch's supports_tensorlist)."""
    from .autograd.function import Function
    from .autograd.grad_mode import is_grad_enabled
    from .utils._pytree import tree_flatten, tree_unflatten
    schema, qualname = op._schema, op._qualname
    has_kwarg_only = any(a.kwarg_only for a in schema.arguments)
    lists = any(re.match(r"Tensor\??\[\]", a.type) for a in (*schema.arguments, *schema.returns))

    def forward(ctx, *args):
        meta, args = args[-1], args[:-1]
        if lists:
            args = tree_unflatten(list(args), meta.spec)
        result = _ops.redispatch_below_autograd(qualname, args, meta.keyword_only_args)
        if info._setup_context_fn:
            fargs, fkwargs = fill_defaults(schema, args, meta.keyword_only_args)
            if has_kwarg_only:
                info._setup_context_fn(ctx=ctx, inputs=fargs, keyword_only_inputs=fkwargs, output=result)
            else:
                info._setup_context_fn(ctx=ctx, inputs=fargs, output=result)
        if not lists:
            return result
        meta.result_is_tuple = isinstance(result, tuple)
        flat, meta.output_spec = tree_flatten(result if meta.result_is_tuple else (result,), _not_list_of_tensor)
        return tuple(flat)

    def backward(ctx, *grads):
        if not info._backward_fn:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. Please use "
                               "register_autograd to add one.")
        meta = ctx._pt_metadata
        prev = ctx.needs_input_grad
        try:
            needs = ctx.needs_input_grad[:-1]
            if lists:
                grads = tree_unflatten(list(grads), meta.output_spec)
                needs = tree_unflatten(list(needs), meta.spec)
            ctx.needs_input_grad = needs
            result = info._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        if not isinstance(result, tuple):
            result = (result,)
        if lists:
            flat, spec = tree_flatten(result, _not_list_of_optional_tensor)
            if spec != meta.spec:
                raise RuntimeError(f"Expected the return from backward to be of the same structure as the inputs. "
                                   f"Got: {spec} (return from backward), {meta.spec} (inputs)")
            result = tuple(flat)
        return (*result, None)

    def forward_with_meta(ctx, *args):
        ctx._pt_metadata = args[-1]
        return forward(ctx, *args)

    name = f"GeneratedBackwardFor_{op._namespace}_{op._opname}_{op._overloadname}"
    generated = type(name, (Function,), {"forward": staticmethod(forward_with_meta),
                                         "backward": staticmethod(backward)})

    def autograd_impl(keyset, *args, **keyword_only_args):
        if _is_out(schema):
            if is_grad_enabled() and any(t.requires_grad for t in flat_tensors(args, keyword_only_args)):
                raise RuntimeError(f"{op._opname}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")
            return _ops.redispatch_below_autograd(qualname, args, keyword_only_args)
        if not (is_grad_enabled() and any(t.requires_grad for t in flat_tensors(args))):
            return _ops.redispatch_below_autograd(qualname, args, keyword_only_args)
        meta = _Metadata(keyword_only_args)
        if not lists:
            return generated.apply(*args, meta)
        flat, meta.spec = tree_flatten(args, _not_list_of_tensor)
        result = tree_unflatten(list(generated.apply(*flat, meta)), meta.output_spec)
        return result if meta.result_is_tuple else result[0]

    return autograd_impl


def _bump_versions(schema, args, kwargs):
    """ADInplaceOrView for an operator's mutated arguments: their version counters count the write."""
    from .autograd.graph import increment_version
    positional = [a for a in schema.arguments if not a.kwarg_only]
    for a, v in list(zip(positional, args)) + [(a, kwargs.get(a.name)) for a in schema.arguments if a.kwarg_only]:
        if a.alias_info is not None and a.alias_info.is_write:
            increment_version(flat_tensors([v]))


def _check_aliasing(name, module, args, kwargs, result):
    """A functional custom op's outputs are new tensors: none is an input, a view of one, or another output."""
    outs = flat_tensors(result if isinstance(result, (tuple, list)) else [result])
    seen = {t.untyped_storage().data_ptr() for t in flat_tensors(args, kwargs) if t.device.type != "meta"}
    for t in outs:
        if t.device.type == "meta" or t.untyped_storage().nbytes() == 0:
            continue
        ptr = t.untyped_storage().data_ptr()
        if ptr in seen:
            raise RuntimeError(f"{name} (with implementation in {module}): The output of this custom operator (1) "
                               "must not also be an input to this custom operator and (2) may not alias any inputs "
                               "to this custom operator or other returns. The most common way to trigger this error "
                               "is if we have y = custom_op(x) and y and x are the same Tensor. Please instead return "
                               "a clone of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                               "custom operator to not return y.")
        seen.add(ptr)


# ---- custom_op ----

OPDEFS = weakref.WeakValueDictionary()  # "ns::name" -> its CustomOpDef
_OPDEF_TO_LIB = {}


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wraps a function into an operator "ns::name" (decorator or direct form); its schema comes from
    the function's annotations unless given."""
    def inner(fn):
        normalized = _normalize_tags(tags)
        schema_str = infer_schema(fn, mutates_args=mutates_args, tags=normalized) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn, normalized)
        if schema is not None:
            expected = {a.name for a in result._opoverload._schema.arguments
                        if a.alias_info is not None and a.alias_info.is_write}
            if expected != set(mutates_args):
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {expected}which is "
                                 "different from what was provided to us in `mutates_args`. Please make these "
                                 "consistent.")
        result.register_kernel(device_types)(fn)
        return result
    return inner if fn is None else inner(fn)


def _normalize_tags(tags):
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


class CustomOpDef:
    """What custom_op returns: the operator, callable, with methods that register more behaviour."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns = {}
        self._vmap_fn = None
        self._autocast_dtype = {}
        self._disabled_kernel = set()
        qualname = self._qualname
        if qualname in _OPDEF_TO_LIB:  # redefining an operator replaces it
            _OPDEF_TO_LIB.pop(qualname)._destroy()
        self._lib = _OPDEF_TO_LIB[qualname] = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema, tags=(Tag.pt2_compliant_tag, *(t for t in self._tags
                                                                        if t != Tag.pt2_compliant_tag)))
        self._opoverload = _ops.lookup_op(qualname)
        s = self._opoverload._schema
        self._is_inplace = Tag.inplace in self._tags
        self._is_out = _is_out(s) and Tag.out in self._tags
        self._out_kwarg_names = tuple(a.name for a in s.arguments if a.kwarg_only and a.alias_info is not None
                                      and a.alias_info.is_write)
        if any(a.kwarg_only and a.type.startswith("Tensor") for a in s.arguments) and not self._is_out:
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name + schema}")
        self._lib._register_fake(name, self._fake_impl)
        self._lib.impl(name, make_autograd_impl(self._opoverload, self), "Autograd", with_keyset=True)
        OPDEFS[qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _fake_impl(self, *args, **kwargs):
        if self._abstract_fn is None:
            s = self._opoverload._schema
            if s.is_mutable and not s.returns:
                return None  # a mutating op returning nothing needs no fake impl
            raise RuntimeError(f"There was no fake impl registered for {self}. This is necessary for "
                               "torch.compile/export/fx tracing to work. Please use "
                               f"`{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return self._abstract_fn(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """Registers fn as the implementation for device types (None: all of them)."""
        def inner(fn):
            dtypes = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for device_type in dtypes:
                if device_type not in self._backend_fns:
                    self._lib.impl(self._name, self._backend_impl(device_type),
                                   "CompositeExplicitAutograd" if device_type is None else
                                   _ops.dispatch_key_for_device(device_type))

                def wrapped(*args, _fn=fn, _dt=device_type, **kwargs):
                    return (self._init_fn if _dt in self._disabled_kernel else _fn)(*args, **kwargs)
                wrapped.fn = fn
                self._backend_fns[device_type] = wrapped
            return fn

        schema = self._opoverload._schema
        if device_types is not None and not any(a.type.startswith("Tensor") for a in schema.arguments):
            if not any(a.type.rstrip("?") == "Device" for a in schema.arguments):
                raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                                 "argument")
        return inner if fn is None else inner(fn)

    def _backend_impl(self, device_type):
        def backend_impl(*args, **kwargs):
            result = self._backend_fns[device_type](*args, **kwargs)
            module = inspect.getmodule(self._backend_fns[device_type].fn)
            schema = self._opoverload._schema
            if self._is_inplace:
                if result is not args[0]:
                    raise RuntimeError(f"{self._name} (with implementation in {module}): An operator tagged with "
                                       "torch.Tag.inplace must return its first argument.")
            elif self._is_out:
                names = self._out_kwarg_names
                ok = (result is kwargs[names[0]] if len(names) == 1 else
                      isinstance(result, tuple) and len(result) == len(names) and
                      all(r is kwargs[n] for r, n in zip(result, names)))
                if not ok:
                    raise RuntimeError(f"{self._name} (with implementation in {module}): An operator tagged with "
                                       "torch.Tag.out must return its mutable keyword-only arguments.")
            elif not schema._is_view_op():
                _check_aliasing(self._name, module, args, kwargs, result)
            _bump_versions(schema, args, kwargs)
            return result
        return backend_impl

    def set_kernel_enabled(self, device_type, enabled=True):
        """A context manager that disables (or re-enables) the kernel of a device type."""
        import contextlib

        @contextlib.contextmanager
        def ctx():
            was_disabled = device_type in self._disabled_kernel
            (self._disabled_kernel.discard if enabled else self._disabled_kernel.add)(device_type)
            try:
                yield
            finally:
                (self._disabled_kernel.add if was_disabled else self._disabled_kernel.discard)(device_type)
        return ctx()

    def register_fake(self, fn, /):
        """Registers the fake impl: what the operator returns for meta tensors."""
        if self._is_inplace or self._is_out:
            tag = "torch.Tag.inplace" if self._is_inplace else "torch.Tag.out"
            warnings.warn(f"The fake registration for {self} is unnecessary. Custom ops tagged with {tag} already get "
                          "an autogenerated fake kernel. The provided fake impl will be used instead.", stacklevel=2)
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Registers the backward formula: backward(ctx, *grads), setup_context(ctx, inputs, output)."""
        schema = self._opoverload._schema
        if _is_out(schema) and Tag.out in self._tags:
            raise RuntimeError(f"Cannot register autograd formula for operator tagged with torch.Tag.out: {self}. "
                               "Out variants do not support autograd.")
        if schema.is_mutable:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{schema}. Please create a functional operator and register an autograd formula for "
                               "that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_vmap(self, func=None):
        """Records the vmap rule (vmap runs the operator per sample here, with the same values)."""
        def register(func):
            self._vmap_fn = func
            return func
        return register if func is None else register(func)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("CustomOpDef.register_torch_dispatch is not implemented (mindtorch_v2 has no "
                                  "__torch_dispatch__)")

    def register_autocast(self, device_type, cast_inputs):
        raise NotImplementedError("CustomOpDef.register_autocast is not implemented")


# ---- the function forms ----

def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Registers func as op's implementation for device types (None: all)."""
    op = _resolve_op(op, "register_kernel")
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op, "CompositeExplicitAutograd" if device_types is None else device_types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Registers op's fake impl: its result for meta tensors (decorator form too)."""
    op = _resolve_op(op, "register_fake")
    if isinstance(op, CustomOpDef):
        return op.register_fake if func is None else op.register_fake(func)

    def register(func):
        namespace, name = parse_namespace(op)
        _library_for_registration(namespace, lib)._register_fake(name, func, allow_override=allow_override)
        return func
    return register if func is None else register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use that "
                  "instead; we will remove `torch.library.impl_abstract` in a future version of PyTorch.",
                  FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Registers op's backward formula (see CustomOpDef.register_autograd)."""
    op = _resolve_op(op, "register_autograd")
    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    overload = _ops.lookup_op(op)
    schema = overload._schema
    if _is_out(schema) and Tag.out in overload._entry.tags:
        raise RuntimeError(f"Cannot register autograd formula for operator tagged with torch.Tag.out: {overload}. "
                           "Out variants do not support autograd.")
    if schema.is_mutable:
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {overload} with schema "
                           f"{schema}. Please create a functional operator and register an autograd formula for that.")
    if any(a.kwarg_only and a.type.startswith("Tensor") for a in schema.arguments):
        raise NotImplementedError(f"register_autograd with kwarg-only Tensor args. In the original definition of the "
                                  f"op, please make your tensors not kwarg-only. Got: {schema}")
    namespace, opname = parse_namespace(op)
    kernel = make_autograd_impl(overload, _Info(backward, setup_context))
    _library_for_registration(namespace, lib).impl(opname, kernel, "Autograd", with_keyset=True)


def register_vmap(op, func=None, /, *, lib=None):
    """Records op's vmap rule (vmap runs the operator per sample here, with the same values)."""
    op = _resolve_op(op, "register_vmap")
    if isinstance(op, CustomOpDef):
        return op.register_vmap(func)
    _ops.lookup_op(op)  # PyTorch's error for an unknown operator
    return register_vmap_noop if func is None else func


def register_vmap_noop(func):
    return func


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError("torch.library.register_torch_dispatch is not implemented (mindtorch_v2 has no "
                              "__torch_dispatch__)")


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    raise NotImplementedError("torch.library.register_autocast is not implemented")


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    raise NotImplementedError("torch.library.triton_op is not implemented (no Triton)")


def wrap_triton(triton_kernel, /):
    raise NotImplementedError("torch.library.wrap_triton is not implemented (no Triton)")


def get_ctx():
    raise NotImplementedError("torch.library.get_ctx is not implemented (no FakeTensor tracing)")


def get_kernel(op, dispatch_key):
    raise NotImplementedError("torch.library.get_kernel is not implemented")


# ---- opcheck ----

_OPCHECK_DEFAULT_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


def _clone(v):
    if isinstance(v, Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    return v


def _to_meta(v):
    if isinstance(v, Tensor):
        return v.detach().to("meta")
    if isinstance(v, (list, tuple)):
        return type(v)(_to_meta(x) for x in v)
    return v


def _test_schema(op, args, kwargs):
    """Only the arguments the schema marks mutable change; outputs are new tensors."""
    schema = op._schema
    args, kwargs = _clone(args), _clone(kwargs)
    before = [(t, t.detach().clone()) for t in flat_tensors(args, kwargs)]
    op(*args, **kwargs)
    mutable = {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    bound = dict(zip((a.name for a in schema.arguments if not a.kwarg_only), args), **kwargs)
    allowed = {id(t) for n in mutable for t in flat_tensors([bound.get(n)])}
    for t, old in before:
        if id(t) not in allowed and not _same_values(t, old):
            raise OpCheckError(f"{op}: argument was mutated but the schema does not say so: {schema}")


def _same_values(a, b):
    if a.shape != b.shape:
        return False
    same = a == b
    if a.dtype.is_floating_point or a.dtype.is_complex:
        same = same | (a.isnan() & b.isnan())
    return bool(same.all())


def _test_autograd_registration(op, args, kwargs):
    """An operator given grad-requiring inputs needs an Autograd (or CompositeImplicitAutograd) kernel."""
    if not any(t.requires_grad for t in flat_tensors(args, kwargs)):
        return
    kernels = _ops._KERNELS.get(op._qualname, {})
    if "Autograd" not in kernels and "CompositeImplicitAutograd" not in kernels:
        raise OpCheckError(f"{op._name}: at least one input tensor requires grad but the operator has no autograd "
                           "registration; please use torch.library.register_autograd to register one")


def _test_faketensor(op, args, kwargs):
    """The fake impl's results on meta tensors have the real results' shapes and dtypes."""
    real = op(*_clone(args), **_clone(kwargs))
    fake = op(*_to_meta(args), **_to_meta(kwargs))
    r, f = flat_tensors([real]), flat_tensors([fake])
    if len(r) != len(f) or any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(r, f)):
        raise OpCheckError(f"{op}: the fake impl's outputs do not match the real ones (shapes "
                           f"{[tuple(t.shape) for t in r]} vs {[tuple(t.shape) for t in f]})")


_OPCHECK_TESTS = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd_registration,
                  "test_faketensor": _test_faketensor}


def opcheck(op, args, kwargs=None, *, test_utils=_OPCHECK_DEFAULT_UTILS, raise_exception=True, atol=None,
            rtol=None):
    """Checks an operator's registrations on sample inputs: test_schema, test_autograd_registration and
    test_faketensor run eagerly; test_aot_dispatch_dynamic needs AOTAutograd and is not implemented."""
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    if isinstance(op, _ops.OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. torch.ops.aten.sin."
                         f"default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = _OPCHECK_DEFAULT_UTILS
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    kwargs = kwargs or {}
    results = {}
    for name in test_utils:
        if name not in _OPCHECK_DEFAULT_UTILS:
            raise ValueError(f"test_utils={test_utils} contains an unknown test {name}; expected a subset of "
                             f"{_OPCHECK_DEFAULT_UTILS}")
        if name not in _OPCHECK_TESTS:
            raise NotImplementedError(f"torch.library.opcheck: {name} is not implemented (no AOTAutograd); pass "
                                      f"test_utils={tuple(t for t in _OPCHECK_DEFAULT_UTILS if t in _OPCHECK_TESTS)}")
        try:
            _OPCHECK_TESTS[name](op, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
    return results
