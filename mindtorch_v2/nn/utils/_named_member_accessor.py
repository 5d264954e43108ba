"""Get, set and swap a module's tensors and submodules by dotted path (the machinery of functional_call)."""
from collections.abc import Iterable

import mindtorch_v2 as torch  # the package; its attributes are read at call time

_MISSING = object()  # swap_tensor's "absent" value: swapping it in deletes, swapping it out means "was not there"


def _require_module(obj):
    if not isinstance(obj, torch.nn.Module):
        raise TypeError(f"{obj} is not an instance of torch.nn.Module")


def _require_tensor(obj, missing_ok=False):
    if obj is not None and not isinstance(obj, torch.Tensor) and not (missing_ok and obj is _MISSING):
        raise TypeError(f"{obj} is not an instance of torch.Tensor")


def _check_leaf_name(name, what):
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def _slot(module, name):
    """The parameter or buffer dict of module holding name, or None for a plain attribute."""
    for table in (module._parameters, module._buffers):
        if name in table:
            return table
    return None


def set_tensor(module, name, tensor):
    """Set module's direct tensor attribute name, keeping it a parameter/buffer if it was one."""
    _require_module(module)
    _require_tensor(tensor)
    _check_leaf_name(name, "tensor")
    table = _slot(module, name)
    if table is None:
        setattr(module, name, tensor)
    else:
        table[name] = tensor


def swap_tensor(module, name, tensor, allow_missing=False):
    """Set module's direct tensor attribute name and return the old value (_MISSING deletes / was absent)."""
    _require_module(module)
    _require_tensor(tensor, missing_ok=True)
    _check_leaf_name(name, "tensor")
    table = _slot(module, name)
    if table is not None:
        old = table[name]
        if tensor is _MISSING:
            del table[name]
        else:
            table[name] = tensor
        return old
    if hasattr(module, name):
        old = getattr(module, name)
    elif allow_missing:
        old = _MISSING
    else:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    if old is not _MISSING and old is not None and not isinstance(old, torch.Tensor):
        raise TypeError(f"attribute `{name}`: {old} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return old


def swap_submodule(module, name, submodule):
    """Replace module's direct child name by submodule and return the old child."""
    _require_module(module)
    _require_module(submodule)
    _check_leaf_name(name, "submodule")
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    old = module._modules[name]
    if not isinstance(old, torch.nn.Module):
        raise TypeError(f"{name} attribute is not an instance of torch.nn.Module")
    module._modules[name] = submodule
    return old


def _same_length(names, values):
    names = names if isinstance(names, (list, tuple)) else list(names)
    values = values if isinstance(values, (list, tuple)) else list(values)
    if len(names) != len(values):
        raise AssertionError("names and values must have the same length, "
                             f"got {len(names)} names and {len(values)} values")
    return zip(names, values)


class NamedMemberAccessor:
    """Dotted-path access to a module's submodules and tensors, caching the submodule lookups."""

    def __init__(self, module) -> None:
        self.module = module
        self.memo = {}

    def _owner(self, path):
        """(submodule holding the last component of path, that component)."""
        prefix, _, leaf = path.rpartition(".")
        return self.get_submodule(prefix), leaf

    def get_submodule(self, name: str):
        """The submodule at the dotted path name ("" is the module itself)."""
        if not name:
            return self.module
        cached = self.memo.get(name)
        if cached is not None:
            return cached
        parent, leaf = self._owner(name)
        try:
            sub = getattr(parent, leaf)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{leaf}`") from ex
        if not isinstance(sub, torch.nn.Module):
            raise TypeError(f"submodule `{name}`: {sub} is not an instance of torch.nn.Module")
        self.memo[name] = sub
        return sub

    def swap_submodule(self, path: str, value):
        """Replace the submodule at path by value; return the old one."""
        return swap_submodule(*self._owner(path), value)

    def get_tensor(self, name: str):
        """The tensor (or None) at the dotted path name."""
        owner, leaf = self._owner(name)
        try:
            value = getattr(owner, leaf)
        except AttributeError as ex:
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`") from ex
        _require_tensor(value)
        return value

    def set_tensor(self, name: str, value) -> None:
        """Set the tensor at the dotted path name."""
        set_tensor(*self._owner(name), value)

    def del_tensor(self, name: str) -> None:
        """Delete the tensor at the dotted path name."""
        owner, leaf = self._owner(name)
        try:
            delattr(owner, leaf)
        except AttributeError as ex:
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`") from ex

    def swap_tensor(self, name: str, value, allow_missing: bool = False):
        """Set the tensor at the dotted path name; return the old one."""
        return swap_tensor(*self._owner(name), value, allow_missing=allow_missing)

    def get_tensors(self, names: Iterable[str]):
        """get_tensor for each name."""
        return [self.get_tensor(n) for n in names]

    def set_tensors(self, names: Iterable[str], values) -> None:
        """set_tensor for each (name, value) pair; the two must have the same length."""
        for name, value in _same_length(names, values):
            self.set_tensor(name, value)

    def set_tensors_dict(self, named_tensors) -> None:
        """set_tensor for each item of the dict."""
        for name, value in named_tensors.items():
            self.set_tensor(name, value)

    def del_tensors(self, names: Iterable[str]) -> None:
        """del_tensor for each name."""
        for name in names:
            self.del_tensor(name)

    def swap_tensors(self, names: Iterable[str], values, allow_missing: bool = False):
        """swap_tensor for each (name, value) pair; the old values, in order."""
        return [self.swap_tensor(n, v, allow_missing=allow_missing) for n, v in _same_length(names, values)]

    def swap_tensors_dict(self, named_tensors, allow_missing: bool = False):
        """Swap in every item of the dict, all or nothing; (old values by name, names that were absent)."""
        old, missing = {}, []

        def restore():
            for n, t in old.items():
                self.swap_tensor(n, t, allow_missing=True)

        try:
            for name, tensor in named_tensors.items():
                old[name] = self.swap_tensor(name, tensor, allow_missing=True)
                if old[name] is _MISSING:
                    missing.append(name)
        except Exception:
            restore()
            raise
        if missing and not allow_missing:
            restore()
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return old, missing

    def check_keys(self, keys: Iterable[str]):
        """(sorted tensor names absent from keys, sorted keys that name no tensor)."""
        keys = set(keys)
        known = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(known - keys), sorted(keys - known)

    def named_parameters(self, remove_duplicate: bool = True):
        """The module's named_parameters."""
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate: bool = True):
        """The module's named_buffers."""
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_tensors(self, remove_duplicate: bool = True):
        """The module's parameters, then its buffers."""
        yield from self.named_parameters(remove_duplicate)
        yield from self.named_buffers(remove_duplicate)

    def named_modules(self, remove_duplicate: bool = True):
        """The module's named_modules."""
        yield from self.module.named_modules(remove_duplicate=remove_duplicate)
