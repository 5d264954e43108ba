"""torch._ops / torch.ops: the operator registry for operators defined from Python (torch.library).

mindtorch_v2's built-in ops are plain functions over the C core; PyTorch's own operators (aten, prims, ...)
are served from a schema table (_op_schemas.json, run by _aten.py). The registry holds the operators
torch.library defines: a parsed schema per overload and its kernels by dispatch key. A
call parses the arguments against the schema (PyTorch's errors), then dispatches as PyTorch's
dispatcher does for eager CPU use:
  Autograd kernel, when grad mode is on and a tensor argument requires grad;
  the backend kernel for the tensors' device type ("CPU", "Meta", ...), the fake impl on meta tensors,
  then CompositeExplicitAutograd, then CompositeImplicitAutograd.
An operator without an Autograd kernel runs its backend kernel with grad mode as it is, so the ops
inside record (PyTorch's default autograd fallback does the same, and warns on backward).
"""
import ast
import numbers
import enum
import re
import threading
import types

from ._tensor import Tensor

__all__ = ["OpOverload", "OpOverloadPacket", "ops"]


class Tag(enum.Enum):
    """torch.Tag: operator tags (the names PyTorch 2.13 defines)."""
    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19

    def __repr__(self):
        return f"<Tag.{self.name}: {self.value}>"

    def __str__(self):
        return f"Tag.{self.name}"


# ---- schemas ----

_BASE_TYPES = {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Layout",
               "MemoryFormat", "Generator", "Dimname", "Storage", "Stream", "complex", "Any", "SymBool",
               "SymFloat", "QScheme", "t", "GraphModule"}
_TYPE = re.compile(r"(\w+)(\((\w+)(!?)\))?((?:\[\d*\]|\?)*)")


class AliasInfo:
    def __init__(self, name, is_write):
        self.before_set = {name}
        self.after_set = {name}
        self.is_write = is_write


class Argument:
    """One argument or return of a FunctionSchema (`type` is its schema text without the alias)."""

    def __init__(self, name, type, default=None, has_default=False, kwarg_only=False, alias_info=None):
        self.name, self.type, self.default_value = name, type, default
        self.has_default_value = lambda: has_default
        self.kwarg_only, self.alias_info = kwarg_only, alias_info
        m = re.search(r"\[(\d+)\]", type)
        self.N = int(m.group(1)) if m else None

    def __str__(self):
        t = self.type
        if self.alias_info is not None:  # the annotation goes right after the base type
            base = re.match(r"\w+", t).group(0)
            alias = next(iter(self.alias_info.before_set)) + ("!" if self.alias_info.is_write else "")
            t = f"{base}({alias}){t[len(base):]}"
        s = f"{t} {self.name}" if self.name else t
        if self.has_default_value():
            s += "=" + _default_text(self.default_value)
        return s


def _default_text(v):
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_default_text(x) for x in v) + "]"
    if isinstance(v, float):  # c10's printing of a double: 17 significant digits, "2." for a whole number
        text = "%.17g" % v
        return text + "." if text.lstrip("-").isdigit() else text
    return str(v)


def _schema_error(what, text, at, width=3):
    return RuntimeError(f"{what}\n{text}\n{' ' * at}{'~' * width} <--- HERE\n")


def _split_top(s):
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in s:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _parse_default(text):
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # an enum name such as contiguous_format or Mean


def _parse_type(text, full, where, lenient=False):
    m = _TYPE.fullmatch(text)
    if lenient and (m is None or m.group(1) not in _BASE_TYPES):
        return text, None  # a TorchScript type (Dict(str, t), Future(t), "a -> *" aliases): kept as text
    if m is None or m.group(1) not in _BASE_TYPES:
        at = full.find(text, where)
        raise _schema_error("\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, "
                            "float, bool, Scalar; for a full list, please see https://github.com/pytorch/pytorch/"
                            "blob/main/aten/src/ATen/native/README.md#func :", full, max(at, 0))
    alias = AliasInfo(m.group(3), bool(m.group(4))) if m.group(2) else None
    return m.group(1) + m.group(5), alias


