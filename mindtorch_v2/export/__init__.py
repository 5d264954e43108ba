"""torch.export: graph capture is not implemented; the names exist, using them raises."""
from .._missing import missing_function
from . import _trace  # noqa: F401


def _ni(name):
    return missing_function(f"torch.export.{name}", " (mindtorch_v2 has no graph capture)")


export = _ni("export")
save = _ni("save")
load = _ni("load")
draft_export = _ni("draft_export")
unflatten = _ni("unflatten")
register_dataclass = _ni("register_dataclass")


class ExportedProgram:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.export.ExportedProgram is not implemented")


class _DimHint:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"DimHint({self.name})"


class Dim:
    """torch.export.Dim: a named symbolic dimension (only meaningful to export, which is absent)."""
    AUTO = _DimHint("AUTO")
    STATIC = _DimHint("STATIC")
    DYNAMIC = _DimHint("DYNAMIC")

    def __init__(self, name, *, min=None, max=None):
        self.__name__ = name
        self.min = min
        self.max = max


def dims(*names, min=None, max=None):
    return tuple(Dim(n, min=min, max=max) for n in names)


class ShapesCollection(dict):
    pass


class ExportGraphSignature:
    pass
