"""The one registry of the op library's Python names: `torch.<name>` functions and `Tensor.<name>`
methods. Each op module declares its FUNCTIONS and METHODS dicts; the package registers them here,
and a name that two modules register with different objects is an error at import, never a silent
replacement (aliases, one object under several names, are fine)."""


class Registry(dict):
    def __init__(self, namespace):
        super().__init__()
        self.namespace = namespace
        self.origin = {}

    def register(self, entries, origin):
        for name, fn in entries.items():
            if name in self and self[name] is not fn:
                raise RuntimeError(f"{self.namespace}.{name} is registered twice: by {self.origin[name]} "
                                   f"and by {origin}")
            self[name] = fn
            self.origin.setdefault(name, origin)


TORCH = Registry("torch")
TENSOR = Registry("Tensor")
