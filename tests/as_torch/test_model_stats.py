"""torchinfo, thop and fvcore on ptcore, unmodified, against torch (``model_stats_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch): the whole printed torchinfo summary (layer tree, input/output shapes, kernel shapes,
parameter counts and shares, mult-adds, trainable flags, memory estimates) of a CNN, an
embedding+LSTM tagger and a transformer encoder, at two depths, from input sizes with dtypes
and from input data, and of models with reused layers, a ModuleDict, several inputs, a GRU,
3-D convolutions, attention and frozen layers; thop's MAC and parameter counts of the same models; fvcore's jit-traced
FLOP counts (total, per module, per operator, unsupported ops, its tables) and activation
counts of those and of a model with transposed convolutions, group/instance norms,
upsampling, bmm/einsum/addmm/mm and grid sampling.  All agree exactly.

torchinfo needed ``UntypedStorage.__sizeof__`` to count the storage's bytes (its "Input size"
is ``sys.getsizeof`` of the input's storage).  fvcore needed ``torch.ao.quantization``'s
observer/fake-quantize base classes (imported by its checkpointer), ``torch.jit._get_trace_graph``
(ptcore's trace read through TorchScript's graph API, ops under torch's traced names and argument
layouts, F.multi_head_attention_forward recorded as the ops it calls, autograd.Functions as
prim::PythonOp nodes, dead code removed as TorchScript's tracer does), the tracing state's
``push_scope``/``pop_scope`` (its per-module attribution) and ``torch._C.Graph``.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchinfo", "thop", "fvcore")

NAMES = ["torchinfo", "torchinfo_more", "thop", "fvcore"]
runs, test_model_stats = case_tests("model_stats_cases.py", NAMES, rtol=0, atol=0)
