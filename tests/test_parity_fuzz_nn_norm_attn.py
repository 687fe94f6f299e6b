"""Differences between ptcore.nn (normalisation, activation, attention,
embedding and recurrent parts) and torch found by a differential fuzzer over
held-out argument combinations; each case compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")
TF = torch.nn.functional
PF = ptcore.nn.functional


def _pt(t):
    if isinstance(t, torch.Tensor):
        p = ptcore.from_numpy(t.detach().numpy().copy())
        return p.requires_grad_() if t.requires_grad else p
    return t


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:      # noqa: BLE001 - the type is what is compared
        return type(e)


def _same_outcome(tfn, pfn, targs, kwargs=None):
    """Both raise the same exception type, or both return the same values."""
    kwargs = kwargs or {}
    a = _outcome(tfn, *targs, **kwargs)
    b = _outcome(pfn, *[_pt(t) for t in targs], **{k: _pt(v) for k, v in kwargs.items()})
    if isinstance(a, type):
        assert isinstance(b, type) and issubclass(b, a), (a, b)
        return None, None
    assert not isinstance(b, type), b
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    return a, b


def _r(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


# --- normalisation -----------------------------------------------------------

@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(3,), ()])
def test_batch_norm_input_without_channel_dim_raises_index_error(shape, training):
    x = _r(*shape)
    rm = torch.zeros(0, dtype=torch.float64) if shape else None
    rv = torch.ones(0, dtype=torch.float64) if shape else None
    _same_outcome(TF.batch_norm, PF.batch_norm, (x, rm, rv), dict(training=training))


# --- activations -------------------------------------------------------------

@pytest.mark.parametrize("training", [True, False])
def test_rrelu_lower_above_upper_raises(training):
    x = _r(4, 3)
    _same_outcome(TF.rrelu, PF.rrelu, (x,), dict(lower=0.5, upper=0.1, training=training))
    _same_outcome(torch.nn.RReLU(0.5, 0.1).train(training), ptcore.nn.RReLU(0.5, 0.1).train(training),
                  (x,))


# --- embedding_bag -----------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 0), (3, 0), (0, 0)])
def test_embedding_bag_2d_input_without_columns_raises(shape):
    # torch builds the bag offsets as arange(0, numel, step=columns) and fails
    w = _r(4, 3)
    idx = torch.zeros(shape, dtype=torch.int64)
    _same_outcome(TF.embedding_bag, PF.embedding_bag, (idx, w), dict(mode="sum"))


# --- scaled_dot_product_attention -------------------------------------------

@pytest.mark.parametrize("qs,ks,mask", [
    ((2, 3, 4), (2, 5, 4), (5,)),          # math kernel: a 1-D mask broadcasts
    ((3, 4), (5, 4), (5,)),
    ((2, 3, 4), (2, 5, 4), ()),
    ((1, 2, 3, 4), (1, 2, 5, 4), (5,)),    # flash kernel's mask check: IndexError
])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_mask_of_fewer_than_two_dims(qs, ks, mask, kind):
    q, k, v = _r(*qs, seed=1), _r(*ks, seed=2), _r(*ks, seed=3)
    m = _r(*mask, seed=4)
    m = m > 0 if kind == "bool" else m
    if kind == "bool" and mask:
        m[0] = True
    _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                  (q, k, v), dict(attn_mask=m))


@pytest.mark.parametrize("qs,ks,vs", [
    ((3, 4), (5, 4), (5, 4)), ((2, 3, 4), (5, 4), (5, 4)), ((3, 4), (5, 3), (5, 4)),
    ((2, 3, 4), (2, 5, 4), (2, 5, 4)), ((4, 3, 4), (2, 5, 4), (4, 5, 4)),
])
def test_sdpa_enable_gqa_needs_three_dims(qs, ks, vs):
    # torch's math kernel reads the head counts at dim -3 (IndexError), before
    # the products that would catch a wrong embedding size
    q, k, v = _r(*qs, seed=1), _r(*ks, seed=2), _r(*vs, seed=3)
    _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                  (q, k, v), dict(enable_gqa=True))


@pytest.mark.parametrize("mdt", [torch.int64, torch.float16, torch.int32])
@pytest.mark.parametrize("mshape", [(3, 5), (5,)])
def test_sdpa_mask_dtype_checked_first(mdt, mshape):
    # bool, float32 or the query's dtype; checked before the mask's shape
    q, k = _r(1, 1, 3, 4, seed=1), _r(1, 1, 5, 4, seed=2)
    m = torch.ones(mshape, dtype=mdt)
    _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                  (q, k, k), dict(attn_mask=m))


def test_sdpa_float32_mask_with_float64_query():
    q, k = _r(2, 3, 4, seed=1), _r(2, 5, 4, seed=2)
    _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                  (q, k, k), dict(attn_mask=_r(3, 5, seed=3).float()))


@pytest.mark.parametrize("mshape,takes", [
    ((4, 5), True), ((1, 1, 4, 5), True), ((1, 4, 5), False), ((2, 4, 4, 5), False),
    ((1, 4, 1, 5), True), ((1, 1, 1, 1, 5), False),
])
def test_sdpa_causal_with_mask_only_where_flash_kernel_runs(mshape, takes):
    # torch's CPU flash kernel takes 2-D or 4-D masks (sizes 1 or full) with
    # is_causal; its math kernel refuses the pair
    q, k = _r(1, 4, 4, 2, seed=1), _r(1, 4, 5, 2, seed=2)
    a, _ = _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                         (q, k, k), dict(attn_mask=_r(*mshape, seed=3), is_causal=True))
    assert (a is not None) == takes


@pytest.mark.parametrize("ks,vs", [((2, 1, 1, 3), (2, 1, 1, 3)), ((1, 2, 5, 3), (1, 2, 5, 2))])
def test_sdpa_flash_mask_check_before_embedding_size(ks, vs):
    q = _r(ks[0], ks[1], 4, 2, seed=1)
    _same_outcome(TF.scaled_dot_product_attention, PF.scaled_dot_product_attention,
                  (q, _r(*ks, seed=2), _r(*vs, seed=3)), dict(attn_mask=_r(ks[2], seed=4)))
