"""torch.autograd.forward_ad: forward-mode AD is not implemented (every entry point says so)."""

from .._missing import missing_function

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level", "UnpackedDualTensor"]


def _missing(name):
    return missing_function(f"torch.autograd.forward_ad.{name}")


make_dual = _missing("make_dual")
unpack_dual = _missing("unpack_dual")
enter_dual_level = _missing("enter_dual_level")
exit_dual_level = _missing("exit_dual_level")


class dual_level:
    def __enter__(self):
        raise NotImplementedError("torch.autograd.forward_ad.dual_level is not implemented")

    def __exit__(self, *exc):
        return False


class UnpackedDualTensor(tuple):
    pass
