"""Tests for ptcore._tensor_str: output must match PyTorch's tensor repr.

Two groups:

* ``TestAgainstTorch`` (and friends) drive ``_tensor_str._str`` with real
  ``torch.Tensor`` objects (``_lib=torch``) and compare with ``repr()`` of the
  same tensor; they need only torch and the module file itself (loaded by
  path, so the ptcore package is never imported).
* ``TestPtcoreRepr`` builds ptcore tensors from the same NumPy data and
  compares ``repr(pt)`` with ``repr(torch_t).replace("torch.", "ptcore.")``;
  it is skipped until ptcore is importable and has ``from_numpy``.
"""

import importlib
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

try:
    import hypothesis
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover
    hypothesis = None


def _load_module():
    path = pathlib.Path(__file__).resolve().parents[1] / "ptcore" / "_tensor_str.py"
    name = "_ptcore_tensor_str_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ts = _load_module()


@pytest.fixture(autouse=True)
def _restore_defaults():
    ts.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    yield
    ts.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def both_printoptions(**kwargs):
    ts.set_printoptions(**kwargs)
    torch.set_printoptions(**kwargs)


# --------------------------------------------------------------------------
# shared case data: (numpy array, dtype name); bfloat16 data is given as
# float32 and cast after conversion
# --------------------------------------------------------------------------

ALL_DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]

_NP_OF = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "float16": np.float16,
    "bfloat16": np.float32, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128,
}


def _rng(seed=0):
    return np.random.default_rng(seed)


def _sample(dtype, shape, seed=0, scale=1.0):
    """Deterministic data of a dtype and shape."""
    rng = _rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in ("uint8",):
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype.startswith("int"):
        info = np.iinfo(_NP_OF[dtype])
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi, size=shape).astype(_NP_OF[dtype])
    if dtype.startswith("complex"):
        vals = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return (vals * scale).astype(_NP_OF[dtype])
    return (rng.standard_normal(shape) * scale).astype(_NP_OF[dtype])


