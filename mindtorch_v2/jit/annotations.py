"""torch.jit.annotations: the BroadcastingList types TorchScript signatures use (`BroadcastingList2[int]`:
an int or a list of 2). Outside TorchScript they are plain annotations, as in PyTorch, where a
subscript gives None. The typing names it re-exports are typing's."""
from typing import Any, Callable, Dict, List, Optional, Tuple, Union  # noqa: F401


class BroadcastingListCls:
    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingList3 = BroadcastingList4 = BroadcastingList5 = BroadcastingList6 = BroadcastingList1
