"""torch.ao: quantization is out of scope for mindtorch_v2 (docs/COMPATIBILITY.md). The modules import,
so that libraries with quantizable model variants (torchvision.models.quantization) import; every
name raises NotImplementedError naming itself when used."""
from . import quantization  # noqa: F401
