"""torch.nn.utils.parametrizations: not implemented yet (each function says so when called)."""

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.nn.utils.parametrizations.{name} is not implemented in mindtorch_v2")
    fn.__name__ = name
    return fn


orthogonal, spectral_norm, weight_norm = (_missing(n) for n in __all__)
