"""The restricted unpickler behind load(weights_only=True) (PyTorch's torch._weights_only_unpickler).

It interprets pickle opcodes itself: a GLOBAL resolves only through an allowlist of names
(tensor rebuild functions, storages, dtypes, containers, primitives, plus user-added safe
globals), REDUCE/NEWOBJ/BUILD only act on allowlisted callables and types, and nothing is
imported by name. Anything else raises pickle.UnpicklingError with PyTorch's texts, before
any code runs. Malformed streams raise UnpicklingError too (never IndexError/KeyError).
"""
import _compat_pickle
import warnings
from _codecs import encode
from collections import Counter, OrderedDict
from pickle import UnpicklingError, decode_long
from struct import unpack
from sys import maxsize

# Modules never allowed, even if the user allowlists something from them.
_blocklisted_modules = ["sys", "os", "posix", "nt"]

_marked_safe_globals_set = set()


def _add_safe_globals(safe_globals):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set.union(set(safe_globals))


def _get_safe_globals():
    return list(_marked_safe_globals_set)


def _clear_safe_globals():
    global _marked_safe_globals_set
    _marked_safe_globals_set = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set - set(globals_to_remove)


class _safe_globals:
    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _names_of(f):
    """The checkpoint names a global may appear under (mindtorch_v2 objects also under torch.*)."""
    module, name = f.__module__, f.__qualname__
    names = [f"{module}.{name}"]
    if module == "mindtorch_v2" or module.startswith("mindtorch_v2."):
        names.append(f"torch{module[len('mindtorch_v2'):]}.{name}")
    return names


def _get_user_allowed_globals():
    rc = {}
    for f in _marked_safe_globals_set:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            for name in _names_of(f):
                rc[name] = f
    return rc


_allowed = None


def _get_allowed_globals():
    global _allowed
    if _allowed is None:
        import mindtorch_v2 as mt
        from . import _dtype, _utils, serialization, storage
        rc = {
            "collections.OrderedDict": OrderedDict,
            "collections.Counter": Counter,
            "torch.serialization._get_layout": serialization._get_layout,
            "torch.Size": mt.Size,
            "torch.Tensor": mt.Tensor,
            "torch.device": mt.device,
            "_codecs.encode": encode,
            "builtins.bytearray": bytearray,
            "builtins.set": set,
            "builtins.complex": complex,
            "torch.storage.TypedStorage": storage.TypedStorage,
            "torch.storage.UntypedStorage": storage.UntypedStorage,
            "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
        }
        Parameter = _utils._parameter_class()
        if Parameter is not None:
            rc["torch.nn.parameter.Parameter"] = Parameter
        for dt in _dtype.BY_ID:
            rc[str(dt)] = dt
        for name in storage.LEGACY_CLASSES:
            rc[f"torch.{name}"] = serialization.StorageType(name)
        for f in _utils.REBUILD_FUNCTIONS:
            rc[f"torch._utils.{f.__name__}"] = f
        _allowed = rc
    return _allowed


def _read_global_instruction(readline):
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    return _fix_name(module, name)


