"""Random sampling: seeding and generator state, the sampling functions and
in-place fills.  ptcore's generator differs from torch's, so values are
checked statistically (fixed seeds: deterministic, with bounds that a real
defect fails), and shapes, dtypes and error classes against torch."""
import itertools
import math

import numpy as np
import pytest

import ptcore

stats = pytest.importorskip("scipy.stats")

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

P_MIN = 1e-4      # p-value floor for goodness-of-fit tests (fixed seeds: deterministic)


@pytest.fixture(autouse=True)
def restore_rng():
    state = ptcore.get_rng_state()
    t_state = torch.get_rng_state() if torch is not None else None
    yield
    ptcore.set_rng_state(state)
    if torch is not None:
        torch.set_rng_state(t_state)


def name_of(dt):
    return str(dt).split(".", 1)[1]


def np_of(t):
    if t.dtype is ptcore.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


def from_np(a, dtype=None):
    t = ptcore.from_numpy(np.ascontiguousarray(a))
    return t if dtype is None else t.to(dtype)


def same_error(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as pe:
        fn(ptcore)
    assert isinstance(pe.value, te.type), (
        f"torch raised {te.type.__name__}({te.value}), ptcore raised "
        f"{type(pe.value).__name__}({pe.value})")


def chisquare_uniform(values, categories):
    counts = np.array([(values == c).sum() for c in categories])
    assert counts.sum() == values.size, "values outside the expected categories"
    return stats.chisquare(counts).pvalue


def binom_ok(k, n, p, z=5.0):
    """k successes of n plausible for probability p (|z| < 5)."""
    sd = math.sqrt(n * p * (1 - p))
    return abs(k - n * p) <= z * sd + 1e-9


# ---------------------------------------------------------------------------
# seeding and state
# ---------------------------------------------------------------------------

SAMPLERS = {
    "rand": lambda g=None: ptcore.rand(257, generator=g),
    "randn": lambda g=None: ptcore.randn(3, 85, generator=g),
    "randint": lambda g=None: ptcore.randint(-50, 50, (300,), generator=g),
    "randperm": lambda g=None: ptcore.randperm(200, generator=g),
    "normal": lambda g=None: ptcore.normal(2.0, 3.0, (100,), generator=g),
    "normal_tensor": lambda g=None: ptcore.normal(ptcore.zeros(50), ptcore.ones(50), generator=g),
    "bernoulli": lambda g=None: ptcore.bernoulli(ptcore.full((300,), 0.5), generator=g),
    "multinomial": lambda g=None: ptcore.multinomial(ptcore.ones(3, 20), 10, generator=g),
    "multinomial_repl": lambda g=None: ptcore.multinomial(ptcore.ones(20), 50, True, generator=g),
    "uniform_": lambda g=None: ptcore.empty(100, dtype=ptcore.float64).uniform_(-1, 1, generator=g),
    "normal_": lambda g=None: ptcore.empty(100).normal_(generator=g),
    "random_": lambda g=None: ptcore.empty(100, dtype=ptcore.int32).random_(generator=g),
    "bernoulli_": lambda g=None: ptcore.empty(100).bernoulli_(0.3, generator=g),
    "exponential_": lambda g=None: ptcore.empty(100).exponential_(generator=g),
    "rand_float16": lambda g=None: ptcore.rand(100, dtype=ptcore.float16, generator=g),
    "randn_complex": lambda g=None: ptcore.randn(100, dtype=ptcore.complex64, generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproduces_and_streams_advance(name):
    f = SAMPLERS[name]
    ptcore.manual_seed(1234)
    a = np_of(f())
    a2 = np_of(f())
    ptcore.manual_seed(1234)
    b = np_of(f())
    b2 = np_of(f())
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a, a2), "consecutive draws repeated"
    ptcore.manual_seed(1235)
    c = np_of(f())
    assert not np.array_equal(a, c), "different seeds gave the same draw"


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generator_objects_are_independent_of_the_default(name):
    f = SAMPLERS[name]
    g1 = ptcore.Generator().manual_seed(99)
    g2 = ptcore.Generator().manual_seed(99)
    before = ptcore.get_rng_state().tolist()
    x = np_of(f(g1))
    assert ptcore.get_rng_state().tolist() == before, "default generator was advanced"
    np.testing.assert_array_equal(np_of(f(g2)), x)
    ptcore.manual_seed(99)
    np.testing.assert_array_equal(np_of(f()), x)   # same seed -> same stream as the default


def test_interleaved_generators_give_separate_streams():
    g1 = ptcore.Generator().manual_seed(1)
    g2 = ptcore.Generator().manual_seed(2)
    a = [ptcore.rand(10, generator=g1).tolist() for _ in range(3)]
    b = [ptcore.rand(10, generator=g2).tolist() for _ in range(3)]
    h1 = ptcore.Generator().manual_seed(1)
    h2 = ptcore.Generator().manual_seed(2)
    inter = []
    for _ in range(3):
        inter.append((ptcore.rand(10, generator=h1).tolist(), ptcore.rand(10, generator=h2).tolist()))
    assert [x for x, _ in inter] == a
    assert [y for _, y in inter] == b
    assert a != b


def test_manual_seed_and_initial_seed():
    g = ptcore.manual_seed(42)
    assert g is ptcore.default_generator
    assert isinstance(g, ptcore.Generator)
    assert ptcore.initial_seed() == 42
    ptcore.manual_seed(-1)
    assert ptcore.initial_seed() == 2 ** 64 - 1            # as torch
    ptcore.manual_seed(np.int64(7))
    assert ptcore.initial_seed() == 7
    g = ptcore.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert g.device == ptcore.device("cpu")


@needs_torch
def test_default_seed_of_a_new_generator_matches_torch():
    assert ptcore.Generator().initial_seed() == torch.Generator().initial_seed()


@needs_torch
@pytest.mark.parametrize("seed", [0, 1, 2 ** 63, 2 ** 64 - 1, -5, -2 ** 63])
def test_manual_seed_values_match_torch(seed):
    assert ptcore.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()


@needs_torch
@pytest.mark.parametrize("seed", [2 ** 64, -2 ** 63 - 1, 1.5, "7", None])
def test_manual_seed_bad_values_match_torch(seed):
    try:
        exp = torch.Generator().manual_seed(seed).initial_seed()
    except Exception as e:
        with pytest.raises(type(e)):
            ptcore.Generator().manual_seed(seed)
        return
    assert ptcore.Generator().manual_seed(seed).initial_seed() == exp


def test_seed_is_nondeterministic_and_sets_initial_seed():
    s1 = ptcore.seed()
    assert isinstance(s1, int) and 0 <= s1 < 2 ** 64
    assert ptcore.initial_seed() == s1
    a = ptcore.rand(20).tolist()
    s2 = ptcore.seed()
    assert s2 != s1
    assert ptcore.rand(20).tolist() != a
    g = ptcore.Generator()
    s3 = g.seed()
    assert g.initial_seed() == s3


def test_get_set_rng_state_reproduces():
    ptcore.manual_seed(7)
    ptcore.rand(13)                                  # move off offset 0
    state = ptcore.get_rng_state()
    assert isinstance(state, ptcore.Tensor) and state.dtype is ptcore.uint8 and state.dim() == 1
    a = ptcore.randn(100).tolist()
    b = ptcore.randint(0, 1000, (50,)).tolist()
    ptcore.set_rng_state(state)
    assert ptcore.randn(100).tolist() == a
    assert ptcore.randint(0, 1000, (50,)).tolist() == b
    # the returned state is a snapshot, not a live view
    s2 = ptcore.get_rng_state()
    ptcore.rand(5)
    assert ptcore.get_rng_state().tolist() != s2.tolist()


def test_generator_get_set_state():
    g = ptcore.Generator().manual_seed(3)
    ptcore.rand(7, generator=g)
    st = g.get_state()
    x = ptcore.rand(30, generator=g).tolist()
    h = ptcore.Generator()
    assert h.set_state(st) is h
    assert ptcore.rand(30, generator=h).tolist() == x
    assert h.initial_seed() == 3
    g.set_state(st)
    assert ptcore.rand(30, generator=g).tolist() == x


def test_set_state_errors():
    g = ptcore.Generator()
    with pytest.raises(TypeError):
        g.set_state(ptcore.zeros(16))                       # not uint8
    with pytest.raises(TypeError):
        g.set_state([0] * 16)
    with pytest.raises(RuntimeError):
        g.set_state(ptcore.zeros(3, dtype=ptcore.uint8))    # wrong size
    with pytest.raises(TypeError):
        ptcore.rand(2, generator=3)
    if torch is not None:
        with pytest.raises(TypeError):
            torch.Generator().set_state(torch.zeros(16))
        with pytest.raises(RuntimeError):
            torch.Generator().set_state(torch.zeros(3, dtype=torch.uint8))



def _bytes_of(state):
    return bytes(np.asarray(state.numpy() if hasattr(state, "numpy") else state).tobytes())


@needs_torch
def test_cpu_state_has_torchs_layout_and_torch_takes_it():
    # a checkpoint's get_rng_state() goes back to the other library's set_rng_state
    # (Hugging Face Trainer resumes with torch.random.set_rng_state)
    ptcore.manual_seed(1234)
    ptcore.rand(9)
    st = ptcore.get_rng_state()
    assert st.dtype is ptcore.uint8 and st.numel() == torch.get_rng_state().numel() == 5056
    t = torch.Generator()
    t.set_state(torch.from_numpy(st.numpy().copy()))
    want = torch.Generator().manual_seed(1234)
    assert torch.rand(5, generator=t).tolist() == torch.rand(5, generator=want).tolist()
    # and back in ptcore the stream goes on where it was
    x = ptcore.rand(6).tolist()
    ptcore.set_rng_state(st)
    assert ptcore.rand(6).tolist() == x


@needs_torch
def test_cpu_generator_takes_torchs_states():
    torch.manual_seed(77)
    fresh = torch.get_rng_state()
    g = ptcore.Generator().set_state(ptcore.from_numpy(fresh.numpy().copy()))
    assert g.initial_seed() == 77
    # torch's state right after manual_seed(s): ptcore's stream after manual_seed(s)
    assert ptcore.rand(8, generator=g).tolist() == \
        ptcore.rand(8, generator=ptcore.Generator().manual_seed(77)).tolist()
    torch.randn(5)          # an advanced engine with a cached normal sample
    moved = ptcore.from_numpy(torch.get_rng_state().numpy().copy())
    a = ptcore.rand(8, generator=ptcore.Generator().set_state(moved)).tolist()
    assert ptcore.rand(8, generator=ptcore.Generator().set_state(moved)).tolist() == a
    assert a != ptcore.rand(8, generator=ptcore.Generator().manual_seed(77)).tolist()
    # ptcore's earlier 16 bytes (seed, offset)
    old = ptcore.from_numpy(np.frombuffer((5).to_bytes(8, "little") + (3).to_bytes(8, "little"),
                                          dtype=np.uint8).copy())
    g = ptcore.Generator().set_state(old)
    assert g.initial_seed() == 5 and g._offset == 3


@needs_torch
@pytest.mark.parametrize("make", ["size", "legacy_size", "zeros", "left", "next"])
def test_cpu_state_refused_as_torch_refuses_it(make):
    raw = bytearray(_bytes_of(torch.get_rng_state()))
    if make == "size":
        raw = raw[:100]
    elif make == "legacy_size":
        raw = raw[:5048]
    elif make == "zeros":
        raw = bytearray(len(raw))
    elif make == "left":
        raw[8:12] = (625).to_bytes(4, "little")
    else:
        raw[16:24] = (700).to_bytes(8, "little")
    with pytest.raises(RuntimeError) as t_err:
        torch.set_rng_state(torch.frombuffer(bytearray(raw), dtype=torch.uint8))
    with pytest.raises(RuntimeError) as p_err:
        ptcore.set_rng_state(ptcore.from_numpy(np.frombuffer(bytes(raw), dtype=np.uint8).copy()))
    assert str(p_err.value) == str(t_err.value).split("\n")[0]


@needs_torch
def test_rng_state_in_a_checkpoint_read_by_torch(tmp_path):
    ptcore.manual_seed(5)
    ptcore.save({"cpu": ptcore.get_rng_state()}, tmp_path / "rng_state.pth")
    ck = torch.load(tmp_path / "rng_state.pth", weights_only=True)
    torch.random.set_rng_state(ck["cpu"])
    torch.manual_seed(5)
    assert ck["cpu"].numel() == 5056


# ---------------------------------------------------------------------------
# shapes and dtypes vs torch
# ---------------------------------------------------------------------------

SHAPES = {
    "rand": lambda L: L.rand(2, 3),
    "rand_tuple": lambda L: L.rand((2, 3)),
    "rand_0d": lambda L: L.rand(()),
    "rand_empty": lambda L: L.rand(0, 4),
    "rand_f64": lambda L: L.rand(3, dtype=L.float64),
    "rand_f16": lambda L: L.rand(3, dtype=L.float16),
    "rand_bf16": lambda L: L.rand(3, dtype=L.bfloat16),
    "rand_c64": lambda L: L.rand(3, dtype=L.complex64),
    "rand_grad": lambda L: L.rand(2, requires_grad=True),
    "rand_size_kw": lambda L: L.rand(size=(2, 2)),
    "randn": lambda L: L.randn(4, 1, 2),
    "randn_c128": lambda L: L.randn(2, dtype=L.complex128),
    "randn_size_kw": lambda L: L.randn(size=(3,)),
    "randint_high": lambda L: L.randint(10, (3, 2)),
    "randint_low_high": lambda L: L.randint(3, 10, (4,)),
    "randint_kw": lambda L: L.randint(low=3, high=10, size=(3,)),
    "randint_high_kw": lambda L: L.randint(high=10, size=(3,)),
    "randint_f32": lambda L: L.randint(10, (3,), dtype=L.float32),
    "randint_bool": lambda L: L.randint(2, (3,), dtype=L.bool),
    "randint_u8": lambda L: L.randint(0, 256, (3,), dtype=L.uint8),
    "randint_size_obj": lambda L: L.randint(5, L.Size([2, 2])),
    "randperm": lambda L: L.randperm(5),
    "randperm_0": lambda L: L.randperm(0),
    "randperm_f32": lambda L: L.randperm(5, dtype=L.float32),
    "randperm_i8": lambda L: L.randperm(128, dtype=L.int8),
    "normal_tt": lambda L: L.normal(L.zeros(3), L.ones(3)),
    "normal_tf": lambda L: L.normal(L.zeros(2, 3), 2.0),
    "normal_ft": lambda L: L.normal(1.0, L.ones(3, 1)),
    "normal_ffs": lambda L: L.normal(1.0, 2.0, (2, 3)),
    "normal_ffs_kw": lambda L: L.normal(1.0, 2.0, size=(2, 3)),
    "normal_bcast": lambda L: L.normal(L.zeros(2, 1), L.ones(3)),
    "normal_f64_mean": lambda L: L.normal(L.zeros(3, dtype=L.float64), L.ones(3)),
    "normal_f64_std": lambda L: L.normal(L.zeros(3), L.ones(3, dtype=L.float64)),
    "normal_dtype": lambda L: L.normal(0.0, 1.0, (3,), dtype=L.float64),
    "bernoulli": lambda L: L.bernoulli(L.full((3,), 0.5)),
    "bernoulli_p": lambda L: L.bernoulli(L.zeros(2, 2), 0.5),
    "bernoulli_f64": lambda L: L.bernoulli(L.full((3,), 0.5, dtype=L.float64)),
    "multinomial_1d": lambda L: L.multinomial(L.ones(4), 2),
    "multinomial_2d": lambda L: L.multinomial(L.ones(3, 4), 2),
    "multinomial_repl": lambda L: L.multinomial(L.ones(4), 10, replacement=True),
    "multinomial_f16": lambda L: L.multinomial(L.ones(4, dtype=L.float16), 2),
    "multinomial_f64": lambda L: L.multinomial(L.ones(2, 4, dtype=L.float64), 4),
    "rand_like": lambda L: L.rand_like(L.zeros(2, 3, dtype=L.float64)),
    "randn_like": lambda L: L.randn_like(L.zeros(2, 3, dtype=L.float16)),
    "rand_like_dtype": lambda L: L.rand_like(L.zeros(2), dtype=L.float64),
    "randint_like": lambda L: L.randint_like(L.zeros(2, 3), 10),
    "randint_like_low_high": lambda L: L.randint_like(L.zeros(2, 3, dtype=L.int32), 3, 10),
    "randint_like_high_kw": lambda L: L.randint_like(L.zeros(2), high=10),
    "random_float": lambda L: L.zeros(3).random_(),
    "random_bool": lambda L: L.zeros(3, dtype=L.bool).random_(),
    "random_to_kw": lambda L: L.zeros(3).random_(to=5),
    "uniform_f16": lambda L: L.zeros(3, dtype=L.float16).uniform_(),
    "uniform_c64": lambda L: L.zeros(3, dtype=L.complex64).uniform_(),
    "normal_c64": lambda L: L.zeros(3, dtype=L.complex64).normal_(),
    "bernoulli_int_": lambda L: L.zeros(3, dtype=L.int32).bernoulli_(0.5),
    "bernoulli_bool_": lambda L: L.zeros(3, dtype=L.bool).bernoulli_(0.5),
    "bernoulli_tensor_": lambda L: L.zeros(3).bernoulli_(L.full((3,), 0.5)),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(SHAPES))
def test_shapes_and_dtypes_match_torch(key):
    p, t = SHAPES[key](ptcore), SHAPES[key](torch)
    assert name_of(p.dtype) == name_of(t.dtype)
    assert tuple(p.shape) == tuple(t.shape)
    assert p.requires_grad == t.requires_grad
    assert p.is_contiguous()


ERRORS = {
    "rand_int_dtype": lambda L: L.rand(2, dtype=L.int64),
    "rand_negative": lambda L: L.rand(-1),
    "randn_int_dtype": lambda L: L.randn(2, dtype=L.int32),
    "randint_empty_range": lambda L: L.randint(5, 5, (3,)),
    "randint_no_size": lambda L: L.randint(5),
    "randint_int_size": lambda L: L.randint(0, 3, 5),
    "randint_u8_out_of_range": lambda L: L.randint(0, 300, (3,), dtype=L.uint8),
    "randint_requires_grad": lambda L: L.randint(0, 3, (3,), requires_grad=True),
    "randperm_negative": lambda L: L.randperm(-1),
    "randperm_too_big_for_dtype": lambda L: L.randperm(300, dtype=L.uint8),
    "normal_shape_mismatch": lambda L: L.normal(L.zeros(2), L.ones(3)),
    "normal_int_mean": lambda L: L.normal(L.zeros(3, dtype=L.int64), 1.0),
    "normal_negative_std": lambda L: L.normal(0.0, -1.0, (3,)),
    "normal_negative_std_tensor": lambda L: L.normal(L.zeros(3), L.full((3,), -1.0)),
    "normal_scalar_no_size": lambda L: L.normal(0.0, 1.0),
    "bernoulli_int_input": lambda L: L.bernoulli(L.zeros(3, dtype=L.int64)),
    "bernoulli_p_out_of_range": lambda L: L.bernoulli(L.full((3,), 1.5)),
    "bernoulli_scalar_p_out_of_range": lambda L: L.bernoulli(L.zeros(3), 1.5),
    "bernoulli_list": lambda L: L.bernoulli([0.5]),
    "multinomial_too_many": lambda L: L.multinomial(L.ones(4), 5),
    "multinomial_negative": lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1),
    "multinomial_all_zero": lambda L: L.multinomial(L.zeros(4), 1),
    "multinomial_all_zero_row": lambda L: L.multinomial(L.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    "multinomial_3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial_0d": lambda L: L.multinomial(L.tensor(1.0), 1),
    "multinomial_zero_samples": lambda L: L.multinomial(L.ones(4), 0),
    "multinomial_int": lambda L: L.multinomial(L.ones(4, dtype=L.int64), 1),
    "multinomial_nan": lambda L: L.multinomial(L.tensor([1.0, float("nan")]), 1),
    "multinomial_inf": lambda L: L.multinomial(L.tensor([1.0, float("inf")]), 1),
    "rand_like_int": lambda L: L.rand_like(L.zeros(2, dtype=L.int64)),
    "randn_like_int": lambda L: L.randn_like(L.zeros(2, dtype=L.int64)),
    "uniform_int": lambda L: L.zeros(3, dtype=L.int64).uniform_(),
    "uniform_reversed": lambda L: L.zeros(3).uniform_(2, 1),
    "normal_negative_std_": lambda L: L.zeros(3).normal_(0, -1),
    "normal_int_": lambda L: L.zeros(3, dtype=L.int32).normal_(),
    "random_out_of_range": lambda L: L.zeros(3, dtype=L.uint8).random_(0, 300),
    "random_complex": lambda L: L.zeros(3, dtype=L.complex64).random_(),
    "random_empty_range": lambda L: L.zeros(3).random_(5, 5),
    "exponential_negative": lambda L: L.zeros(3).exponential_(-1.0),
    "exponential_zero": lambda L: L.zeros(3).exponential_(0.0),
    "exponential_int": lambda L: L.zeros(3, dtype=L.int32).exponential_(),
    "exponential_complex": lambda L: L.zeros(3, dtype=L.complex64).exponential_(),
    "bernoulli_out_of_range_": lambda L: L.zeros(3).bernoulli_(1.5),
    "bernoulli_complex_": lambda L: L.zeros(3, dtype=L.complex64).bernoulli_(0.5),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(ERRORS))
def test_errors_match_torch(key):
    same_error(ERRORS[key])


@needs_torch
@pytest.mark.parametrize("probs,replacement", [
    ([-1.0, 1.0], True), ([float("nan"), 1.0], True), ([float("inf"), 1.0], True),
    ([[0.0, 0.0], [-1.0, 1.0]], True), ([[1.0, float("inf")], [-1.0, 1.0]], True),
    ([float("inf"), 1.0], False), ([float("nan"), 1.0], False), ([0.0, 0.0], False)])
def test_multinomial_invalid_messages(probs, replacement):
    """torch checks rows element by element for more than one sample with replacement
    (a NaN fails its ``>= 0`` check), all at once otherwise."""
    msgs = []
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError) as e:
            L.multinomial(L.tensor(probs), 2, replacement)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]