def _parse_arg(text, full, kwarg_only, ret=False, lenient=False):
    at = full.find(text)
    type_text, rest = _split_type(text) if lenient else text.partition(" ")[::2]
    type_, alias = _parse_type(type_text, full, at, lenient)
    name, has_default, default = rest.strip(), False, None
    if "=" in name:
        name, _, d = name.partition("=")
        name, has_default, default = name.strip(), True, _parse_default(d.strip())
    if not name and not ret and not lenient:
        raise _schema_error("expected ident but found ')' here:", full, at + len(text))
    return Argument(name, type_, default, has_default, kwarg_only, alias)


def _split_type(text):
    """(type, rest) of an argument whose type may hold spaces inside brackets: "Dict(str, t) d"."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == " " and depth == 0:
            return text[:i], text[i + 1:]
    return text, ""


class FunctionSchema:
    """A parsed operator schema "ns::name.overload(args) -> returns". lenient: a schema of PyTorch's
    operator table, whose TorchScript-only types are kept as text; it prints as PyTorch printed it."""

    def __init__(self, text, lenient=False):
        m = re.fullmatch(r"\s*([\w:]*)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.*?)\s*", text, re.S)
        if m is None:
            at = len(re.match(r"[\w:.]*", text).group(0))
            word = text[at:].split()[0] if text[at:].split() else "eof"
            raise _schema_error("expected eof but found 'ident' here:" if word[0].isalpha() else
                                f"expected '(' but found '{word[0]}' here:", text,
                                at + len(text[at:]) - len(text[at:].lstrip()), len(word) if word[0].isalpha() else 1)
        self.name, self.overload_name = m.group(1), m.group(2) or ""
        self.arguments, kwarg_only = [], False
        for part in _split_top(m.group(3)):
            if part == "*":
                kwarg_only = True
                continue
            self.arguments.append(_parse_arg(part, text, kwarg_only, lenient=lenient))
        rets = m.group(4)
        if rets.startswith("(") and rets.endswith(")"):
            self.returns = [_parse_arg(p, text, False, True, lenient) for p in _split_top(rets[1:-1])]
        else:
            self.returns = [_parse_arg(rets, text, False, True, lenient)]
        self._text = text if lenient else None

    @property
    def is_mutable(self):
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def _is_view_op(self):
        return any(a.alias_info is not None and not a.alias_info.is_write for a in self.arguments)

    def __str__(self):
        if self._text is not None:
            return self._text
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = [str(r) for r in self.returns]
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        return f"{name}({', '.join(args)}) -> {ret}"

    __repr__ = __str__


# ---- argument checking ----

def _py_type_name(v):
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _matches(type_, v):
    """Whether a Python value can be passed as a schema type (PyTorch's argument parser, eagerly)."""
    from ._dtype import dtype as _dtype
    from ._device import device as _device
    if type_.endswith("?"):
        return v is None or _matches(type_[:-1], v)
    m = re.fullmatch(r"(.*)\[(\d*)\]", type_)
    if m:
        if m.group(2) and m.group(1) in ("int", "SymInt", "float", "bool") and _matches(m.group(1), v):
            return True  # int[2] takes one int
        return isinstance(v, (list, tuple)) and all(_matches(m.group(1), x) for x in v)
    if type_ == "Tensor":
        return isinstance(v, Tensor)
    if type_ in ("int", "SymInt"):
        return isinstance(v, int) and not isinstance(v, bool) or _int_tensor(v)
    if type_ in ("float", "SymFloat"):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if type_ in ("bool", "SymBool"):
        return isinstance(v, bool)
    if type_ == "str":
        return isinstance(v, str)
    if type_ == "Scalar":
        return isinstance(v, numbers.Number) or isinstance(v, Tensor) and v.dim() == 0
    if type_ == "complex":
        return isinstance(v, (int, float, complex))
    if type_ == "ScalarType":
        return isinstance(v, _dtype) or isinstance(v, int) and not isinstance(v, bool)
    if type_ == "Device":
        return isinstance(v, (_device, str, int))
    return True


def _type_text(type_):
    """A schema type as PyTorch's argument errors name it: int[1]? -> Optional[List[int]]."""
    if type_.endswith("?"):
        return f"Optional[{_type_text(type_[:-1])}]"
    m = re.fullmatch(r"(.*)\[\d*\]", type_)
    if m:
        return f"List[{_type_text(m.group(1))}]"
    return {"Scalar": "number", "SymInt": "int", "SymFloat": "float", "SymBool": "bool"}.get(type_, type_)


def _int_tensor(v):
    return isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point and not v.dtype.is_complex


def _same_default(v, d):
    if isinstance(v, Tensor) or isinstance(d, Tensor):
        return v is d
    return v is d or (type(v) is type(d) and v == d)


def _bind_values(schema, args, kwargs, builtin=False):
    """{argument name: value} of the arguments given, checked against the schema with PyTorch's errors
    (in schema order, as PyTorch checks them). builtin: an operator of PyTorch's table, which takes a
    Python number for a Tensor (a wrapped scalar) and words a doubled argument as the JIT does."""
    name, decl = f"{schema.name}()", f"Declaration: {schema}"
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        if len(positional) < len(schema.arguments) and len(args) <= len(schema.arguments):
            raise RuntimeError(f"{name} takes {len(positional)} positional argument(s) but {len(args)} "
                               f"was/were given.  {decl}")
        raise RuntimeError(f"{name} expected at most {len(schema.arguments)} argument(s) but received {len(args)} "
                           f"argument(s). {decl}")
    values = dict(zip((a.name for a in positional), args))
    for k, v in kwargs.items():
        if k in values:
            raise RuntimeError(f"Argument '{k}' specified both as positional and keyword argument. Schema: {schema}"
                               if builtin else f"{name} got multiple values for argument '{k}'. {decl}")
        values[k] = v
    for i, a in enumerate(schema.arguments):
        if a.name not in values:
            if not a.has_default_value():
                raise RuntimeError(f"{name} is missing value for argument '{a.name}'. {decl}")
            continue
        v = values[a.name]
        if builtin and a.type.rstrip("?") == "Tensor" and isinstance(v, numbers.Number):
            continue
        if not _matches(a.type, v):
            shown = repr(v) if isinstance(v, str) else v
            if a.type.startswith("Tensor"):
                detail = f"Unable to cast {v} to Tensor"
            elif a.type.rstrip("?") == "Scalar":
                detail = f"Cannot cast {v} to number"
            else:
                detail = ("Unable to cast Python instance of type " f"{type(v)} to C++ type '?' (#define "
                          "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")
            raise RuntimeError(f"{name} Expected a value of type '{_type_text(a.type)}' for argument '{a.name}' but "
                               f"instead found type '{_py_type_name(v)}'.\nPosition: {i}\nValue: {shown}\n{decl}\n"
                               f"Cast error details: {detail}")
    known = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in known:
            raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{schema.name}'. Schema: {schema}")
    return values


def _given(schema, args, kwargs):
    """(argument, value) pairs of a call, by position and by name."""
    by_name = {a.name: a for a in schema.arguments}
    return [(a, v) for a, v in zip([a for a in schema.arguments if not a.kwarg_only], args)] + \
        [(by_name[k], v) for k, v in kwargs.items() if k in by_name]


def _bind(schema, args, kwargs):
    """(positional args, keyword-only kwargs) as the dispatcher hands them to a Python kernel: checked
    against the schema, keyword arguments moved to their positions, and arguments equal to their
    default dropped from the end (PyTorch's dispatcher strips them)."""
    values = _bind_values(schema, args, kwargs)
    positional = [a for a in schema.arguments if not a.kwarg_only]
    pos = [values.get(a.name, a.default_value) for a in positional]
    while pos and positional[len(pos) - 1].has_default_value() and _same_default(pos[-1], positional[len(pos) - 1]
                                                                                  .default_value):
        pos.pop()
    kw = {a.name: values[a.name] for a in schema.arguments if a.kwarg_only and a.name in values
          and not (a.has_default_value() and _same_default(values[a.name], a.default_value))}
    return tuple(pos), kw


def fill_defaults(schema, args, kwargs):
    """args/kwargs with every omitted argument at its default (torch._library.utils.fill_defaults)."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    args = tuple(args) + tuple(a.default_value for a in positional[len(args):])
    kwargs = dict(kwargs)
    for a in schema.arguments:
        if a.kwarg_only and a.name not in kwargs and a.has_default_value():
            kwargs[a.name] = a.default_value
    return args, kwargs


def flat_tensors(args, kwargs=None):
    """The tensors among the arguments, inside lists and tuples too."""
    out = []
    for v in list(args) + list((kwargs or {}).values()):
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(x for x in v if isinstance(x, Tensor))
    return out


# ---- the registry ----

def dispatch_key_for_device(device_type):
    """torch._C._dispatch_key_for_device"""
    special = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "mps": "MPS", "xpu": "XPU", "hpu": "HPU",
               "xla": "XLA", "mtia": "MTIA", "lazy": "Lazy", "ipu": "IPU", "privateuseone": "PrivateUse1"}
    return special.get(device_type, device_type[:1].upper() + device_type[1:])


class _Entry:
    """One operator overload: its schema, tags and kernels."""

    def __init__(self, schema, tags, where):
        self.schema, self.tags, self.where = schema, tuple(tags), where
        self.builtin = None  # for an operator of PyTorch's table: (its row, the op's table entry)
        self.kernels = {}   # dispatch key -> (fn, with_keyset)
        self.fake = None    # the fake impl (register_fake), used for meta tensors without a Meta kernel


_DEFS = {}      # "ns::name" or "ns::name.overload" -> _Entry
_KERNELS = {}   # the same keys -> {dispatch key: (fn, with_keyset)}; kernels may come before the definition
_FAKES = {}     # the same keys -> fake impl


def _key(ns, name):
    name = name.split("::")[-1]
    return f"{ns}::{name[:-len('.default')] if name.endswith('.default') else name}"


def _below_autograd(entry, qualname, args, kwargs):
    """The backend kernel for the arguments' device type (see the module docstring)."""
    kernels, tensors = _KERNELS.get(qualname, {}), flat_tensors(args, kwargs)
    if tensors:
        device_type = tensors[0].device.type
        if any(t.device.type == "meta" for t in tensors):
            device_type = "meta"
    else:
        from ._device import device as _device
        devs = [v for a, v in zip(entry.schema.arguments, args) if a.type.rstrip("?") == "Device" and v is not None]
        device_type = _device(devs[0]).type if devs else "cpu"
    key = dispatch_key_for_device(device_type)
    if key in kernels:
        return _call(kernels[key], key, args, kwargs)
    if device_type == "meta" and qualname in _FAKES:
        return _FAKES[qualname](*args, **kwargs)
    for k in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        if k in kernels:
            return _call(kernels[k], k, args, kwargs)
    name = qualname + ("" if "." in qualname.split("::")[1] else "")
    if device_type == "meta":
        raise NotImplementedError(f"{name}: attempted to run this operator with Meta tensors, but there was no fake "
                                  "impl or Meta kernel registered. You may have run into this message while using "
                                  "an operator with PT2 compilation APIs (torch.compile/torch.export); in order to "
                                  "use this operator with those APIs you'll need to add a fake impl. Please see the "
                                  "following for next steps:  https://pytorch.org/tutorials/advanced/"
                                  "custom_ops_landing_page.html")
    raise NotImplementedError(f"Could not run '{name}' with arguments from the '{key}' backend. This could be because "
                              "the operator doesn't exist for this backend, or was omitted during the selective/"
                              "custom build process (if using custom build). If you are a Facebook employee using "
                              "PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible resolutions. "
                              f"'{name}' is only available for these backends: [{', '.join(sorted(kernels))}].")


DispatchKey = enum.Enum("DispatchKey", [
    "Undefined", "CPU", "CUDA", "XPU", "MPS", "Meta", "PrivateUse1", "BackendSelect", "Python", "Functionalize",
    "ADInplaceOrView", "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradXPU", "AutogradMPS", "AutogradMeta",
    "AutocastCPU", "AutocastCUDA", "AutocastXPU", "AutocastMPS", "Autograd", "CompositeImplicitAutograd",
    "CompositeExplicitAutograd", "FuncTorchBatched", "PythonDispatcher"], start=0)
DispatchKey.__module__ = "torch._C"


class DispatchKeySet:
    """torch._C.DispatchKeySet: a set of dispatch keys; a with_keyset kernel receives the keys still to run."""

    def __init__(self, keys=()):
        if isinstance(keys, DispatchKey):
            keys = (keys,)
        elif isinstance(keys, bool):  # below_autograd, for a with_keyset kernel
            keys = (DispatchKey.CPU,) if keys else (DispatchKey.Autograd, DispatchKey.CPU)
        self._keys = frozenset(keys)

    @property
    def below_autograd(self):
        return DispatchKey.Autograd not in self._keys

    def has(self, key):
        return key in self._keys

    def __or__(self, other):
        return DispatchKeySet(self._keys | other._keys)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and other._keys == self._keys

    def __hash__(self):
        return hash(self._keys)

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in sorted(self._keys, key=lambda k: k.value))})"


