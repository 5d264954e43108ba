"""torch.nn.utils.skip_init: build a module without running its initialisers."""
import inspect

import mindtorch_v2 as torch  # the package; its attributes are read at call time


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) built on the meta device, then given uninitialised storage on the real one."""
    if not issubclass(module_cls, torch.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs, device="meta").to_empty(device=device)
