from ._compatibility import _not_implemented


class Graph:
    def __init__(self, *args, **kwargs):
        _not_implemented("torch.fx.Graph")