def make_cases():
    cases = {}
    for dt in ALL_DTYPES:
        cases[f"{dt}-0d"] = (_sample(dt, ()), dt)
        cases[f"{dt}-1d"] = (_sample(dt, (5,), seed=1), dt)
        cases[f"{dt}-2d"] = (_sample(dt, (3, 4), seed=2), dt)
        cases[f"{dt}-3d"] = (_sample(dt, (2, 3, 4), seed=3), dt)
        cases[f"{dt}-4d"] = (_sample(dt, (2, 2, 3, 2), seed=4), dt)
        cases[f"{dt}-large"] = (_sample(dt, (40, 50), seed=5), dt)
        cases[f"{dt}-longrow"] = (_sample(dt, (37,), seed=6), dt)
        for shape in [(0,), (0, 3), (2, 0, 4)]:
            cases[f"{dt}-empty{shape}"] = (np.zeros(shape, _NP_OF[dt]), dt)

    f32 = lambda *v: np.array(v, np.float32)  # noqa: E731
    f64 = lambda *v: np.array(v, np.float64)  # noqa: E731
    nan, inf = math.nan, math.inf
    extra = {
        # float data
        "floats-1d": (f32(1.5, -2.25, 3.125), "float32"),
        "ints-in-float": (f32(1, 2, 3), "float32"),
        "ints-in-float-neg": (f32(-1, 100, 7), "float32"),
        "ints-in-float-big": (f32(1e5, 2), "float32"),
        "ints-in-float-sci": (f32(123456789, 1), "float32"),
        "ints-in-float16": (np.array([1, 2, 2048], np.float16), "float16"),
        "sci-small": (f32(1e-5, 1), "float32"),
        "sci-big": (f32(1e10, 1), "float32"),
        "sci-ratio": (f32(1, 2000.5), "float32"),
        "sci-ratio-edge": (f32(1, 1000), "float32"),
        "sci-min-edge": (f64(1e-4, 2e-4), "float64"),
        "sci-below-min": (f64(9.9e-5, 2e-4), "float64"),
        "sci-max-edge": (f64(1e8), "float64"),
        "sci-above-max": (f64(1.5e8), "float64"),
        "sci-mixed-magnitudes": (f64(1e-300, 1e300, -3.5, 0), "float64"),
        "sci-3digit-exp": (f64(1.5e-120, 2.0, -7e150), "float64"),
        "float32-subnormal": (f32(1e-40, 1), "float32"),
        "float32-max": (f32(3.4e38, -3.4e38, 1), "float32"),
        "float16-extremes": (np.array([65504, 6e-8, -1], np.float16), "float16"),
        "bfloat16-values": (f32(1.1, 300.7, -2.5), "bfloat16"),
        "bfloat16-big": (f32(3e38, 1), "bfloat16"),
        "rounding-9999": (f32(9.99996, 1.5), "float32"),
        "small-not-sci": (f32(0.001, 0.5), "float32"),
        "nan": (f32(nan), "float32"),
        "inf": (f32(inf, -inf), "float32"),
        "nan-float": (f32(nan, 1.5), "float32"),
        "nan-int": (f32(nan, 1), "float32"),
        "inf-sci": (f32(inf, 1e-5, -inf, nan), "float32"),
        "negzero": (f32(-0.0), "float32"),
        "negzero-zero": (f32(-0.0, 0.0), "float32"),
        "negzero-float": (f32(-0.0, 1.5), "float32"),
        "zeros": (np.zeros((2, 3), np.float32), "float32"),
        "all-nan-2d": (np.full((2, 2), nan, np.float32), "float32"),
        "neg-rounds-to-zero": (f32(-0.00004, 1.0, 2.0), "float32"),
        "scalar-sci": (np.array(1e-7, np.float32), "float32"),
        "scalar-nan": (np.array(nan, np.float64), "float64"),
        "scalar-negzero": (np.array(-0.0, np.float32), "float32"),
        "scalar-int-float": (np.array(3.0, np.float32), "float32"),
        # complex
        "complex-basic": (np.array([1 + 2j, -3.5 - 0.25j], np.complex64), "complex64"),
        "complex-negzero-imag": (np.array([complex(1, -0.0), complex(-0.0, 0.0)],
                                          np.complex128), "complex128"),
        "complex-sci-imag": (np.array([1 + 1e-5j, 2 + 1e5j], np.complex64), "complex64"),
        "complex-int-real": (np.array([1 + 0.5j, 2 - 0.5j], np.complex64), "complex64"),
        "complex-nan-inf": (np.array([complex(nan, 1), complex(1, inf)],
                                     np.complex128), "complex128"),
        "complex-scalar": (np.array(1 - 2j, np.complex128), "complex128"),
        "complex-large": (_sample("complex64", (30, 40), seed=9), "complex64"),
        "complex-longrow": (_sample("complex128", (25,), seed=10, scale=100), "complex128"),
        # integers / bool
        "int64-extremes": (np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0],
                                    np.int64), "int64"),
        "int32-extremes": (np.array([2**31 - 1, -2**31], np.int32), "int32"),
        "int16-extremes": (np.array([32767, -32768], np.int16), "int16"),
        "int8-extremes": (np.array([127, -128, 0], np.int8), "int8"),
        "uint8-extremes": (np.array([0, 255, 7], np.uint8), "uint8"),
        "int64-huge-row": (np.arange(60, dtype=np.int64) * 10**15, "int64"),
        "bool-all-true": (np.ones((2, 3), np.bool_), "bool"),
        "bool-scalar": (np.array(False), "bool"),
        # shapes / summarisation
        "arange-1001": (np.arange(1001, dtype=np.float32), "float32"),
        "arange-1000": (np.arange(1000, dtype=np.float32), "float32"),
        "arange-int-2000": (np.arange(2000, dtype=np.int64), "int64"),
        "row-2000": (_sample("float32", (1, 2000), seed=11), "float32"),
        "col-2000": (_sample("float32", (2000, 1), seed=12), "float32"),
        "cube-20": (_sample("float32", (20, 20, 20), seed=13), "float32"),
        "4d-large": (_sample("float64", (5, 6, 7, 8), seed=14), "float64"),
        "3d-large-short-mid": (_sample("float32", (100, 2, 10), seed=15), "float32"),
        "large-sci-hidden": (np.concatenate([np.ones(3), np.full(1000, 1e-9), np.ones(3)]
                                            ).astype(np.float32), "float32"),
        "longrow-float": (_sample("float32", (100,), seed=16, scale=1000), "float32"),
        "longrow-2d": (_sample("float64", (3, 30), seed=17), "float64"),
        "longrow-3d": (_sample("float32", (2, 2, 25), seed=18), "float32"),
        "longrow-int": (np.arange(100, dtype=np.int64), "int64"),
        "scaled-1e-6": (_sample("float32", (3, 3), seed=19, scale=1e-6), "float32"),
        "scaled-1e9": (_sample("float64", (3, 3), seed=20, scale=1e9), "float64"),
        "empty-0x0": (np.zeros((0, 0), np.float32), "float32"),
        "empty-3x0": (np.zeros((3, 0), np.int64), "int64"),
    }
    cases.update(extra)
    return cases


