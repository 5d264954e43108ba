from ._compatibility import _not_implemented


class GraphModule:
    def __init__(self, *args, **kwargs):
        _not_implemented("torch.fx.GraphModule")
