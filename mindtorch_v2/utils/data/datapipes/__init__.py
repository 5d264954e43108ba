"""torch.utils.data.datapipes: composable iterable-style (`iter`) and map-style (`map`) DataPipes."""
from . import iter, map  # noqa: F401
