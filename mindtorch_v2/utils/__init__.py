from . import _pytree, checkpoint  # noqa: F401
