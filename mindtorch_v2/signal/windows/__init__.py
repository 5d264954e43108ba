"""torch.signal.windows."""
from .windows import (__all__, bartlett, blackman, cosine, exponential, gaussian, general_cosine,  # noqa: F401
                      general_hamming, hamming, hann, kaiser, nuttall)