_excluded = threading.local()


class _ExcludeDispatchKeyGuard:
    """torch._C._ExcludeDispatchKeyGuard: skip these keys in this thread while the guard lives."""

    def __init__(self, keyset):
        self._keys = keyset._keys

    def __enter__(self):
        self._prev = getattr(_excluded, "keys", frozenset())
        _excluded.keys = self._prev | self._keys
        return self

    def __exit__(self, *exc):
        _excluded.keys = self._prev


def _call(kernel, key, args, kwargs):
    fn, with_keyset = kernel
    if with_keyset:
        return fn(DispatchKeySet(key != "Autograd"), *args, **kwargs)
    return fn(*args, **kwargs)


def dispatch(qualname, args, kwargs):
    """Run operator `qualname` on already bound arguments."""
    from . import _autocast
    from .autograd.grad_mode import is_grad_enabled
    kernels = _KERNELS.get(qualname, {})
    # AutocastCPU comes before Autograd in PyTorch's key order; its kernel casts and redispatches
    # (under an _ExcludeDispatchKeyGuard, as torchvision's do)
    if ("AutocastCPU" in kernels and _autocast.cpu_enabled()
            and DispatchKey.AutocastCPU not in getattr(_excluded, "keys", ())):
        return _call(kernels["AutocastCPU"], "AutocastCPU", args, kwargs)
    if "Autograd" in kernels and is_grad_enabled() and any(t.requires_grad for t in flat_tensors(args, kwargs)):
        return _call(kernels["Autograd"], "Autograd", args, kwargs)
    return _below_autograd(_DEFS[qualname], qualname, args, kwargs)


