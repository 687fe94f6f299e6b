"""DataLoader internals (``torch.utils.data._utils``)."""
from ptcore.utils.data._utils._constants import HAS_NUMPY, MP_STATUS_CHECK_INTERVAL  # noqa: F401
from ptcore.utils.data._utils import collate, fetch, worker, pin_memory  # noqa: E402,F401
