"""The ONNX converter registry (``ptcore.onnx._registration``): each converter
registers its ops at its definition; this checks that the registry holds every
op the export converted when the converters were tables (a frozen copy of
those tables' keys), and that a second registration of an op is refused."""
import pytest

import ptcore.onnx  # noqa: F401  (imports every converter module)
from ptcore.onnx import _registration
from ptcore.onnx._registration import CONVERTERS, ELEMENTWISE

# (namespace::name) the converter tables held before the registry
_CONVERTED_BEFORE = """
    Tensor::__eq__ Tensor::__floordiv__ Tensor::__ge__ Tensor::__getitem__ Tensor::__gt__
    Tensor::__le__ Tensor::__lt__ Tensor::__mod__ Tensor::__ne__ Tensor::__rfloordiv__
    Tensor::__rmod__ Tensor::addmm Tensor::all Tensor::amax Tensor::amin Tensor::any
    Tensor::argmax Tensor::argmin Tensor::argsort Tensor::bfloat16 Tensor::bool Tensor::byte
    Tensor::char Tensor::chunk Tensor::clamp Tensor::clamp_max Tensor::clamp_min Tensor::clip
    Tensor::cumsum Tensor::div Tensor::divide Tensor::double Tensor::eq Tensor::expand
    Tensor::expand_as Tensor::flip Tensor::float Tensor::floor_divide Tensor::fmod
    Tensor::gather Tensor::ge Tensor::gt Tensor::half Tensor::index_select Tensor::int
    Tensor::le Tensor::log_softmax Tensor::logsumexp Tensor::long Tensor::lt Tensor::masked_fill
    Tensor::max Tensor::mean Tensor::min Tensor::narrow Tensor::ne Tensor::new_empty
    Tensor::new_full Tensor::new_ones Tensor::new_zeros Tensor::norm Tensor::numel
    Tensor::remainder Tensor::repeat Tensor::repeat_interleave Tensor::roll Tensor::rsqrt
    Tensor::short Tensor::size Tensor::softmax Tensor::sort Tensor::split
    Tensor::split_with_sizes Tensor::squeeze Tensor::std Tensor::sum Tensor::to Tensor::topk
    Tensor::tril Tensor::triu Tensor::type_as Tensor::unbind Tensor::unflatten Tensor::unfold
    Tensor::unsqueeze Tensor::var Tensor::where linalg::vector_norm
    nn.functional::adaptive_avg_pool1d nn.functional::adaptive_avg_pool2d
    nn.functional::adaptive_avg_pool3d nn.functional::adaptive_max_pool1d
    nn.functional::adaptive_max_pool2d nn.functional::adaptive_max_pool3d
    nn.functional::binary_cross_entropy nn.functional::binary_cross_entropy_with_logits
    nn.functional::conv_transpose1d nn.functional::conv_transpose2d
    nn.functional::conv_transpose3d nn.functional::cosine_similarity
    nn.functional::cross_entropy nn.functional::elu nn.functional::fold
    nn.functional::group_norm nn.functional::hardsigmoid nn.functional::hardswish
    nn.functional::hardtanh nn.functional::huber_loss nn.functional::instance_norm
    nn.functional::interpolate nn.functional::l1_loss nn.functional::mish
    nn.functional::mse_loss nn.functional::nll_loss nn.functional::normalize
    nn.functional::one_hot nn.functional::pad nn.functional::pixel_shuffle nn.functional::prelu
    nn.functional::relu6 nn.functional::scaled_dot_product_attention nn.functional::silu
    nn.functional::smooth_l1_loss nn.functional::softplus nn.functional::unfold nn.modules::GRU
    nn.modules::LSTM nn.modules::RNN prim::add prim::floordiv prim::mod prim::mul prim::neg
    prim::sub ptcore::addmm ptcore::all ptcore::amax ptcore::amin ptcore::any ptcore::arange
    ptcore::argmax ptcore::argmin ptcore::argsort ptcore::as_tensor ptcore::cdist ptcore::chunk
    ptcore::clamp ptcore::clamp_max ptcore::clamp_min ptcore::clip ptcore::cumsum ptcore::div
    ptcore::divide ptcore::einsum ptcore::empty ptcore::empty_like ptcore::eq ptcore::flip
    ptcore::floor_divide ptcore::fmod ptcore::full ptcore::full_like ptcore::gather ptcore::ge
    ptcore::gt ptcore::index_select ptcore::le ptcore::log_softmax ptcore::logsumexp ptcore::lt
    ptcore::masked_fill ptcore::max ptcore::mean ptcore::min ptcore::narrow ptcore::ne
    ptcore::norm ptcore::numel ptcore::ones ptcore::ones_like ptcore::remainder
    ptcore::repeat_interleave ptcore::roll ptcore::rsqrt ptcore::softmax ptcore::sort
    ptcore::split ptcore::split_with_sizes ptcore::squeeze ptcore::stack ptcore::std ptcore::sum
    ptcore::tensor ptcore::topk ptcore::tril ptcore::triu ptcore::unbind ptcore::unflatten
    ptcore::unsqueeze ptcore::var ptcore::where ptcore::zeros ptcore::zeros_like
""".split()

# name:ONNX operator:arity of the export's former _UNARY / _BINARY tables
_ELEMENTWISE_BEFORE = """
    abs:Abs:1 ceil:Ceil:1 clone:Identity:1 contiguous:Identity:1 cos:Cos:1 detach:Identity:1
    erf:Erf:1 exp:Exp:1 floor:Floor:1 log:Log:1 neg:Neg:1 reciprocal:Reciprocal:1 relu:Relu:1
    sigmoid:Sigmoid:1 sin:Sin:1 sqrt:Sqrt:1 tanh:Tanh:1 add:Add:2 bmm:MatMul:2 div:Div:2
    matmul:MatMul:2 maximum:Max:2 minimum:Min:2 mul:Mul:2 pow:Pow:2 sub:Sub:2
""".split()


def test_every_formerly_converted_op_is_registered():
    want = {tuple(k.split("::")) for k in _CONVERTED_BEFORE}
    assert len(want) == 203
    assert set(CONVERTERS) == want
    assert all(callable(f) for f in CONVERTERS.values())


def test_elementwise_ops_keep_their_onnx_operator():
    want = {n: (op, int(k)) for n, op, k in (e.split(":") for e in _ELEMENTWISE_BEFORE)}
    assert ELEMENTWISE == want


def test_bare_name_registers_function_and_method(monkeypatch):
    monkeypatch.setattr(_registration, "CONVERTERS", {})

    @_registration.converter("frob", "nn.functional.frob")
    def conv(b, node):
        return None
    assert _registration.CONVERTERS == {("ptcore", "frob"): conv, ("Tensor", "frob"): conv,
                                        ("nn.functional", "frob"): conv}


def test_second_registration_refused():
    with pytest.raises(ValueError, match="Tensor::narrow registered twice"):
        _registration.register(lambda b, node: None, "Tensor.narrow")
    with pytest.raises(ValueError, match="relu registered twice"):
        _registration.elementwise("Relu", "relu", arity=1)
