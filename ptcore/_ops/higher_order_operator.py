"""``torch._ops.HigherOrderOperator``: the abstract base class of operators that take
functions (torch's ``cond``, ``while_loop``, ``map`` ... are instances of its subclasses).
ptcore's higher-order operators (:mod:`ptcore._higher_order_ops`) are plain functions; the
class is here for the libraries that ask whether a function is one (tensordict's
``__torch_function__`` does, for every function it does not handle) and for subclasses that
define their own ``__call__``."""
import abc

__all__ = ["HigherOrderOperator"]


class HigherOrderOperator(abc.ABC):
    """An operator named ``name`` in the ``higher_order`` namespace; subclasses define
    ``__call__``."""

    namespace = "higher_order"

    def __init__(self, name, *, cacheable=False, supports_training_input_mutation=False):
        if not isinstance(name, str):
            raise TypeError(f"HigherOrderOperator: name must be a str, not {type(name).__name__}")
        self._name = name
        self.__name__ = name
        self._cacheable = cacheable
        self.supports_training_input_mutation = supports_training_input_mutation

    def name(self):
        return self._name

    def cacheable(self):
        return self._cacheable

    @abc.abstractmethod
    def __call__(self, *args, **kwargs):
        raise NotImplementedError
