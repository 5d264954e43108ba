"""torch.utils.model_zoo: torch.hub's names, kept for old callers."""
from ..hub import load_state_dict_from_url as load_url, tqdm  # noqa: F401
