"""torch.amp: autocast state and contexts (see autocast_mode for what is implemented), GradScaler."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_available,  # noqa: F401
                            is_autocast_enabled, set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler  # noqa: F401
