"""The fused evaluators' instruction table (``ptcore.jit._instructions.INSTRUCTIONS``):
each instruction declared once, with its opcode, operands, comparison, pair
index and CUDA expression.  Checked against a frozen copy of the tables it
replaced (OPCODES, BINARY, UNARY, COMPARE, CUDA_OPS, _PAIR1, _fuse_cuda.EXPRS,
_ALIASES) and against the CPU evaluator's opcode enum."""
import pathlib
import re

from ptcore._dispatch.declarations import same_call_as
from ptcore.jit._instructions import INSTRUCTIONS
from ptcore.jit._fusion import OPCODES, CUDA_OPS, PAIR0, _cuda_node

# the CPU evaluator's opcodes before the table, in order
_OPCODES_BEFORE = """
    add sub mul div maximum minimum pow eq ne lt le gt ge neg exp log tanh sigmoid relu sqrt
    rsqrt abs sin cos square reciprocal erf log1p expm1 gelu gelu_tanh silu where
""".split()
_BINARY_BEFORE = 'add sub mul div maximum minimum pow eq ne lt le gt ge'.split()
_UNARY_BEFORE = """
    neg exp log tanh sigmoid relu sqrt rsqrt abs sin cos square reciprocal erf log1p expm1 gelu
    gelu_tanh silu
""".split()
_COMPARE_BEFORE = 'eq ne lt le gt ge'.split()
_PAIR_BEFORE = 'add sub mul div'.split()
_CUDA_EXPRESSIONS_BEFORE = {'add': 'x + y',
                            'sub': 'x - y',
                            'mul': 'x * y',
                            'div': 'x / y',
                            'maximum': '((x > y || ptc_isnan(x)) ? x : y)',
                            'minimum': '((x < y || ptc_isnan(x)) ? x : y)',
                            'pow': 'FN(pow)(x, y)',
                            'eq': '(T)(x == y)',
                            'ne': '(T)(x != y)',
                            'lt': '(T)(x < y)',
                            'le': '(T)(x <= y)',
                            'gt': '(T)(x > y)',
                            'ge': '(T)(x >= y)',
                            'neg': '-x',
                            'exp': 'FN(exp)(x)',
                            'log': 'FN(log)(x)',
                            'sqrt': 'FN(sqrt)(x)',
                            'abs': 'FN(fabs)(x)',
                            'relu': '(x < (T)0 ? (T)0 : x)',
                            'sigmoid': '(T)1 / ((T)1 + FN(exp)(-x))',
                            'tanh': 'FN(tanh)(x)',
                            'square': 'x * x',
                            'reciprocal': '(T)1 / x',
                            'rsqrt': 'FN(rsqrt)(x)'}
_CUDA_NODE_OPS_BEFORE = """
    __rpow__ __rsub__ __rtruediv__ abs add div eq exp ge gt le log lt maximum minimum mul ne neg
    pow relu rsub sigmoid sqrt sub tanh
""".split()
# the former _ALIASES (None: never fused)
_ALIASES_BEFORE = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul",
                   "__rmul__": "mul", "__truediv__": "div", "true_divide": "div",
                   "__neg__": "neg", "negative": "neg", "__abs__": "abs", "absolute": "abs",
                   "multiply": "mul", "subtract": "sub", "divide": "div", "__pow__": "pow",
                   "float_power": None, "__eq__": "eq", "__ne__": "ne", "__lt__": "lt",
                   "__le__": "le", "__gt__": "gt", "__ge__": "ge", "greater": "gt",
                   "greater_equal": "ge", "less": "lt", "less_equal": "le",
                   "not_equal": "ne", "max": None, "min": None}


def test_instructions_match_the_former_tables():
    assert list(OPCODES) == _OPCODES_BEFORE
    assert list(OPCODES.values()) == list(range(len(_OPCODES_BEFORE)))
    assert [n for n, i in INSTRUCTIONS.items() if i.operands == 2] == _BINARY_BEFORE
    assert [n for n, i in INSTRUCTIONS.items() if i.operands == 1] == _UNARY_BEFORE
    assert [n for n, i in INSTRUCTIONS.items() if i.compare] == _COMPARE_BEFORE
    assert sorted((i.pair, n) for n, i in INSTRUCTIONS.items() if i.pair is not None) == \
        list(enumerate(_PAIR_BEFORE))
    assert {n: i.cuda for n, i in INSTRUCTIONS.items() if i.cuda} == _CUDA_EXPRESSIONS_BEFORE
    assert CUDA_OPS == set(_CUDA_EXPRESSIONS_BEFORE)


def test_opcodes_match_the_evaluator_enum():
    header = (pathlib.Path(__file__).resolve().parents[2] / "ptcore" / "_ops" / "kernels" /
              "include" / "ptc_fused.h").read_text()
    enum = header[header.index("enum {"):header.index("PF_PAIR0")]
    names = re.findall(r"\bPF_([A-Z0-9_]+)", enum)
    assert len(names) == len(INSTRUCTIONS) == PAIR0
    for name, ins in zip(names, INSTRUCTIONS.values()):       # PF_MAX is maximum, PF_RECIP ...
        assert name.rstrip("_").lower()[:3] == ins.name[:3], (name, ins.name)


def test_aliases_come_from_the_declarations():
    for name, op in _ALIASES_BEFORE.items():
        if op is not None:
            assert same_call_as(name) == op, name
        else:
            assert same_call_as(name) not in INSTRUCTIONS, name


def test_cuda_nodes_keep_their_ops():
    for name in _CUDA_NODE_OPS_BEFORE:
        assert _cuda_node(name), name
    for name in ("square", "rsqrt", "reciprocal", "silu", "gelu", "where", "clamp", "sin"):
        assert not _cuda_node(name), name