@needs_torch
def test_multinomial_without_replacement_draws_zero_probability_last():
    """Without replacement, once the positive categories are drawn the zero-probability
    ones follow (torch: topk of p / Exp(1) with the zeros tied), in torch's order for
    those ties given the order the positive ones were drawn in; more samples than
    categories still raise."""
    assert ptcore.multinomial(ptcore.tensor([0., 1.]), 2).tolist() == [1, 0]
    assert torch.multinomial(torch.tensor([0., 1.]), 2).tolist() == [1, 0]
    rng = np.random.default_rng(0)
    for trial in range(60):
        cats = int(rng.integers(2, 70))
        npos = int(rng.integers(1, cats))
        p = np.zeros((2, cats), np.float32)
        for row in p:
            row[rng.choice(cats, npos, replace=False)] = rng.random(npos) + 0.1
        n = int(rng.integers(npos + 1, cats + 1))
        got = ptcore.multinomial(ptcore.from_numpy(p), n).tolist()
        for row, drawn in zip(p, got):
            assert set(drawn[:npos]) == set(np.flatnonzero(row).tolist())
            assert len(set(drawn)) == n
            # torch's topk keeps the zeros in the order it gives for these positive ranks
            keys = torch.zeros(cats)
            keys[drawn[:npos]] = torch.arange(npos, 0, -1, dtype=torch.float32)
            assert torch.topk(keys, n).indices.tolist() == drawn
    same_error(lambda L: L.multinomial(L.tensor([0., 1.]), 3))