def redispatch_below_autograd(qualname, args, kwargs):
    """The op as the dispatcher runs it after the Autograd key (torch._C._AutoDispatchBelowAutograd)."""
    from .autograd.grad_mode import no_grad
    with no_grad():
        return _below_autograd(_DEFS[qualname], qualname, args, kwargs)


# ---- torch.ops ----

class OpOverload:
    """torch.ops.<ns>.<op>.<overload>: one schema; calling it dispatches."""

    def __init__(self, packet, overload_name, entry):
        self._overloadpacket, self._overloadname, self._entry = packet, overload_name, entry
        self._schema = entry.schema
        self._namespace, self._opname = packet._ns, packet._op
        self._name = f"{self._namespace}::{self._opname}"
        self._qualname = self._name + ("" if overload_name == "default" else f".{overload_name}")
        self.__name__ = f"{self._opname}.{overload_name}"
        self.__qualname__ = self._name
        self.__module__ = f"torch.ops.{self._namespace}"
        self._tags = list(entry.tags)

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def namespace(self):
        return self._namespace

    @property
    def tags(self):
        return self._tags

    def name(self):
        return self._qualname

    def _bind(self, args, kwargs, strict=False):
        if self._entry.builtin is not None:
            if strict and any(isinstance(v, numbers.Number) for a, v in _given(self._schema, args, kwargs)
                              if a.type.rstrip("?") == "Tensor"):
                raise RuntimeError(f"{self._schema.name}() takes no number for a Tensor when overloads are matched")
            return _bind_values(self._schema, args, kwargs, builtin=True)
        return _bind(self._schema, args, kwargs)

    def _run(self, bound):
        if self._entry.builtin is not None:
            from ._aten import run_builtin
            return run_builtin(self, bound)
        return dispatch(self._qualname, *bound)

    def __call__(self, *args, **kwargs):
        return self._run(self._bind(args, kwargs))

    def redispatch(self, keyset, *args, **kwargs):
        if self._entry.builtin is not None:  # our built-in ops record autograd themselves
            from .autograd.grad_mode import no_grad
            with no_grad():
                return self(*args, **kwargs)
        return redispatch_below_autograd(self._qualname, *_bind(self._schema, args, kwargs))

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self):
        return hash(self._qualname)

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._qualname == self._qualname and other._entry is self._entry


