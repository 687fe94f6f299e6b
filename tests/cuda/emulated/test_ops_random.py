"""Random sampling on CUDA tensors (emulated device): for the same seed
the CUDA generator's stream equals the CPU generator's values (Philox,
bit for bit), ptcore.cuda's seeding/state functions, generators, in-place
samplers on non-contiguous tensors, dropout and its gradient."""
import pytest

import ptcore

FLOATS = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


def _same(dev, cpu):
    got = dev.cpu()
    assert got.dtype == cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    assert ptcore.equal(got, cpu), (got, cpu)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn_bit_identical(dtype):
    for fn in (ptcore.rand, ptcore.randn):
        ptcore.manual_seed(123)
        a = fn(5, 7, dtype=dtype, device="cuda")
        b2 = fn(3, dtype=dtype, device="cuda")        # the offset advances as on the CPU
        ptcore.manual_seed(123)
        _same(a, fn(5, 7, dtype=dtype))
        _same(b2, fn(3, dtype=dtype))


@pytest.mark.parametrize("dtype", [ptcore.int64, ptcore.int16, ptcore.uint8, ptcore.float32, ptcore.bool])
def test_randint_and_random_(dtype):
    for low, high in ((0, 2), (-5, 300), (0, 1 << 40), (-(1 << 20), 1 << 20)):
        if dtype is ptcore.bool and (low, high) != (0, 2):
            continue
        if dtype in (ptcore.uint8, ptcore.int16) and high > 300 or (dtype is ptcore.uint8 and low < 0):
            continue
        ptcore.manual_seed(7)
        a = ptcore.randint(low, high, (4, 9), dtype=dtype, device="cuda")
        ptcore.manual_seed(7)
        _same(a, ptcore.randint(low, high, (4, 9), dtype=dtype))
    args = (0, 1 << 40) if dtype is ptcore.int64 else ()       # (the CPU's int64 random_() overflows)
    ptcore.manual_seed(8)
    a = ptcore.empty(6, 5, dtype=dtype, device="cuda").t()      # non-contiguous target
    a.random_(*args)
    ptcore.manual_seed(8)
    b = ptcore.empty(6, 5, dtype=dtype).t()
    b.random_(*args)
    _same(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_samplers_and_likes(dtype):
    shapes = (3, 8)
    for name, args in (("uniform_", (-2, 5)), ("normal_", (1.5, 0.5)), ("exponential_", (2.0,)),
                       ("bernoulli_", (0.3,)), ("random_", (0, 10))):
        ptcore.manual_seed(11)
        a = getattr(ptcore.empty(*shapes, dtype=dtype, device="cuda"), name)(*args)
        ptcore.manual_seed(11)
        b = getattr(ptcore.empty(*shapes, dtype=dtype), name)(*args)
        _same(a, b)
    x = ptcore.rand(4, 3, dtype=dtype)
    for fn in (ptcore.rand_like, ptcore.randn_like):
        ptcore.manual_seed(12)
        a = fn(x.cuda())
        ptcore.manual_seed(12)
        _same(a, fn(x))
    ptcore.manual_seed(13)
    a = ptcore.randint_like(x.cuda(), 3, 9)
    ptcore.manual_seed(13)
    _same(a, ptcore.randint_like(x, 3, 9))


def test_bernoulli_tensor_normal_tensor_randperm():
    p = ptcore.rand(5, 6)
    ptcore.manual_seed(21)
    a = ptcore.bernoulli(p.cuda())
    b_ = ptcore.empty(6, 5, device="cuda").t().bernoulli_(p.cuda()[0])     # broadcast probabilities
    ptcore.manual_seed(21)
    _same(a, ptcore.bernoulli(p))
    _same(b_, ptcore.empty(6, 5).t().bernoulli_(p[0]))
    with pytest.raises(RuntimeError, match="p_in"):
        ptcore.bernoulli(p.cuda() + 1)
    m, s = ptcore.randn(4, 3), ptcore.rand(3) + 0.1
    ptcore.manual_seed(22)
    x = ptcore.normal(m.cuda(), s.cuda())
    y = ptcore.normal(2.0, s.cuda())
    ptcore.manual_seed(22)
    _same(x, ptcore.normal(m, s))
    _same(y, ptcore.normal(2.0, s))
    for dtype in (ptcore.int64, ptcore.int32, ptcore.float32):
        ptcore.manual_seed(23)
        a = ptcore.randperm(50, device="cuda", dtype=dtype)
        ptcore.manual_seed(23)
        _same(a, ptcore.randperm(50, dtype=dtype))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_bit_identical(replacement):
    p = ptcore.rand(4, 7) * (ptcore.rand(4, 7) > 0.2)
    p[:, 0] += 0.1
    for probs in (p, p[0], p.t().contiguous().t()):
        ptcore.manual_seed(41)
        a = ptcore.multinomial(probs.cuda(), 3, replacement)
        ptcore.manual_seed(41)
        _same(a, ptcore.multinomial(probs, 3, replacement))
    with pytest.raises(RuntimeError, match="probability tensor"):
        ptcore.multinomial(-p.cuda(), 2, replacement)


def test_cuda_seed_and_state_functions():
    ptcore.cuda.manual_seed(5)
    st = ptcore.cuda.get_rng_state()
    assert st.dtype is ptcore.uint8 and st.numel() == 16
    assert ptcore.cuda.initial_seed() == 5
    a = ptcore.randn(10, device="cuda")
    ptcore.cuda.set_rng_state(st)
    _same(ptcore.randn(10, device="cuda"), a.cpu())
    ptcore.cuda.manual_seed_all(6)
    c0 = ptcore.rand(4, device="cuda:0")
    c1 = ptcore.rand(4, device="cuda:1") if ptcore.cuda.device_count() > 1 else c0
    _same(c1, c0.cpu())                              # each device's generator seeded with 6
    # the CUDA generator is separate from the CPU one
    ptcore.manual_seed(9)
    ptcore.rand(100)
    g = ptcore.rand(3, device="cuda")
    ptcore.manual_seed(9)
    _same(g, ptcore.rand(3))
    gen = ptcore.Generator("cuda").manual_seed(4)
    a = ptcore.rand(6, device="cuda", generator=gen)
    _same(a, ptcore.rand(6, generator=ptcore.Generator().manual_seed(4)))
    with pytest.raises(RuntimeError, match="device type for generator"):
        ptcore.rand(3, device="cuda", generator=ptcore.Generator())


def test_dropout_and_grad():
    x = ptcore.randn(6, 8)
    res = []
    for dev in ("cpu", "cuda"):
        t = x.to(dev, copy=True).requires_grad_()
        ptcore.manual_seed(31)
        y = ptcore.nn.functional.dropout(t, 0.4)
        (y * 3).sum().backward()
        res.append((y.detach(), t.grad))
    _same(res[1][0], res[0][0])
    _same(res[1][1], res[0][1])
    assert (res[0][0] == 0).any()
    d = ptcore.nn.Dropout(0.5).eval()
    _same(d(x.cuda()), x)


def test_statistics_and_torch_ranges():
    torch = pytest.importorskip("torch")
    ptcore.manual_seed(0)
    u = ptcore.rand(4000, device="cuda").cpu()
    n = ptcore.randn(4000, device="cuda").cpu()
    assert 0 <= float(u.min()) and float(u.max()) < 1 and abs(float(u.mean()) - 0.5) < 0.03
    assert abs(float(n.mean())) < 0.06 and abs(float(n.std()) - 1) < 0.06
    r = ptcore.randint(-3, 4, (2000,), device="cuda").cpu()
    assert set(r.tolist()) == set(range(-3, 4))
    assert torch.tensor(u.tolist()).dtype == torch.float32


def test_training_with_dropout_matches_cpu():
    """Three SGD steps of a Linear-ReLU-Dropout-Linear model: the CUDA run's
    dropout masks, losses and weights equal the CPU run's (same seeds)."""
    nn = ptcore.nn
    ptcore.manual_seed(0)
    ref = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
    x, t = ptcore.randn(5, 6), ptcore.randn(5, 2)
    runs = []
    for dev in ("cpu", "cuda"):
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
        model.load_state_dict(ref.state_dict())
        model.to(dev)
        opt = ptcore.optim.SGD(model.parameters(), lr=0.1)
        ptcore.manual_seed(5)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = ((model(x.to(dev)) - t.to(dev)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, {k: v.cpu() for k, v in model.state_dict().items()}))
    assert ptcore.allclose(ptcore.tensor(runs[1][0]), ptcore.tensor(runs[0][0]), rtol=1e-5)
    for k in runs[0][1]:
        assert ptcore.allclose(runs[1][1][k], runs[0][1][k], rtol=1e-5, atol=1e-6), k
