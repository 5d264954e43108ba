"""torch.amp.GradScaler: loss scaling is for float16 training on accelerators; without one PyTorch
disables a CUDA scaler (with a warning), and a disabled scaler passes everything through."""
import warnings


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        if enabled and device == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            enabled = False
        if enabled:
            raise NotImplementedError(f"torch.amp.GradScaler(device='{device}', enabled=True) is not implemented")
        self._enabled = False
        self._init_scale = init_scale

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
