"""``torch.jit.annotations``: the annotation names TorchScript code imports from it
(torchvision types ``roi_align``'s ``output_size`` as ``BroadcastingList2[int]``).

``BroadcastingListN[T]`` annotates an argument that takes one ``T`` or ``N`` of them
(a kernel size ``3`` or ``(3, 3)``); subscripted, it is ``None`` as in torch, so the
annotated function runs in Python unchanged."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401  (torch's names)

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Any", "Dict",
           "List", "Optional", "Tuple", "Union"]


class _BroadcastingListCls:
    """``BroadcastingListN``: subscripting gives None (an annotation TorchScript reads)."""
    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __getitem__(self, types):
        return None

    def __repr__(self):
        return f"BroadcastingList{self.n}"


BroadcastingList1 = _BroadcastingListCls(1)
BroadcastingList2 = _BroadcastingListCls(2)
BroadcastingList3 = _BroadcastingListCls(3)