def test_out_and_requires_grad():
    out = ptcore.empty(0)
    r = ptcore.rand(2, 3, out=out)
    assert r is out and out.shape == (2, 3)
    assert ((np_of(out) >= 0) & (np_of(out) < 1)).all()
    o2 = ptcore.empty(0, dtype=ptcore.int64)
    assert ptcore.randint(0, 5, (7,), out=o2) is o2 and o2.shape == (7,)
    o3 = ptcore.empty(0, dtype=ptcore.int64)
    assert ptcore.randperm(6, out=o3) is o3 and sorted(o3.tolist()) == list(range(6))
    o4 = ptcore.empty(0)
    assert ptcore.normal(0.0, 1.0, (4,), out=o4) is o4 and o4.shape == (4,)
    assert ptcore.randn(3, requires_grad=True).requires_grad
    assert ptcore.rand_like(ptcore.zeros(2), requires_grad=True).requires_grad


# ---------------------------------------------------------------------------
# distributions
# ---------------------------------------------------------------------------

N = 20000


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_rand_is_uniform_on_half_open_unit_interval(dt):
    ptcore.manual_seed(11)
    x = np_of(ptcore.rand(N, dtype=getattr(ptcore, dt))).astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert x.min() < 0.01 and x.max() > 0.99
    # low-precision dtypes are discrete: compare with a tolerance instead of KS
    if dt in ("float32", "float64"):
        assert stats.kstest(x, "uniform").pvalue > P_MIN
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N) + 0.004
    assert abs(x.var() - 1 / 12) < 0.004


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_randn_is_standard_normal(dt):
    ptcore.manual_seed(12)
    x = np_of(ptcore.randn(N, dtype=getattr(ptcore, dt))).astype(np.float64)
    assert np.isfinite(x).all()
    if dt in ("float32", "float64"):
        assert stats.kstest(x, "norm").pvalue > P_MIN
    assert abs(x.mean()) < 5 / math.sqrt(N) + 0.01
    assert abs(x.std() - 1.0) < 0.03


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_randn_and_rand(dt):
    ptcore.manual_seed(13)
    z = np_of(ptcore.randn(N, dtype=getattr(ptcore, dt)))
    # torch: real and imaginary parts are independent N(0, 1/2): E|z|^2 = 1
    for part in (z.real, z.imag):
        assert stats.kstest(part * math.sqrt(2), "norm").pvalue > P_MIN
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.05
    u = np_of(ptcore.rand(N, dtype=getattr(ptcore, dt)))
    for part in (u.real, u.imag):
        assert stats.kstest(part, "uniform").pvalue > P_MIN
    assert abs(np.corrcoef(u.real, u.imag)[0, 1]) < 0.05


