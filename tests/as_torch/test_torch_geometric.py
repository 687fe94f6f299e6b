"""PyTorch Geometric on ptcore, unmodified, against torch (``pyg_cases.py``, run with the
real torch and under ``python -m ptcore.as_torch`` in an environment without torch), with
its pure-Python message passing (no torch_scatter / torch_sparse): fourteen convolution
layers (GCN, GAT, GATv2, GraphSAGE mean/max, GIN, GraphConv, Cheb, Transformer, EdgeConv,
SG, TAG, GEN) forward, with input and parameter gradients, and GAT's attention weights;
global mean/max/add, attentional, Set2Set and sort pooling, TopK and SAG pooling, dense
batching over a ``Batch``; graph utilities (self loops, degree, scatter reductions, softmax,
coalesce, subgraphs, Laplacian, dense/sparse adjacency); 20 Adam steps of a two-layer GCN
node classifier, and two epochs of a GIN graph classifier over a ``DataLoader``; a
``HeteroData`` graph through ``HeteroConv`` (lazy input sizes) and through a model made
heterogeneous by ``to_hetero`` (PyG's fx tracer), forward and backward, transforms, and PyG's
GAT and GraphSAGE models.  Weights and graphs come from NumPy: indices
are equal, values agree to float32 rounding.

What PyG took: ``torch.ops.aten._pin_memory``, ``_sparse_addmm`` and
``_sparse_mm_reduce_impl`` (it registers handlers for them at import),
``torch._tensor_str._tensor_str``, ``torch.distributed.rpc`` (imported at module level;
ptcore's, like a PyTorch build without RPC, holds only ``is_available() -> False``), and for
``to_hetero``'s tracer, built from ``torch.fx._symbolic_trace``'s module-level names:
``compatibility`` (``torch.fx._compatibility``), ``_orig_module_getattr``,
``_orig_module_call``, ``ScriptObject`` and ``FunctionType``.
PyG's ``EdgeIndex`` is a wrapper subclass (``Tensor._make_wrapper_subclass`` with
``__torch_dispatch__``); it took ``torch._C._get_default_device``,
``torch._tensor_str._add_suffixes`` and ``torch.sparse.mm``'s ``reduce``.
"""
import importlib.util
import pytest

torch = pytest.importorskip("torch")
# (found, not imported: the library would be imported next to the real torch in the
# test process, and some patch torch on import -- torch_geometric replaces
# torch.index_select -- which changes what later tests compare against)
if importlib.util.find_spec("torch_geometric") is None:
    pytest.skip("torch_geometric is not installed", allow_module_level=True)

from case_results import cases_fixture, compare_case  # noqa: E402  (tests/as_torch)

NAMES = ["layers", "pooling", "utils", "node_classification", "graph_classification",
         "hetero_models", "edge_index", "sparse_adjacency"]
runs = cases_fixture("pyg_cases.py", NAMES)


@pytest.mark.parametrize("case", NAMES)
def test_torch_geometric(runs, case):
    compare_case(runs, case, rtol=1e-5, atol=1e-6)
