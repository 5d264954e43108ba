"""torch.jit._state: TorchScript's registries of scripted classes, empty here (nothing is scripted)."""
_script_classes = {}
_name_to_pyclass = {}


def _clear_class_state():
    _script_classes.clear()
    _name_to_pyclass.clear()