class OpOverloadPacket:
    """torch.ops.<ns>.<op>: its overloads by name ("default" for the unnamed one)."""

    def __init__(self, ns, op):
        self._ns, self._op = ns, op
        self._qualified_op_name = f"{ns}::{op}"
        self.__name__ = op
        self._overload_cache = {}

    @property
    def op(self):
        return self.default

    def overloads(self):
        return [o or "default" for o in _overload_names(self._ns, self._op)]

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        entry = _DEFS.get(self._qualified_op_name + ("" if key == "default" else f".{key}"))
        if entry is None:
            entry = _builtin_entry(self._ns, self._op, key)
        if entry is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
        cached = self._overload_cache.get(key)
        if cached is None or cached._entry is not entry:
            cached = self._overload_cache[key] = OpOverload(self, key, entry)
        return cached

    def __call__(self, *args, **kwargs):
        names = _overload_names(self._ns, self._op)
        errors = []
        for o in names:  # the first overload whose schema accepts the arguments
            ov = getattr(self, o or "default")
            try:
                bound = ov._bind(args, kwargs, strict=True)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            return ov._run(bound)
        if len(errors) == 1:
            raise RuntimeError(errors[0])
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "\n\n".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._op}')>"

    def __str__(self):
        return f"{self._ns}.{self._op}"