@needs_torch
def test_complex_randn_variance_matches_torch():
    p = np_of(ptcore.randn(N, dtype=ptcore.complex64))
    t = torch.randn(N, dtype=torch.complex64).numpy()
    assert abs(p.real.var() - t.real.var()) < 0.05
    assert abs(np.mean(np.abs(p) ** 2) - np.mean(np.abs(t) ** 2)) < 0.05


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (3, 4), (-3, 7), (250, 256)])
def test_randint_is_uniform(low, high):
    ptcore.manual_seed(14)
    x = np_of(ptcore.randint(low, high, (N,)))
    assert x.dtype == np.int64
    assert x.min() >= low and x.max() < high
    if high - low > 1:
        assert chisquare_uniform(x, range(low, high)) > P_MIN
    else:
        assert (x == low).all()


def test_randint_wide_ranges():
    ptcore.manual_seed(15)
    big = np_of(ptcore.randint(0, 2 ** 40, (N,))).astype(np.float64)
    assert big.min() >= 0 and big.max() < 2 ** 40
    assert stats.kstest(big / 2 ** 40, "uniform").pvalue > P_MIN
    full = np_of(ptcore.randint(-2 ** 62, 2 ** 62, (N,))).astype(np.float64)
    assert stats.kstest(full / 2 ** 63 + 0.5, "uniform").pvalue > P_MIN
    # ranges that are not powers of two must not be biased: 3 * 2**60
    odd = np_of(ptcore.randint(0, 3 * 2 ** 60, (N,)))
    assert chisquare_uniform(odd // 2 ** 60, range(3)) > P_MIN


@pytest.mark.parametrize("dt,low,high", [("uint8", 0, 256), ("int8", -128, 128),
                                         ("int16", -1000, 1000), ("int32", -7, 9),
                                         ("float32", -3, 3), ("float64", 0, 100),
                                         ("float16", 0, 2048), ("bool", 0, 2)])
def test_randint_dtypes(dt, low, high):
    ptcore.manual_seed(16)
    t = ptcore.randint(low, high, (N,), dtype=getattr(ptcore, dt))
    assert t.dtype is getattr(ptcore, dt)
    x = np_of(t).astype(np.float64)
    assert (x == np.floor(x)).all()
    assert x.min() >= low and x.max() <= high - 1
    if high - low <= 256:
        assert chisquare_uniform(x, range(low, high)) > P_MIN
    else:
        assert stats.kstest((x - low + np.random.default_rng(0).random(N)) / (high - low),
                            "uniform").pvalue > P_MIN


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000, 100_000])
def test_randperm_is_a_permutation(n):
    ptcore.manual_seed(17)
    p = np_of(ptcore.randperm(n))
    assert p.dtype == np.int64
    assert np.array_equal(np.sort(p), np.arange(n))


