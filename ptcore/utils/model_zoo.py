"""``ptcore.utils.model_zoo``: the older name of the hub's checkpoint download
(``torch.utils.model_zoo``): ``load_url`` is :func:`ptcore.hub.load_state_dict_from_url`."""
from ptcore.hub import load_state_dict_from_url as load_url, tqdm

__all__ = ["load_url", "tqdm"]
