"""``ptcore.nn.utils``: gradient clipping and parameter/vector conversion."""
from ptcore.nn.utils import rnn  # noqa: F401
