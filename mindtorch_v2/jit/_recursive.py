"""torch.jit._recursive: the store of scripted module types, empty here (no module is scripted)."""


class ConcreteTypeStore:
    def __init__(self):
        self.type_store = {}  # Python module type -> its concrete types
        self.methods_compiled = set()


concrete_type_store = ConcreteTypeStore()
