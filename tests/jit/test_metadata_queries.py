"""The ops declared with the ``metadata`` tag: the Tensor methods TorchScript
answers for a parameter when it compiles (formerly the list
``_script._TENSOR_SHAPE_METHODS``, frozen here), and the reads of a value that
let a batch norm fold into the convolution computing it (formerly
``_passes._SHAPE_QUERIES``, the shape ones only)."""
import ptcore
from ptcore import nn
from ptcore._dispatch.table import OPS
from ptcore.jit._script import metadata_query

_ANSWERED_AT_COMPILE_TIME_BEFORE = {
    "size", "dim", "numel", "ndimension", "nelement", "is_floating_point", "is_complex",
    "element_size", "get_device", "is_contiguous"}


def test_metadata_tag_holds_the_former_list():
    tagged = {n for (ns, n), d in OPS.items() if ns == "Tensor" and "metadata" in d.tags}
    assert tagged == _ANSWERED_AT_COMPILE_TIME_BEFORE
    assert all(metadata_query(n) for n in _ANSWERED_AT_COMPILE_TIME_BEFORE)
    assert not any(metadata_query(n) for n in ("stride", "t", "add", "item", "no_such_method"))


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


class _ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.conv(x)
        z = self.bn(y)
        if y.is_floating_point():       # the conv's result read for its metadata only
            return z
        return -z


def test_batch_norm_folds_past_metadata_queries():
    ptcore.manual_seed(0)
    m = _ConvBN()
    m(ptcore.randn(4, 3, 6, 6))         # running statistics that are not the defaults
    m.eval()
    x = ptcore.randn(2, 3, 6, 6)
    opt = ptcore.jit.optimize_for_inference(ptcore.jit.script(m))
    assert "batch_norm" not in str(opt.graph)
    assert ptcore.allclose(opt(x), m(x), rtol=1e-5, atol=1e-5)
