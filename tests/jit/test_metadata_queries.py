"""The Tensor methods TorchScript answers for a parameter when it compiles are
the ops declared with the ``metadata`` tag (formerly the list
``_script._TENSOR_SHAPE_METHODS``, frozen here)."""
import ptcore
from ptcore import nn
from ptcore._dispatch.table import OPS
from ptcore.jit._script import _metadata_query

_ANSWERED_AT_COMPILE_TIME_BEFORE = {
    "size", "dim", "numel", "ndimension", "nelement", "is_floating_point", "is_complex",
    "element_size", "get_device", "is_contiguous"}


def test_metadata_tag_holds_the_former_list():
    tagged = {n for (ns, n), d in OPS.items() if ns == "Tensor" and "metadata" in d.tags}
    assert tagged == _ANSWERED_AT_COMPILE_TIME_BEFORE
    assert all(_metadata_query(n) for n in _ANSWERED_AT_COMPILE_TIME_BEFORE)
    assert not any(_metadata_query(n) for n in ("stride", "t", "add", "item", "no_such_method"))


class _M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(ptcore.ones(2, 3))

    def forward(self, x):
        if self.w.dim() == 2:           # answered when compiling
            return x + self.w.t().sum()
        return x


def test_parameter_metadata_query_in_script():
    m = ptcore.jit.script(_M())
    # dim() answered when compiling: no node asks it, the branch is folded
    methods = [n.args[0] for n in m.graph.nodes if n.op == ("prim", "method")]
    assert methods == ["t", "sum"]
    assert all(n.op[1] != "if" for n in m.graph.nodes)
    x = ptcore.zeros(3)
    assert ptcore.equal(m(x), x + 6.0)
    with ptcore.no_grad():
        m.w.mul_(2)                     # a value change shows; the query's answer is the same
    assert ptcore.equal(m(x), x + 12.0)
