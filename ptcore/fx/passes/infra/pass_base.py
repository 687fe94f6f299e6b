"""``PassBase`` and ``PassResult`` (``torch.fx.passes.infra.pass_base``): a
graph pass is an object with ``call(graph_module)`` returning a
``PassResult(graph_module, modified)``, with optional ``requires`` / ``ensures``
checks run around it."""
import abc
from collections import namedtuple

__all__ = ["PassResult", "PassBase"]


class PassResult(namedtuple("PassResult", ["graph_module", "modified"])):
    """What a pass returns: the (possibly new) graph module and whether the
    pass changed it."""
    __slots__ = ()

    def __new__(cls, graph_module, modified):
        return super().__new__(cls, graph_module, modified)


class PassBase(abc.ABC):
    """A graph pass: ``pass_(gm)`` runs ``requires(gm)``, ``call(gm)`` (which
    subclasses implement) and ``ensures(gm)``, and returns ``call``'s result."""

    def __call__(self, graph_module):
        self.requires(graph_module)
        res = self.call(graph_module)
        self.ensures(graph_module)
        return res

    @abc.abstractmethod
    def call(self, graph_module):
        """Run the pass on ``graph_module``; return a :class:`PassResult`."""

    def requires(self, graph_module):  # noqa: B027
        """Check the pass's preconditions on ``graph_module`` (nothing by default)."""

    def ensures(self, graph_module):  # noqa: B027
        """Check the pass's postconditions on ``graph_module`` (nothing by default)."""
