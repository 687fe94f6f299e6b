"""ptcore.autograd.forward_ad: levels, errors, views and in-place ops on
duals, interaction with reverse mode, compared with torch's behaviour."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd.forward_ad as fwAD
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch import forward_ad as _layer

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad


def _np(t):
    return None if t is None else t.detach().numpy()


def both(case):
    """Run ``case(module, forward_ad)`` with ptcore and torch; results as NumPy."""
    r = case(ptcore, fwAD)
    e = case(torch, tfw)
    return r, e


def _assert_same(r, e):
    if isinstance(r, (tuple, list)):
        assert len(r) == len(e)
        for a, b in zip(r, e):
            _assert_same(a, b)
    elif r is None or e is None:
        assert r is None and e is None, (r, e)
    elif isinstance(r, (bool, int, float, str)):
        assert r == e
    else:
        np.testing.assert_allclose(_np(r), _np(e), rtol=1e-12, atol=1e-12)


def test_levels_enter_exit_and_nesting_errors():
    assert fwAD.enter_dual_level() == 0
    with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
        fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="not the last one"):
        fwAD.exit_dual_level(level=3)
    assert fwAD.exit_dual_level() is None
    with pytest.raises(RuntimeError, match="positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        with pytest.raises(RuntimeError, match="Nested"):
            with fwAD.dual_level():
                pass
    # the level left cleanly: a new one opens
    with fwAD.dual_level() as lvl:
        assert lvl == 0


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def f(x):
        return fwAD.unpack_dual(fwAD.make_dual(x, ptcore.ones_like(x)) * 3).tangent
    np.testing.assert_array_equal(f(ptcore.ones(2)).numpy(), [3.0, 3.0])


def test_make_dual_errors():
    x = ptcore.ones(3)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level() as lvl:
        with pytest.raises(RuntimeError, match=r"size \[3\] while the given forward gradient is "
                                               r"of size \[4\]"):
            fwAD.make_dual(x, ptcore.ones(4))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, "
                                             "but got: torch.int64"):
            fwAD.make_dual(ptcore.ones(3, dtype=ptcore.int64), x)
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, ptcore.ones(3, dtype=ptcore.int64))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, x, level=lvl + 1)
        d = fwAD.make_dual(x, x)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                                               "level 0"):
            fwAD.make_dual(d, x)
        with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
            fwAD.unpack_dual(d, level=4)
        with pytest.raises(TypeError):
            fwAD.make_dual(x, [1.0, 2.0, 3.0])


def test_unpack_dual_namedtuple_identity_and_exit():
    t = ptcore.arange(3.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(ptcore.ones(3), t)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor) and isinstance(u, tuple)
        assert u._fields == ("primal", "tangent")
        assert u.tangent is t              # stored as given (same layout), as torch
        assert fwAD.unpack_dual(u.primal).tangent is None
        assert fwAD.unpack_dual(ptcore.ones(2)).tangent is None
        y = d * 2
        assert fwAD.unpack_dual(y).tangent is not None
        assert _layer.layer().enabled and _D.on[0]
    # tangents vanish with their level; the layer is off again
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.unpack_dual(d).tangent is None
    assert not _layer.layer().enabled
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None


def test_tangent_with_other_strides_is_laid_out_as_the_primal():
    def case(m, f):
        with f.dual_level():
            p = m.ones(2, 3, dtype=m.float64).t()
            t = m.arange(6.0, dtype=m.float64).reshape(2, 3)
            d = f.make_dual(p, t.t())
            tg = f.unpack_dual(d).tangent
            return tuple(tg.stride()) == tuple(p.stride()), tg
    _assert_same(*both(case))


def test_tangent_dtype_kept_as_torch():
    def case(m, f):
        with f.dual_level():
            d = f.make_dual(m.ones(3), m.ones(3, dtype=m.float64))
            return str(f.unpack_dual(d).tangent.dtype).split(".")[-1]
    r, e = both(case)
    assert r == e == "float64"


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def inplace_on_view_of_plain_base(m, f):
    with f.dual_level():
        a = m.zeros(3, 4, dtype=m.float64)
        v = a[1]
        v.add_(f.make_dual(m.ones(4, dtype=m.float64), m.arange(4.0, dtype=m.float64)))
        return f.unpack_dual(a).tangent, f.unpack_dual(v).tangent


@case
def inplace_on_view_of_dual_base(m, f):
    with f.dual_level():
        x = f.make_dual(m.zeros(2, 3, dtype=m.float64), m.zeros(2, 3, dtype=m.float64))
        w = x[0]
        w.add_(f.make_dual(m.ones(3, dtype=m.float64), m.ones(3, dtype=m.float64)))
        w.mul_(3)
        return f.unpack_dual(x).tangent, f.unpack_dual(w).tangent


@case
def view_sees_inplace_on_base(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(2, 3, dtype=m.float64), m.ones(2, 3, dtype=m.float64))
        y = x.t()
        z = x[:, 1:]
        x.mul_(m.arange(3.0, dtype=m.float64))
        return f.unpack_dual(y).tangent, f.unpack_dual(z).tangent


@case
def copy_and_setitem(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(3, dtype=m.float64), m.arange(3.0, dtype=m.float64))
        y = m.empty(3, dtype=m.float64)
        y.copy_(x * 2)
        z = m.zeros(4, dtype=m.float64)
        z[1:] = x
        w = x.clone()
        w[0] = 5.0
        return f.unpack_dual(y).tangent, f.unpack_dual(z).tangent, f.unpack_dual(w).tangent


@case
def inplace_chain(m, f):
    with f.dual_level():
        x = f.make_dual(m.full((3,), 0.5, dtype=m.float64), m.arange(3.0, dtype=m.float64))
        x.exp_()
        x += 1
        x *= x
        x.clamp_(0, 5.0)
        x.sub_(m.ones(3, dtype=m.float64), alpha=2)
        x.div_(f.make_dual(m.full((3,), 2.0, dtype=m.float64), m.ones(3, dtype=m.float64)))
        x.pow_(2)
        return f.unpack_dual(x)


@case
def zero_and_fill_inplace(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(3, dtype=m.float64), m.arange(3.0, dtype=m.float64))
        y = f.make_dual(m.ones(3, dtype=m.float64), m.arange(3.0, dtype=m.float64))
        x.zero_()
        y.fill_(2.0)
        return f.unpack_dual(x).tangent, f.unpack_dual(y).tangent


@case
def metadata_inplace(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(2, 3, dtype=m.float64),
                        m.arange(6.0, dtype=m.float64).reshape(2, 3))
        x.t_()
        x.unsqueeze_(0)
        return f.unpack_dual(x).tangent


@case
def non_differentiable_outputs(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(3, dtype=m.float64), m.arange(3.0, dtype=m.float64))
        return (f.unpack_dual(x.detach()).tangent, f.unpack_dual(x.argmax()).tangent,
                f.unpack_dual(x > 0).tangent, f.unpack_dual(m.zeros_like(x)).tangent,
                f.unpack_dual(x.long()).tangent, f.unpack_dual(x.float()).tangent,
                f.unpack_dual(m.sort(x).indices).tangent)


@case
def reverse_mode_through_tangents(m, f):
    with f.dual_level():
        r = m.tensor([0.3, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        d = f.make_dual(r, m.arange(3.0, dtype=m.float64))
        y = (d * d).sin()
        p, t = f.unpack_dual(y)
        g, = m.autograd.grad(t.sum(), r)
        return y.requires_grad, t.requires_grad, g


@case
def reverse_mode_through_primal(m, f):
    with f.dual_level():
        r = m.tensor([0.3, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        d = f.make_dual(r, m.ones(3, dtype=m.float64))
        y = (d.exp() * d).sum()
        y.backward()
        return r.grad, f.unpack_dual(y).tangent


@case
def tangent_requiring_grad(m, f):
    with f.dual_level():
        t = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        d = f.make_dual(m.tensor([0.5, 1.0, 1.5], dtype=m.float64), t)
        tg = f.unpack_dual(d.sin().prod()).tangent
        g, = m.autograd.grad(tg, t)
        return g


@case
def complex_ops(m, f):
    with f.dual_level():
        z = f.make_dual(m.tensor([1 + 2j, -0.5 + 0.3j], dtype=m.complex128),
                        m.tensor([0.3 - 1j, 1 + 1j], dtype=m.complex128))
        w = m.tensor([2 - 1j, 0.5j], dtype=m.complex128)
        outs = [z * w, z.exp(), z.abs(), (z @ w), z.conj() * z, z.real, m.view_as_real(z),
                z.sum(), z.sin(), z / w, z.angle()]
        return tuple(f.unpack_dual(o).tangent for o in outs)


@case
def mixed_dtypes(m, f):
    with f.dual_level():
        x = f.make_dual(m.ones(3, dtype=m.float32), m.ones(3, dtype=m.float32))
        y = x * m.arange(3.0, dtype=m.float64)
        return f.unpack_dual(y).tangent, str(f.unpack_dual(y).tangent.dtype).split(".")[-1]


@case
def nn_model(m, f):
    m.manual_seed(0)
    nn = m.nn
    with f.dual_level():
        x = f.make_dual(m.linspace(-1, 1, 2 * 3 * 6 * 6, dtype=m.float64).reshape(2, 3, 6, 6),
                        m.cos(m.arange(2 * 3 * 6 * 6, dtype=m.float64)).reshape(2, 3, 6, 6))
        w = m.sin(m.arange(4 * 3 * 3 * 3, dtype=m.float64)).reshape(4, 3, 3, 3)
        wl = m.cos(m.arange(5 * 4 * 4 * 4, dtype=m.float64)).reshape(5, 64) / 10
        h = nn.functional.conv2d(x, w, padding=0)
        h = nn.functional.layer_norm(h, (4, 4))
        h = nn.functional.gelu(h)
        h = nn.functional.avg_pool2d(h, 1)
        h = nn.functional.linear(h.flatten(1), wl)
        out = nn.functional.log_softmax(h, -1)
        return f.unpack_dual(out)


@case
def functional_inplace_activations(m, f):
    F = m.nn.functional
    outs = []
    for act in (lambda x: F.relu(x, inplace=True), lambda x: F.leaky_relu(x, 0.2, inplace=True),
                lambda x: F.hardtanh(x, -0.5, 0.5, inplace=True),
                lambda x: F.elu(x, inplace=True), lambda x: F.relu6(x * 4, inplace=True)):
        with f.dual_level():
            x = f.make_dual(m.linspace(-2, 2, 6, dtype=m.float64),
                            m.linspace(1, 2, 6, dtype=m.float64))
            y = x * 1.0
            act(y)
            outs.append(f.unpack_dual(y).tangent)
    return tuple(outs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    _assert_same(*both(CASES[name]))


def test_custom_function_without_jvp_raises_as_torch():
    class Cube(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            return g

    with fwAD.dual_level():
        d = fwAD.make_dual(ptcore.ones(2), ptcore.ones(2))
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            Cube.apply(d)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_custom_function_jvp_against_torch(requires_grad):
    def run(m, f):
        class Mul(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x, y)
                ctx.save_for_backward(x, y)
                ctx.k = k
                return x * y * k

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                assert tk is None
                x, y = ctx.saved_tensors
                return (tx * y + x * ty) * ctx.k

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y * ctx.k, g * x * ctx.k, None

        with f.dual_level():
            x = f.make_dual(m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=requires_grad),
                            m.tensor([1.0, -1.0], dtype=m.float64))
            y = m.tensor([3.0, 4.0], dtype=m.float64)
            out = Mul.apply(x, y, 2.0)
            return f.unpack_dual(out).tangent.detach(), out.requires_grad
    _assert_same(*both(run))


def test_layer_on_inside_a_public_level_only():
    assert not _layer.layer().enabled
    with fwAD.dual_level():
        # on for the whole level (a method bound before the level's first
        # make_dual must dispatch too), off again after it
        assert _layer.layer().enabled
        x = ptcore.ones(2) * 2
        assert fwAD.unpack_dual(x).tangent is None
    assert not _layer.layer().enabled
    assert not _D.on[0]


def test_method_bound_before_the_first_dual_keeps_the_tangent():
    """``x.index_put_((i,), make_dual(a, t))``: Python binds the method before
    make_dual runs; the in-place write lost its tangent while the layer was
    switched on only by the first dual (the funcad helper's report)."""
    torch = pytest.importorskip("torch")
    for lib in (torch, ptcore):
        F = lib.autograd.forward_ad
        with F.dual_level():
            x = lib.zeros(4, dtype=lib.float64)
            y = x.index_put_((lib.tensor([1, 3]),), F.make_dual(lib.tensor([1.0, 2.0], dtype=lib.float64),
                                                              lib.tensor([5.0, 7.0], dtype=lib.float64)))
            t = F.unpack_dual(y).tangent
            assert t is not None and t.tolist() == [0.0, 5.0, 0.0, 7.0], lib.__name__


def test_exception_inside_level_leaves_no_tangent_behind():
    x = ptcore.ones(3)
    with pytest.raises(ValueError):
        with fwAD.dual_level():
            d = fwAD.make_dual(x, ptcore.ones(3))
            raise ValueError("boom")
    assert fwAD.unpack_dual(d).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(d).tangent is None



def test_copies_and_pickles_carry_no_tangent():
    import copy
    import pickle
    with fwAD.dual_level():
        y = fwAD.make_dual(ptcore.ones(3), ptcore.ones(3)) * 2
        assert fwAD.unpack_dual(copy.deepcopy(y)).tangent is None
        assert fwAD.unpack_dual(pickle.loads(pickle.dumps(y))).tangent is None


def test_out_argument_refused_as_torch():
    with fwAD.dual_level():
        d = fwAD.make_dual(ptcore.ones(3), ptcore.ones(3))
        with pytest.raises(NotImplementedError, match="sin_out .* out= function"):
            ptcore.sin(d, out=ptcore.empty(3))


def test_views_of_the_unpacked_primal_have_no_tangent():
    with fwAD.dual_level():
        x = fwAD.make_dual(ptcore.ones(2, 3), ptcore.ones(2, 3)) * 2
        p = fwAD.unpack_dual(x).primal
        assert fwAD.unpack_dual(p[0]).tangent is None
        assert fwAD.unpack_dual(p.view(-1)).tangent is None
        assert fwAD.unpack_dual(x[0]).tangent is not None
        r = ptcore.ones(3, requires_grad=True)
        q = fwAD.unpack_dual(fwAD.make_dual(r, ptcore.ones(3)) * 3).primal
        q.sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), [3.0, 3.0, 3.0])
