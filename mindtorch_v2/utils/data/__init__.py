"""torch.utils.data (written below)."""