CASES = make_cases()

# views applied identically to torch and ptcore tensors
VIEWS = {
    "transpose": (lambda t: t.transpose(0, 1), (np.float32, (4, 6))),
    "step-slice": (lambda t: t[::2], (np.float32, (9,))),
    "col-slice": (lambda t: t[:, 1:3], (np.float64, (3, 5))),
    "permute": (lambda t: t.permute(2, 0, 1), (np.float32, (2, 3, 4))),
    "transpose-large": (lambda t: t.transpose(0, 1), (np.float32, (60, 70))),
    "slice-large": (lambda t: t[5:, ::3], (np.float32, (100, 90))),
    "transpose-int": (lambda t: t.transpose(0, 1), (np.int64, (3, 5))),
    "transpose-complex": (lambda t: t.transpose(0, 1), (np.complex64, (2, 3))),
}

OPTIONS = {
    "precision2": {"precision": 2},
    "precision0": {"precision": 0},
    "precision8": {"precision": 8},
    "threshold5": {"threshold": 5},
    "edgeitems1": {"edgeitems": 1, "threshold": 10},
    "edgeitems0": {"edgeitems": 0},
    "edgeitems0-summarised": {"edgeitems": 0, "threshold": 3},
    "linewidth40": {"linewidth": 40},
    "linewidth10": {"linewidth": 10},
    "sci-true": {"sci_mode": True},
    "sci-false": {"sci_mode": False},
    "profile-full": {"profile": "full"},
    "profile-short": {"profile": "short"},
    "profile-short-precision": {"profile": "short", "precision": 6},
}

OPTION_CASES = [
    "float32-1d", "float32-2d", "float32-3d", "float64-large", "int64-large",
    "complex64-2d", "sci-small", "sci-mixed-magnitudes", "ints-in-float",
    "zeros", "nan-float", "float32-longrow", "arange-1001", "bool-2d",
    "float32-0d", "float32-empty(0, 3)", "bfloat16-2d", "complex-large",
    "negzero-float",
]


def torch_from(arr, dtype):
    t = torch.from_numpy(np.array(arr, copy=True))
    if dtype == "bfloat16":
        t = t.to(torch.bfloat16)
    return t


def check_torch(t):
    expected = repr(t)
    got = ts._str(t, _lib=torch)
    assert got == expected, f"\n--- got:\n{got}\n--- expected:\n{expected}"
    return got