def _fix_name(module, name):
    """Python 2 names (protocol 2 writes __builtin__.set) mapped as pickle's fix_imports does."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return module, name


def _resolve_global(module, name):
    full_path = f"{module}.{name}"
    if module in _blocklisted_modules:
        raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
    allowed = _get_allowed_globals()
    if full_path in allowed:
        return allowed[full_path]
    user = _get_user_allowed_globals()
    if full_path in user:
        return user[full_path]
    if full_path in ("torch.nested._internal.nested_tensor.NestedTensor",
                     "torch.nested._internal.nested_tensor._rebuild_njt", "torch._dynamo.decorators._DimRange"):
        raise UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported to load nested jagged tensors "
                              "(NJTs)")
    if full_path.startswith("torch.distributed."):
        raise UnpicklingError("``torch.distributed.tensor`` must be imported to load DTensors")
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    raise UnpicklingError(f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
                          f"`torch.serialization.add_safe_globals([{full_path}])` or the "
                          f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
                          "global if you trust this class/function.")


def _allowed_values():
    return list(_get_allowed_globals().values()) + list(_get_user_allowed_globals().values())


def _is_allowed(obj):
    return any(obj is v for v in _allowed_values())


_SIMPLE_OPS = {  # opcode -> bytes of argument, for get_globals_in_pkl
    b"\x81": 0, b"R": 0, b"b": 0, b"a": 0, b"e": 0, b"s": 0, b"u": 0, b"(": 0, b"t": 0, b"\x85": 0,
    b"\x86": 0, b"\x87": 0, b"N": 0, b"\x89": 0, b"\x88": 0, b")": 0, b"]": 0, b"}": 0, b"\x8f": 0,
    b"Q": 0, b"J": 4, b"K": 1, b"M": 2, b"G": 8, b"h": 1, b"j": 4, b"q": 1, b"r": 4, b"\x94": 0,
}


def get_globals_in_pkl(file):
    """Every GLOBAL named in a pickle stream, read statically (nothing is executed)."""
    found = set()
    read, readline = file.read, file.readline
    while True:
        key = read(1)
        if not key:
            raise EOFError
        if key == b"c":
            module, name = _read_global_instruction(readline)
            found.add(f"{module}.{name}")
        elif key in _SIMPLE_OPS:
            if _SIMPLE_OPS[key]:
                read(_SIMPLE_OPS[key])
        elif key == b"X":
            read(unpack("<I", read(4))[0])
        elif key in (b"U", b"\x8a", b"\x8c", b"C"):
            read(read(1)[0])
        elif key == b"\x95":
            read(8)
        elif key == b"\x80":
            read(1)
        elif key == b".":
            return found
        else:
            raise UnpicklingError(f"Unsupported operand {key[0]}")


class Unpickler:
    def __init__(self, file, *, encoding="bytes"):
        self.encoding = encoding
        self.readline = file.readline
        self.read = file.read
        self.memo = {}
        self.proto = -1

    def _read(self, n):
        data = self.read(n)
        if len(data) != n:
            raise UnpicklingError("pickle data was truncated")
        return data

    def pop(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack[-1]

    def pop_mark(self):
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        self.append = self.stack.append
        return items

    def _check_set_item_target(self, opcode):
        if type(self.top()) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got "
                                  f"{type(self.stack[-1])}")

    def _memo_get(self, idx):
        try:
            return self.memo[idx]
        except KeyError:
            raise UnpicklingError(f"Memo value not found at index {idx}") from None

    def persistent_load(self, pid):
        raise UnpicklingError("unsupported persistent id encountered")

    def load(self):
        self.metastack = []
        self.stack = []
        self.append = self.stack.append
        read = self._read
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = key[0]
            if op == 0x63:  # GLOBAL
                self.append(_resolve_global(*_read_global_instruction(self.readline)))
            elif op == 0x93:  # STACK_GLOBAL
                name, module = self.pop(), self.pop()
                if type(name) is not str or type(module) is not str:
                    raise UnpicklingError("STACK_GLOBAL requires str")
                self.append(_resolve_global(*_fix_name(module, name)))
            elif op == 0x81:  # NEWOBJ
                args = self.pop()
                cls = self.pop()
                from ._utils import _parameter_class
                Parameter = _parameter_class()
                if type(args) is not tuple:
                    raise UnpicklingError("NEWOBJ expected an argument tuple")
                if Parameter is not None and cls is Parameter:
                    self.append(Parameter(*args))
                elif isinstance(cls, type) and _is_allowed(cls):
                    self.append(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                          f"`add_safe_globals` but got {cls}")
            elif op == 0x52:  # REDUCE
                args = self.pop()
                func = self.top()
                if not _is_allowed(func):
                    msg = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {func.__self__}"
                    raise UnpicklingError(msg)
                if type(args) is not tuple:
                    raise UnpicklingError("REDUCE expected an argument tuple")
                self.stack[-1] = func(*args)
            elif op == 0x62:  # BUILD
                state = self.pop()
                inst = self.top()
                self._build(inst, state)
            elif op == 0x61:  # APPEND
                item = self.pop()
                if type(self.top()) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
                self.stack[-1].append(item)
            elif op == 0x65:  # APPENDS
                items = self.pop_mark()
                if type(self.top()) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == 0x90:  # ADDITEMS
                items = self.pop_mark()
                if type(self.top()) is not set:
                    raise UnpicklingError(f"Can only add items to sets, but got {type(self.stack[-1])}")
                self.stack[-1].update(items)
            elif op == 0x73:  # SETITEM
                v, k = self.pop(), self.pop()
                self._check_set_item_target("SETITEM")
                self.stack[-1][k] = v
            elif op == 0x75:  # SETITEMS
                items = self.pop_mark()
                self._check_set_item_target("SETITEMS")
                if len(items) % 2:
                    raise UnpicklingError("SETITEMS expected key/value pairs")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == 0x28:  # MARK
                self.metastack.append(self.stack)
                self.stack = []
                self.append = self.stack.append
            elif op == 0x74:  # TUPLE
                items = self.pop_mark()  # (pop first: it rebinds self.append)
                self.append(tuple(items))
            elif op in (0x85, 0x86, 0x87):  # TUPLE1..3
                n = op - 0x84
                if len(self.stack) < n:
                    raise UnpicklingError("unpickling stack underflow")
                self.stack[-n:] = [tuple(self.stack[-n:])]
            elif op == 0x91:  # FROZENSET
                items = self.pop_mark()
                self.append(frozenset(items))
            elif op == 0x4E:
                self.append(None)
            elif op == 0x89:
                self.append(False)
            elif op == 0x88:
                self.append(True)
            elif op == 0x29:
                self.append(())
            elif op == 0x5D:
                self.append([])
            elif op == 0x7D:
                self.append({})
            elif op == 0x8F:
                self.append(set())
            elif op == 0x4A:  # BININT
                self.append(unpack("<i", read(4))[0])
            elif op == 0x4B:  # BININT1
                self.append(read(1)[0])
            elif op == 0x4D:  # BININT2
                self.append(unpack("<H", read(2))[0])
            elif op == 0x47:  # BINFLOAT
                self.append(unpack(">d", read(8))[0])
            elif op in (0x58, 0x8C, 0x8D):  # BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
                n = unpack({0x58: "<I", 0x8C: "<B", 0x8D: "<Q"}[op], read({0x58: 4, 0x8C: 1, 0x8D: 8}[op]))[0]
                if n > maxsize:
                    raise UnpicklingError("String is too long")
                self.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x55:  # SHORT_BINSTRING
                data = read(read(1)[0])
                self.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))
            elif op in (0x43, 0x42):  # SHORT_BINBYTES, BINBYTES
                n = read(1)[0] if op == 0x43 else unpack("<I", read(4))[0]
                self.append(read(n))
            elif op == 0x51:  # BINPERSID
                pid = self.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and _decode_ascii(pid[0]) != "storage":
                    raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
                self.append(self.persistent_load(pid))
            elif op in (0x68, 0x6A):  # BINGET, LONG_BINGET
                idx = read(1)[0] if op == 0x68 else unpack("<I", read(4))[0]
                self.append(self._memo_get(idx))
            elif op in (0x71, 0x72):  # BINPUT, LONG_BINPUT
                idx = read(1)[0] if op == 0x71 else unpack("<I", read(4))[0]
                self.memo[idx] = self.top()
            elif op == 0x94:  # MEMOIZE
                self.memo[len(self.memo)] = self.top()
            elif op == 0x8A:  # LONG1
                self.append(decode_long(read(read(1)[0])))
            elif op == 0x95:  # FRAME
                read(8)
            elif op == 0x80:  # PROTO
                self.proto = read(1)[0]
                if self.proto != 2:
                    warnings.warn(f"Detected pickle protocol {self.proto} in the checkpoint, which was not the default "
                                  "pickle protocol used by `torch.load` (2). The weights_only Unpickler might not "
                                  "support all instructions implemented by this protocol, please file an issue for "
                                  "adding support if you encounter this.", stacklevel=2)
            elif op == 0x2E:  # STOP
                return self.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def _build(self, inst, state):
        from ._tensor import Tensor
        from ._utils import _parameter_class
        Parameter = _parameter_class()
        if type(inst) is Tensor:
            if type(state) is not tuple:
                raise UnpicklingError("Tensor BUILD state must be a tuple")
            inst.set_(*state)
        elif Parameter is not None and type(inst) is Parameter:
            inst.__setstate__(state)
        elif type(inst) is OrderedDict:
            if type(state) is not dict:
                raise UnpicklingError("OrderedDict BUILD state must be a dict")
            inst.__dict__.update(state)
        elif any(type(inst) is v for v in _get_user_allowed_globals().values()):  # as PyTorch: only user types
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                  f"`add_safe_globals`, but got {type(inst)}")


def _decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def load(file, *, encoding="ASCII"):
    return Unpickler(file, encoding=encoding).load()
