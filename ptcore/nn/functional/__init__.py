"""ptcore.nn.functional."""
from ptcore.nn.functional._loss import *  # noqa: F401,F403
from ptcore.nn.functional._norm import *  # noqa: F401,F403
from ptcore.nn.functional._distance import *  # noqa: F401,F403
