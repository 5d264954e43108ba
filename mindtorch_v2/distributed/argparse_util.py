"""torch.distributed.argparse_util: argparse actions whose default comes from a PET_<DEST> variable
(what torchrun's options use, so each can also be given in the environment)."""
import os
from argparse import Action


class env(Action):
    """An option defaulting to the environment variable PET_<DEST> (which also makes it not required)."""

    def __init__(self, dest, default=None, required=False, **kwargs) -> None:
        default = os.environ.get(f"PET_{dest.upper()}", default)
        if default:
            required = False
        super().__init__(dest=dest, default=default, required=required, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


class check_env(Action):
    """A store_true flag that PET_<DEST>=1 also sets."""

    def __init__(self, dest, default=False, **kwargs) -> None:
        default = bool(int(os.environ.get(f"PET_{dest.upper()}", "1" if default else "0")))
        super().__init__(dest=dest, const=True, default=default, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const)