def test_randperm_is_uniform_over_permutations():
    g = ptcore.Generator().manual_seed(18)
    perms = [tuple(ptcore.randperm(4, generator=g).tolist()) for _ in range(4800)]
    counts = np.array([perms.count(p) for p in itertools.permutations(range(4))])
    assert counts.sum() == 4800
    assert stats.chisquare(counts).pvalue > P_MIN
    # large n: the position of each value is uniform (first element over 100 bins)
    firsts = np.array([ptcore.randperm(100, generator=g).tolist()[0] for _ in range(3000)])
    assert chisquare_uniform(firsts, range(100)) > P_MIN


def test_normal_scalar_overload():
    ptcore.manual_seed(19)
    x = np_of(ptcore.normal(3.0, 2.0, (N,))).astype(np.float64)
    assert stats.kstest((x - 3.0) / 2.0, "norm").pvalue > P_MIN
    z = np_of(ptcore.normal(5.0, 0.0, (10,)))
    assert (z == 5.0).all()


def test_normal_tensor_mean_tensor_std():
    ptcore.manual_seed(20)
    means = np.repeat([-100.0, 0.0, 100.0], 4000)
    stds = np.tile(np.repeat([0.5, 2.0], 2000), 3)
    x = np_of(ptcore.normal(from_np(means, ptcore.float32), from_np(stds, ptcore.float32)))
    assert x.shape == means.shape
    zs = (x - means) / stds
    assert stats.kstest(zs, "norm").pvalue > P_MIN
    for m in (-100.0, 0.0, 100.0):
        for s in (0.5, 2.0):
            sel = (means == m) & (stds == s)
            assert abs(x[sel].mean() - m) < 6 * s / math.sqrt(sel.sum())
            assert abs(x[sel].std() / s - 1) < 0.1