# --------------------------------------------------------------------------
# group 1: against torch tensors
# --------------------------------------------------------------------------

class TestAgainstTorch:
    @pytest.mark.parametrize("name", sorted(CASES))
    def test_case(self, name):
        arr, dtype = CASES[name]
        check_torch(torch_from(arr, dtype))

    @pytest.mark.parametrize("name", sorted(VIEWS))
    def test_non_contiguous(self, name):
        view, (np_dtype, shape) = VIEWS[name]
        arr = _rng(3).standard_normal(shape)
        if np.issubdtype(np_dtype, np.complexfloating):
            arr = arr + 1j * _rng(4).standard_normal(shape)
        t = view(torch.from_numpy((arr * 10).astype(np_dtype)))
        assert not t.is_contiguous()
        check_torch(t)

    def test_bfloat16_non_contiguous_large(self):
        t = torch.randn(50, 60, generator=torch.Generator().manual_seed(0))
        check_torch(t.to(torch.bfloat16).t())

    def test_conj_and_neg_views(self):
        z = torch.tensor([1 + 2j, -3 - 4j])
        check_torch(z.conj())
        check_torch(z.conj().imag)

    @pytest.mark.parametrize("opt", sorted(OPTIONS))
    @pytest.mark.parametrize("name", OPTION_CASES)
    def test_printoptions(self, opt, name):
        arr, dtype = CASES[name]
        both_printoptions(**OPTIONS[opt])
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        check_torch(torch_from(arr, dtype))

    @pytest.mark.parametrize("name", [
        "float32-2d", "float64-2d", "float64-0d", "complex64-1d", "complex128-1d",
        "float32-empty(0,)", "float64-empty(0,)", "complex128-empty(0, 3)",
        "int64-1d", "bfloat16-1d", "float16-1d", "bool-1d",
    ])
    def test_default_dtype_float64(self, name):
        torch.set_default_dtype(torch.float64)
        arr, dtype = CASES[name]
        check_torch(torch_from(arr, dtype))

    def test_requires_grad_leaf(self):
        check_torch(torch.tensor([1.0, 2.0], requires_grad=True))
        check_torch(torch.tensor(2.5, requires_grad=True))
        check_torch(torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True))

    def test_grad_fn(self):
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        check_torch(a + 1)
        check_torch(a * 2)
        check_torch(a.sum())
        check_torch(a.double().exp())
        check_torch(a[1:])
        check_torch(torch.zeros(0, 2, requires_grad=True) * 2)

    def test_suffix_wrapping(self):
        a = torch.randn(3, 20, dtype=torch.float64,
                        generator=torch.Generator().manual_seed(1), requires_grad=True)
        check_torch(a * 2)
        check_torch(torch.tensor([123456.5, 2.5], dtype=torch.float16))
        both_printoptions(linewidth=30)
        check_torch(torch.tensor([1.5, 2.5], dtype=torch.float64, requires_grad=True) * 3)
        check_torch(torch.zeros(0, 3, dtype=torch.float64))

    def test_parameter(self):
        p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        assert "Parameter containing:\n" + ts._str(p, _lib=torch) == repr(p)

    def test_subclass_prefix(self):
        class MyTensor(torch.Tensor):
            pass

        t = torch.tensor([1.0, 2.0]).as_subclass(MyTensor)
        check_torch(t)

    def test_tensor_contents_hook(self):
        t = torch.tensor([1, 2, 3], dtype=torch.int32)
        assert ts._str(t, tensor_contents="CUSTOM", _lib=torch) == (
            torch._tensor_str._str(t, tensor_contents="CUSTOM")
        )
        assert ts._str(t, tensor_contents="X", _lib=torch) == "tensor(X, dtype=torch.int32)"

    def test_device_suffix(self):
        """A duck-typed stand-in for a CUDA tensor gets the device suffix."""

        class FakeDevice:
            type = "cuda"
            index = 0

            def __str__(self):
                return "cuda:0"

        class FakeCudaTensor:
            def __init__(self, t):
                self._t = t

            def __getattr__(self, name):
                return getattr(self._t, name)

            @property
            def device(self):
                return FakeDevice()

            def detach(self):
                return FakeCudaTensor(self._t.detach())

            def cpu(self):
                return self._t

            def narrow(self, dim, start, length):
                return FakeCudaTensor(self._t.narrow(dim, start, length))

        import types

        lib = types.ModuleType("fakelib")
        for name in ["float16", "bfloat16", "float32", "float64", "complex64",
                     "complex128", "int64", "bool", "get_default_dtype"]:
            setattr(lib, name, getattr(torch, name))
        lib.Tensor = FakeCudaTensor

        base = torch.tensor([1.0, 2.5])
        out = ts._str(FakeCudaTensor(base), _lib=lib)
        assert out == "tensor([1.0000, 2.5000], device='cuda:0')"
        big = torch.arange(3000.0).reshape(30, 100)
        out = ts._str(FakeCudaTensor(big), _lib=lib)
        assert out == repr(big)[:-1] + ", device='cuda:0')"
        half = torch.arange(1500.0).to(torch.bfloat16)
        out = ts._str(FakeCudaTensor(half), _lib=lib)
        assert out == repr(half).replace(", dtype=", ", device='cuda:0', dtype=")


