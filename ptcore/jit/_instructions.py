"""The instructions of the fused elementwise evaluators (the CPU kernel
``ptcore._ops.kernels._fused`` and the generated CUDA kernel of
:mod:`ptcore.jit._fuse_cuda`), each declared once with everything the two
know about it.  :mod:`ptcore.jit._fusion` lowers pointwise nodes to them."""

__all__ = ["Instruction", "INSTRUCTIONS"]


class Instruction:
    """One instruction of the fused evaluators, declared once by
    :func:`_instruction`: ``name`` (the op it computes, or the lowering's own
    name: ``gelu_tanh``, ``where``), ``opcode`` (its number in the CPU
    evaluator), ``operands``, ``compare`` (gives a bool), ``pair`` (its index
    among the first and second halves of the evaluator's pair instructions,
    or None), ``cuda`` (its expression in the generated CUDA kernel, in the
    kernel library's dialect with ``x``, ``y`` the operands and ``T`` the
    compute type; None: a CUDA group cannot hold it) and ``cuda_node`` (a
    node of this op may join a CUDA group: ptcore has a CUDA kernel for it;
    the others with an expression are only what lowering turns a node into)."""
    __slots__ = ("name", "opcode", "operands", "compare", "pair", "cuda", "cuda_node")

    def __init__(self, name, opcode, operands, compare, pair, cuda, cuda_node):
        self.name, self.opcode, self.operands, self.compare = name, opcode, operands, compare
        self.pair, self.cuda, self.cuda_node = pair, cuda, cuda_node


# name -> Instruction, in opcode order; filled by _instruction() below
INSTRUCTIONS = {}


def _instruction(name, operands, *, compare=False, pair=None, cuda=None, cuda_node=True):
    INSTRUCTIONS[name] = Instruction(name, len(INSTRUCTIONS), operands, compare, pair, cuda,
                                     cuda is not None and cuda_node)


# The instructions in the CPU evaluator's opcode order (its enum in
# ptcore/_ops/kernels/include/ptc_fused.h: keep the two in the same order).
_instruction("add", 2, pair=0, cuda="x + y")
_instruction("sub", 2, pair=1, cuda="x - y")
_instruction("mul", 2, pair=2, cuda="x * y")
_instruction("div", 2, pair=3, cuda="x / y")
_instruction("maximum", 2, cuda="((x > y || ptc_isnan(x)) ? x : y)")
_instruction("minimum", 2, cuda="((x < y || ptc_isnan(x)) ? x : y)")
_instruction("pow", 2, cuda="FN(pow)(x, y)")
_instruction("eq", 2, compare=True, cuda="(T)(x == y)")
_instruction("ne", 2, compare=True, cuda="(T)(x != y)")
_instruction("lt", 2, compare=True, cuda="(T)(x < y)")
_instruction("le", 2, compare=True, cuda="(T)(x <= y)")
_instruction("gt", 2, compare=True, cuda="(T)(x > y)")
_instruction("ge", 2, compare=True, cuda="(T)(x >= y)")
_instruction("neg", 1, cuda="-x")
_instruction("exp", 1, cuda="FN(exp)(x)")
_instruction("log", 1, cuda="FN(log)(x)")
_instruction("tanh", 1, cuda="FN(tanh)(x)")
_instruction("sigmoid", 1, cuda="(T)1 / ((T)1 + FN(exp)(-x))")
_instruction("relu", 1, cuda="(x < (T)0 ? (T)0 : x)")
_instruction("sqrt", 1, cuda="FN(sqrt)(x)")
_instruction("rsqrt", 1, cuda="FN(rsqrt)(x)", cuda_node=False)
_instruction("abs", 1, cuda="FN(fabs)(x)")
_instruction("sin", 1)
_instruction("cos", 1)
_instruction("square", 1, cuda="x * x", cuda_node=False)
_instruction("reciprocal", 1, cuda="(T)1 / x", cuda_node=False)
_instruction("erf", 1)
_instruction("log1p", 1)
_instruction("expm1", 1)
_instruction("gelu", 1)
_instruction("gelu_tanh", 1)
_instruction("silu", 1)
_instruction("where", 3)
