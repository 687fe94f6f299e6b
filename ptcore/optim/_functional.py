"""Functional interface (``torch.optim._functional``): the update rule of
each optimizer as a function of parameter, gradient and state lists, the
same functions the optimizer classes call."""
import ptcore
from ptcore.optim.adadelta import adadelta  # noqa: F401
from ptcore.optim.adagrad import adagrad  # noqa: F401
from ptcore.optim.adam import adam  # noqa: F401
from ptcore.optim.adamax import adamax  # noqa: F401
from ptcore.optim.adamw import adamw  # noqa: F401
from ptcore.optim.asgd import asgd  # noqa: F401
from ptcore.optim.nadam import nadam  # noqa: F401
from ptcore.optim.radam import radam  # noqa: F401
from ptcore.optim.rmsprop import rmsprop  # noqa: F401
from ptcore.optim.rprop import rprop  # noqa: F401
from ptcore.optim.sgd import sgd  # noqa: F401
from ptcore.optim.sparse_adam import sparse_adam  # noqa: F401


def _make_sparse(grad, grad_indices, values):
    """A sparse COO tensor of ``grad``'s size from ``grad_indices`` and ``values``."""
    return ptcore.sparse_coo_tensor(grad_indices, values, grad.size())