class TestRandom:
    @pytest.mark.parametrize("seed", range(12))
    def test_seeded_floats(self, seed):
        rng = _rng(100 + seed)
        ndim = int(rng.integers(0, 5))
        shape = tuple(int(s) for s in rng.integers(1, 6, size=ndim))
        scale = 10.0 ** rng.integers(-8, 10)
        dtype = ["float16", "bfloat16", "float32", "float64", "complex64"][seed % 5]
        with np.errstate(over="ignore"):  # float16 may overflow to inf: fine
            arr = (rng.standard_normal(shape) * scale).astype(_NP_OF[dtype])
        if dtype == "complex64":
            arr = arr + 1j * (rng.standard_normal(shape) * scale).astype(np.float32)
        if rng.random() < 0.5 and arr.size:
            flat = arr.reshape(-1)
            flat[rng.integers(0, flat.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
        check_torch(torch_from(arr, dtype))

    @pytest.mark.parametrize("seed", range(6))
    def test_seeded_large(self, seed):
        rng = _rng(200 + seed)
        shape = [(1500,), (40, 40), (11, 12, 13), (3, 400), (2, 3, 4, 50), (1001, 1)][seed]
        arr = rng.standard_normal(shape).astype(np.float32)
        arr[tuple(0 for _ in shape)] = 1e-7 * (seed % 2)
        check_torch(torch_from(arr, "float32"))
        check_torch(torch_from(np.rint(arr * 1e4).astype(np.int64), "int64"))

    if hypothesis is not None:
        _float_dtypes = st.sampled_from(["float16", "float32", "float64"])

        @settings(max_examples=250, deadline=None, derandomize=True)
        @given(data=st.data(), dtype=_float_dtypes)
        def test_hypothesis_floats(self, data, dtype):
            np_dtype = np.dtype(_NP_OF[dtype])
            arr = data.draw(hnp.arrays(
                np_dtype,
                hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6),
                elements=st.floats(width=np_dtype.itemsize * 8, allow_nan=True,
                                   allow_infinity=True, allow_subnormal=True),
            ))
            check_torch(torch_from(arr, dtype))

        @settings(max_examples=150, deadline=None, derandomize=True)
        @given(
            data=st.data(),
            dtype=st.sampled_from(["complex64", "complex128", "int64", "int8",
                                   "uint8", "bool", "float32", "bfloat16"]),
            precision=st.integers(0, 8),
            threshold=st.integers(0, 60),
            edgeitems=st.integers(0, 4),
            linewidth=st.integers(5, 120),
            sci_mode=st.sampled_from([None, True, False]),
        )
        def test_hypothesis_options(self, data, dtype, precision, threshold,
                                    edgeitems, linewidth, sci_mode):
            np_dtype = np.dtype(_NP_OF[dtype])
            if np_dtype.kind == "c":
                elements = st.complex_numbers(width=np_dtype.itemsize * 8,
                                              allow_nan=True, allow_infinity=True)
            elif np_dtype.kind == "f":
                elements = st.floats(width=32, allow_nan=True)
            else:
                elements = None
            arr = data.draw(hnp.arrays(
                np_dtype,
                hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9),
                elements=elements,
            ))
            both_printoptions(precision=precision, threshold=threshold,
                              edgeitems=edgeitems, linewidth=linewidth,
                              sci_mode=sci_mode)
            check_torch(torch_from(arr, dtype))