def _overload_names(ns, op):
    """Overload names of ns::op, "" for the default one: PyTorch's table's in its order, then torch.library's."""
    prefix = f"{ns}::{op}"
    row = _table().get(ns, {}).get(op)
    names = [] if row is None else ["" if o[0] == "default" else o[0] for o in row["overloads"]]
    return names + [k[len(prefix) + 1:] for k in _DEFS if k == prefix or k.startswith(prefix + ".")]


# ---- PyTorch's operators (aten, prim, prims, ...): schemas from _op_schemas.json ----

_TABLE = None
_BUILTINS = {}  # "ns::op.overload" -> _Entry, made on first access


def _table():
    """{namespace: {op: {"overloads": [[overload, schema after the name, tags?]], "jit_only": [...],
    "python": [public names]}}}, written from live PyTorch by tools/gen_op_schemas.py."""
    global _TABLE
    if _TABLE is None:
        import json
        import os
        with open(os.path.join(os.path.dirname(__file__), "_op_schemas.json")) as f:
            _TABLE = json.load(f)["namespaces"]
    return _TABLE


def _builtin_entry(ns, op, overload):
    key = f"{ns}::{op}.{overload}"
    entry = _BUILTINS.get(key)
    if entry is None:
        row = _table().get(ns, {}).get(op)
        found = [o for o in (row or {"overloads": ()})["overloads"] if o[0] == overload]
        if not found:
            return None
        text = f"{ns}::{op}" + ("" if overload == "default" else f".{overload}") + found[0][1]
        entry = _BUILTINS[key] = _Entry(FunctionSchema(text, lenient=True),
                                        [Tag[t] for t in (found[0][2] if len(found[0]) > 2 else ())], "")
        entry.builtin = (found[0], row)
    return entry