def test_normal_tensor_mean_scalar_std_and_reverse():
    ptcore.manual_seed(21)
    means = np.linspace(-50, 50, N)
    x = np_of(ptcore.normal(from_np(means, ptcore.float64), 3.0))
    assert x.dtype == np.float64
    assert stats.kstest((x - means) / 3.0, "norm").pvalue > P_MIN
    stds = np.linspace(0.1, 10, N)
    y = np_of(ptcore.normal(-2.0, from_np(stds, ptcore.float64)))
    assert stats.kstest((y + 2.0) / stds, "norm").pvalue > P_MIN
    zero = np_of(ptcore.normal(from_np(np.array([1.0, 2.0])), from_np(np.zeros(2))))
    assert zero.tolist() == [1.0, 2.0]


def test_normal_broadcasts_mean_and_std():
    ptcore.manual_seed(22)
    mean = from_np(np.array([[0.0], [1000.0]]))             # (2, 1)
    std = from_np(np.full(N // 2, 1.0))                     # (N/2,)
    x = np_of(ptcore.normal(mean, std))
    assert x.shape == (2, N // 2)
    assert stats.kstest(x[0], "norm").pvalue > P_MIN
    assert stats.kstest(x[1] - 1000.0, "norm").pvalue > P_MIN


def test_bernoulli_tensor_probabilities():
    ptcore.manual_seed(23)
    p = np.tile([0.0, 0.1, 0.5, 0.9, 1.0], 4000)
    x = np_of(ptcore.bernoulli(from_np(p, ptcore.float32)))
    assert x.dtype == np.float32
    assert set(np.unique(x)) <= {0.0, 1.0}
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        sel = p == q
        k = int(x[sel].sum())
        if q in (0.0, 1.0):
            assert k == q * sel.sum()
        else:
            assert binom_ok(k, int(sel.sum()), q)


def test_bernoulli_scalar_p_overload_and_independence():
    ptcore.manual_seed(24)
    x = np_of(ptcore.bernoulli(ptcore.zeros(N, dtype=ptcore.float64), 0.3))
    assert x.dtype == np.float64
    assert binom_ok(int(x.sum()), N, 0.3)
    # consecutive pairs are independent: P(1,1) = 0.09
    pairs = x[: N // 2 * 2].reshape(-1, 2)
    assert binom_ok(int((pairs.sum(axis=1) == 2).sum()), N // 2, 0.09)


@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float64"])
def test_bernoulli_inplace_dtypes(dt):
    ptcore.manual_seed(25)
    t = ptcore.empty(N, dtype=getattr(ptcore, dt))
    assert t.bernoulli_(0.25) is t
    x = np_of(t).astype(np.float64)
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert binom_ok(int(x.sum()), N, 0.25)
    t.bernoulli_(ptcore.full((N,), 0.75))
    assert binom_ok(int(np_of(t).astype(np.float64).sum()), N, 0.75)


def test_multinomial_with_replacement_frequencies():
    ptcore.manual_seed(26)
    probs = np.array([0.1, 0.2, 0.0, 0.3, 0.4])
    s = np_of(ptcore.multinomial(from_np(probs * 10, ptcore.float32), N, replacement=True))
    assert s.shape == (N,) and s.dtype == np.int64
    assert not (s == 2).any(), "a zero-probability category was sampled"
    counts = np.bincount(s, minlength=5)
    nz = probs > 0
    assert stats.chisquare(counts[nz], probs[nz] * N).pvalue > P_MIN


def test_multinomial_without_replacement():
    ptcore.manual_seed(27)
    rows = 6000
    probs = np.array([0.5, 0.25, 0.15, 0.1, 0.0])
    s = np_of(ptcore.multinomial(from_np(np.tile(probs, (rows, 1)), ptcore.float64), 2))
    assert s.shape == (rows, 2)
    assert (s[:, 0] != s[:, 1]).all(), "repeated category without replacement"
    assert not (s == 4).any()
    first = np.bincount(s[:, 0], minlength=5)[:4]
    assert stats.chisquare(first, probs[:4] * rows).pvalue > P_MIN
    # second draw: P(j) = sum_i p_i p_j / (1 - p_i)
    p = probs[:4]
    second_p = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)])
    second = np.bincount(s[:, 1], minlength=5)[:4]
    assert stats.chisquare(second, second_p * rows).pvalue > P_MIN


def test_multinomial_full_permutation_and_rows():
    ptcore.manual_seed(28)
    s = np_of(ptcore.multinomial(ptcore.ones(50, 7), 7))
    assert all(sorted(r) == list(range(7)) for r in s.tolist())
    probs = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    r = np_of(ptcore.multinomial(from_np(probs, ptcore.float32), 100, replacement=True))
    assert (r[0] == 0).all() and (r[1] == 2).all() and (r[2] == 1).all()
    nr = np_of(ptcore.multinomial(from_np(probs, ptcore.float32), 1))
    assert nr[:, 0].tolist() == [0, 2, 1]


def test_rand_like_family():
    ptcore.manual_seed(29)
    base = ptcore.zeros(100, 200, dtype=ptcore.float64)
    r = ptcore.rand_like(base)
    assert r.shape == (100, 200) and r.dtype is ptcore.float64
    assert stats.kstest(np_of(r).ravel(), "uniform").pvalue > P_MIN
    n = ptcore.randn_like(base)
    assert stats.kstest(np_of(n).ravel(), "norm").pvalue > P_MIN
    i = ptcore.randint_like(base, 10)
    x = np_of(i).ravel()
    assert i.dtype is ptcore.float64 and chisquare_uniform(x, range(10)) > P_MIN
    j = ptcore.randint_like(ptcore.zeros(N, dtype=ptcore.int16), -3, 4)
    assert j.dtype is ptcore.int16 and chisquare_uniform(np_of(j), range(-3, 4)) > P_MIN
    tr = ptcore.rand_like(base.t())
    assert tr.stride() == (1, 200)                 # keeps the dense layout, like torch


# ---------------------------------------------------------------------------
# in-place fills
# ---------------------------------------------------------------------------

def test_uniform_inplace():
    ptcore.manual_seed(30)
    t = ptcore.empty(N, dtype=ptcore.float64)
    v0 = t._version
    assert t.uniform_(-2.0, 5.0) is t
    assert t._version > v0
    x = np_of(t)
    assert x.min() >= -2.0 and x.max() < 5.0
    assert stats.kstest((x + 2.0) / 7.0, "uniform").pvalue > P_MIN
    t.uniform_(3.0, 3.0)
    assert (np_of(t) == 3.0).all()


def test_normal_inplace():
    ptcore.manual_seed(31)
    t = ptcore.empty(N)
    assert t.normal_(10.0, 0.5) is t
    assert stats.kstest((np_of(t).astype(np.float64) - 10.0) / 0.5, "norm").pvalue > P_MIN


def test_exponential_inplace():
    ptcore.manual_seed(32)
    for lambd in (0.5, 1.0, 4.0):
        t = ptcore.empty(N, dtype=ptcore.float64)
        assert t.exponential_(lambd) is t
        x = np_of(t)
        assert (x > 0).all()
        assert stats.kstest(x, "expon", args=(0, 1 / lambd)).pvalue > P_MIN
    t32 = ptcore.empty(N).exponential_()
    x32 = np_of(t32).astype(np.float64)
    assert (x32 > 0).all() and np.isfinite(x32).all()
    assert stats.kstest(x32, "expon").pvalue > P_MIN


@pytest.mark.parametrize("dt,expected_high", [("float32", 2 ** 24), ("float64", 2 ** 53),
                                              ("float16", 2 ** 11), ("bfloat16", 2 ** 8),
                                              ("int8", 127), ("uint8", 255), ("int16", 2 ** 15 - 1),
                                              ("bool", 1)])
def test_random_inplace_default_range(dt, expected_high):
    # torch: [0, 2**mantissa] for floats, [0, max] for integers
    ptcore.manual_seed(33)
    t = ptcore.empty(N, dtype=getattr(ptcore, dt))
    assert t.random_() is t
    x = np_of(t).astype(np.float64)
    assert (x == np.floor(x)).all()
    assert x.min() >= 0 and x.max() <= expected_high
    if expected_high <= 255:
        assert chisquare_uniform(x, range(expected_high + 1)) > P_MIN
    else:
        assert x.max() > 0.9 * expected_high and x.mean() > 0.4 * expected_high


def test_random_inplace_ranges():
    ptcore.manual_seed(34)
    t = ptcore.empty(N, dtype=ptcore.int64)
    t.random_(10)
    assert chisquare_uniform(np_of(t), range(10)) > P_MIN
    t.random_(-4, 4)
    assert chisquare_uniform(np_of(t), range(-4, 4)) > P_MIN
    f = ptcore.empty(N).random_(3, 9)
    assert chisquare_uniform(np_of(f), range(3, 9)) > P_MIN
    u = ptcore.empty(N, dtype=ptcore.uint8).random_(0, 256)
    assert chisquare_uniform(np_of(u), range(256)) > P_MIN


@pytest.mark.parametrize("method", ["uniform_", "normal_", "random_", "bernoulli_", "exponential_"])
@pytest.mark.parametrize("layout", ["strided", "transposed", "column"])
def test_inplace_fills_on_non_contiguous_views(method, layout):
    ptcore.manual_seed(35)
    base = ptcore.zeros(200, 100, dtype=ptcore.float64)
    if layout == "strided":
        view = base[:, ::2]
        untouched = np_of(base)[:, 1::2]
    elif layout == "transposed":
        view = base.t()
        untouched = None
    else:
        view = base[:, 3]
        untouched = None
    args = {"random_": (0, 50), "bernoulli_": (0.5,)}.get(method, ())
    assert getattr(view, method)(*args) is view
    b = np_of(base)
    v = np_of(view).ravel()
    if layout == "strided":
        assert (b[:, 1::2] == 0).all(), "fill wrote outside the view"
    elif layout == "column":
        mask = np.ones_like(b, dtype=bool)
        mask[:, 3] = False
        assert (b[mask] == 0).all(), "fill wrote outside the view"
        np.testing.assert_array_equal(b[:, 3], v)
    dist = {"uniform_": ("uniform", ()), "normal_": ("norm", ()), "exponential_": ("expon", ())}
    if method in dist:
        assert stats.kstest(v, dist[method][0]).pvalue > P_MIN
    elif method == "random_":
        assert chisquare_uniform(v, range(50)) > P_MIN
    else:
        assert binom_ok(int(v.sum()), v.size, 0.5)
    assert len(np.unique(v)) > 1


def test_inplace_fills_with_generator_are_reproducible():
    for method, args in (("uniform_", ()), ("normal_", (1.0, 2.0)), ("random_", (0, 100)),
                         ("bernoulli_", (0.4,)), ("exponential_", (2.0,))):
        g1 = ptcore.Generator().manual_seed(36)
        g2 = ptcore.Generator().manual_seed(36)
        a = getattr(ptcore.empty(64), method)(*args, generator=g1).tolist()
        b = getattr(ptcore.empty(8, 8).t(), method)(*args, generator=g2)
        # a transposed fill draws the same stream in the view's logical order
        assert b.contiguous().view(64).tolist() == a, method


def test_contiguous_and_noncontiguous_fill_agree_on_the_stream():
    g1 = ptcore.Generator().manual_seed(37)
    g2 = ptcore.Generator().manual_seed(37)
    a = ptcore.rand(10, 10, generator=g1)
    b = ptcore.zeros(10, 20)[:, ::2].uniform_(generator=g2)
    assert a.tolist() == b.tolist()


def test_generator_clone_state_matches_torch():
    """``clone_state`` gives an independent generator at the same point of the stream;
    the CUDA-graph state calls raise NotImplementedError on the CPU, as torch."""
    torch = pytest.importorskip("torch")
    for L in (torch, ptcore):
        g = L.Generator().manual_seed(5)
        L.rand(3, generator=g)
        c = g.clone_state()
        assert c is not g and c.initial_seed() == 5
        a = L.rand(4, generator=c)
        b = L.rand(4, generator=g)
        assert L.equal(a, b)
        with pytest.raises(NotImplementedError):
            g.graphsafe_get_state()
        with pytest.raises(NotImplementedError):
            g.graphsafe_set_state(c)