class TestOptionsApi:
    def test_defaults(self):
        assert ts.get_printoptions() == {
            "precision": 4, "threshold": 1000, "edgeitems": 3,
            "linewidth": 80, "sci_mode": None,
        }

    def test_profiles(self):
        ts.set_printoptions(profile="short")
        assert ts.get_printoptions() == {
            "precision": 2, "threshold": 1000, "edgeitems": 2,
            "linewidth": 80, "sci_mode": None,
        }
        ts.set_printoptions(profile="full")
        assert ts.get_printoptions()["threshold"] == math.inf
        ts.set_printoptions(profile="default", linewidth=100)
        assert ts.get_printoptions()["linewidth"] == 100
        assert ts.get_printoptions()["threshold"] == 1000

    def test_sci_mode_reset_by_any_call(self):
        ts.set_printoptions(sci_mode=True)
        assert ts.PRINT_OPTS.sci_mode is True
        ts.set_printoptions(precision=3)
        assert ts.PRINT_OPTS.sci_mode is None

    def test_context_manager(self):
        before = ts.get_printoptions()
        with ts.printoptions(precision=2, sci_mode=False):
            assert ts.get_printoptions()["precision"] == 2
            assert ts._str(torch.tensor([1.23456]), _lib=torch) == "tensor([1.23])"
        assert ts.get_printoptions() == before
        with pytest.raises(ZeroDivisionError):
            with ts.printoptions(threshold=1):
                1 / 0
        assert ts.get_printoptions() == before

    def test_matches_torch_after_sequence(self):
        for kwargs in [{"precision": 1}, {"profile": "short"}, {"sci_mode": True},
                       {"edgeitems": 5, "profile": "full"}, {"profile": "bogus"}]:
            both_printoptions(**kwargs)
            assert ts.get_printoptions() == torch._tensor_str.get_printoptions()

    @pytest.mark.parametrize("width", range(60, 90))
    def test_dtype_suffix_wraps_like_torch(self, width):
        """The longer library name must not move line breaks."""
        text = "tensor([[1., 2.],\n        [" + "3" * (width - 10) + "]]"
        for suffixes in (["dtype=torch.float64"], ["dtype=torch.int32", "requires_grad=True"]):
            ours = [s.replace("torch.", "ptcore.") for s in suffixes]
            expected = ts._join_suffixes(text, suffixes, 7).replace("torch.", "ptcore.")
            assert ts._join_suffixes(text, ours, 7) == expected

    def test_no_ptcore_import_at_module_level(self):
        src = (pathlib.Path(ts.__file__)).read_text()
        top_level = [line for line in src.splitlines()
                     if line.startswith(("import ", "from "))]
        assert not any("ptcore" in line for line in top_level)


# --------------------------------------------------------------------------
# group 2: against ptcore tensors (once the core exists)
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ptcore():
    mod = pytest.importorskip("ptcore")
    if not hasattr(mod, "from_numpy"):
        pytest.skip("ptcore.from_numpy not available yet")
    return mod