class _OpNamespace(types.ModuleType):
    """torch.ops.<ns>: its operators as OpOverloadPackets."""

    def __init__(self, ns):
        super().__init__(f"torch.ops.{ns}")
        self.name = ns
        self.__file__ = "torch.ops"

    def __getattr__(self, op):
        if op.startswith("__") and op not in _table().get(self.name, {}):  # aten::__and__ is an operator
            raise AttributeError(op)
        if not _overload_names(self.name, op):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")
        packet = OpOverloadPacket(self.name, op)
        if op != "name":  # prim::name: .name stays the namespace's name, as in PyTorch
            setattr(self, op, packet)
        return packet


# Compiled extensions of PyTorch libraries whose operators mindtorch_v2 provides itself: loading one
# (the way the library loads its extension) runs our registration module instead of the file, as
# loading the file registers its TORCH_LIBRARY operators in PyTorch. Keyed by (package, file stem).
NATIVE_EXTENSIONS = {("torchvision", "_C"): "mindtorch_v2._vision_ops"}


def _links_libtorch(path):
    """Whether an ELF shared object names PyTorch's C++ libraries among its DT_NEEDED entries."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[:4] == b"\x7fELF" and any(n in data for n in (b"libtorch_cpu.so", b"libtorch.so", b"libc10.so"))


class _Ops(types.ModuleType):
    """torch.ops: a namespace per library namespace, created on first access."""
    __file__ = "_ops.py"

    def __init__(self):
        super().__init__("torch.ops")
        self.loaded_libraries = set()

    def load_library(self, path):
        """torch.ops.load_library: load a shared library of operators. A PyTorch C++ extension links
        libtorch, which mindtorch_v2 is not: it loads only where NATIVE_EXTENSIONS has our own
        registration for it, and otherwise raises OSError (what PyTorch raises for a library that
        cannot load, so callers such as torchvision fall back)."""
        import ctypes
        import importlib
        import os
        path = os.path.realpath(os.fspath(path))
        stem = os.path.basename(path).split(".")[0]
        native = NATIVE_EXTENSIONS.get((os.path.basename(os.path.dirname(path)), stem))
        if native is not None:
            importlib.import_module(native)
        elif _links_libtorch(path):
            raise OSError(f"Could not load this library: {path}: it is a PyTorch C++ extension linked against "
                          "libtorch, which mindtorch_v2 cannot load; its operators need an implementation "
                          "registered with torch.library")
        else:
            try:
                ctypes.CDLL(path)
            except OSError as e:
                raise OSError(f"Could not load this library: {path}") from e
        self.loaded_libraries.add(path)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_table()) | {"higher_order"})

    def __getattr__(self, ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        if ns == "higher_order":
            from ._aten import HigherOrderNamespace
            space = HigherOrderNamespace()
            setattr(self, ns, space)
            return space
        space = _OpNamespace(ns)
        setattr(self, ns, space)
        return space


ops = _Ops()


def lookup_op(qualname):
    """torch._library.utils.lookup_op: the OpOverload of "ns::name[.overload]"."""
    ns, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(ops, ns), name), overload or "default")


def define(ns, schema, tags, where):
    s = FunctionSchema(schema)
    qualname = _key(ns, s.name + (f".{s.overload_name}" if s.overload_name else ""))
    s.name = qualname.split(".")[0]
    if qualname in _DEFS:
        raise RuntimeError(f"Tried to register an operator ({s}) with the same name and overload name multiple "
                           "times. Each overload's schema should only be registered with a single call to def(). "
                           f"Duplicate registration: registered at {where}. Original registration: registered at "
                           f"{_DEFS[qualname].where}")
    _DEFS[qualname] = _Entry(s, tags, where)
    space = ops.__dict__.get(ns)
    if space is not None:  # a packet cached before this overload existed lists it now
        space.__dict__.pop(s.name.split("::")[1], None)
    return qualname


def undefine(qualname):
    _DEFS.pop(qualname, None)
    ns, name = qualname.split("::")
    space = ops.__dict__.get(ns)
    if space is not None:
        space.__dict__.pop(name.split(".")[0], None)
