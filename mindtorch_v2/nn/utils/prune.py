"""torch.nn.utils.prune: not implemented yet. The names import (libraries such as Lightning reference
them at module level); using one raises NotImplementedError naming it."""
from ..._missing import missing_class, missing_function

_WHY = " (mindtorch_v2 has no pruning yet)"
BasePruningMethod = missing_class("torch.nn.utils.prune.BasePruningMethod", why=_WHY)
for _name in ("PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured",
              "LnStructured", "CustomFromMask"):
    globals()[_name] = missing_class(f"torch.nn.utils.prune.{_name}", BasePruningMethod, why=_WHY)
for _name in ("identity", "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
              "global_unstructured", "custom_from_mask", "remove", "is_pruned"):
    globals()[_name] = missing_function(f"torch.nn.utils.prune.{_name}", why=_WHY)
