"""ptcore.optim: optimizers and learning-rate schedulers (``torch.optim``)."""
from ptcore.optim.optimizer import (  # noqa: F401
    Optimizer, register_optimizer_step_pre_hook, register_optimizer_step_post_hook,
)
from ptcore.optim.sgd import SGD
from ptcore.optim.adam import Adam
from ptcore.optim.adamw import AdamW
from ptcore.optim.rmsprop import RMSprop
from ptcore.optim.adagrad import Adagrad
from ptcore.optim.adadelta import Adadelta
from ptcore.optim.adamax import Adamax
from ptcore.optim.nadam import NAdam
from ptcore.optim.radam import RAdam
from ptcore.optim.lbfgs import LBFGS
from ptcore.optim.rprop import Rprop
from ptcore.optim.asgd import ASGD
from ptcore.optim import lr_scheduler
from ptcore.optim.adafactor import Adafactor
from ptcore.optim.muon import Muon
from ptcore.optim.sparse_adam import SparseAdam
from ptcore.optim import swa_utils  # noqa: E402
from ptcore.optim._stateless import swap_in_optimizer_params_and_state

__all__ = [
    "ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "Optimizer",
    "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler", "Adafactor", "SparseAdam", "swa_utils", "Muon",
    "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
    "swap_in_optimizer_params_and_state",
]