@pytest.fixture
def pt_printoptions(ptcore):
    setter = getattr(ptcore, "set_printoptions", None)
    if setter is None:
        setter = importlib.import_module("ptcore._tensor_str").set_printoptions

    def apply(**kwargs):
        setter(**kwargs)
        torch.set_printoptions(**kwargs)

    yield apply
    setter(profile="default")


def pt_from(ptcore, arr, dtype):
    if dtype == "bfloat16":
        return ptcore.from_numpy(np.array(arr, np.float32, copy=True)).to(ptcore.bfloat16)
    return ptcore.from_numpy(np.array(arr, copy=True))


def check_pt(pt_tensor, torch_tensor):
    expected = repr(torch_tensor).replace("torch.", "ptcore.")
    got = repr(pt_tensor)
    assert got == expected, f"\n--- got:\n{got}\n--- expected:\n{expected}"


class TestPtcoreRepr:
    @pytest.mark.parametrize("name", sorted(CASES))
    def test_case(self, ptcore, name):
        arr, dtype = CASES[name]
        check_pt(pt_from(ptcore, arr, dtype), torch_from(arr, dtype))

    @pytest.mark.parametrize("name", sorted(VIEWS))
    def test_non_contiguous(self, ptcore, name):
        view, (np_dtype, shape) = VIEWS[name]
        arr = _rng(3).standard_normal(shape)
        if np.issubdtype(np_dtype, np.complexfloating):
            arr = arr + 1j * _rng(4).standard_normal(shape)
        arr = (arr * 10).astype(np_dtype)
        check_pt(view(ptcore.from_numpy(arr.copy())), view(torch.from_numpy(arr.copy())))

    @pytest.mark.parametrize("opt", sorted(OPTIONS))
    @pytest.mark.parametrize("name", OPTION_CASES)
    def test_printoptions(self, ptcore, pt_printoptions, opt, name):
        arr, dtype = CASES[name]
        pt_printoptions(**OPTIONS[opt])
        check_pt(pt_from(ptcore, arr, dtype), torch_from(arr, dtype))

    @pytest.mark.parametrize("name", [
        "float32-2d", "float64-2d", "complex64-1d", "complex128-1d",
        "float32-empty(0,)", "float64-empty(0,)", "int64-1d",
    ])
    def test_default_dtype_float64(self, ptcore, name):
        arr, dtype = CASES[name]
        old = ptcore.get_default_dtype()
        ptcore.set_default_dtype(ptcore.float64)
        torch.set_default_dtype(torch.float64)
        try:
            check_pt(pt_from(ptcore, arr, dtype), torch_from(arr, dtype))
        finally:
            ptcore.set_default_dtype(old)

    def test_tensor_factory(self, ptcore):
        for data in ([1.5, -2.0], [[1, 2], [3, 4]], [True, False], 3.0, []):
            check_pt(ptcore.tensor(data), torch.tensor(data))

    def test_autograd_suffixes(self, ptcore):
        arr = np.array([1.0, 2.0, 3.0], np.float32)
        a_pt = ptcore.from_numpy(arr.copy())
        a_pt.requires_grad_()
        a_t = torch.from_numpy(arr.copy()).requires_grad_()
        check_pt(a_pt, a_t)
        if not hasattr(ptcore, "autograd"):
            pytest.skip("grad_fn suffixes need ptcore.autograd (not built yet)")
        check_pt(a_pt + 1, a_t + 1)
        check_pt(a_pt * 2, a_t * 2)
        check_pt((a_pt * 2).sum(), (a_t * 2).sum())

    def test_lazy_lib_default(self, ptcore):
        mod = importlib.import_module("ptcore._tensor_str")
        t = ptcore.from_numpy(np.array([1.0, 2.0], np.float64))
        assert mod._str(t) == "tensor([1., 2.], dtype=ptcore.float64)"
