"""Activation checkpointing on CUDA preserves the device RNG as torch's: the
recomputed forward draws the same dropout masks as the first, so gradients
equal those of the plain forward (the stash looked for
``ptcore.cuda._initialized``, which did not exist, so the CUDA state was
never saved and the recomputation drew new masks)."""
import pytest

import ptcore
from ptcore.utils.checkpoint import checkpoint


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_masks_replayed(reentrant):
    ptcore.manual_seed(1)
    m = ptcore.nn.Sequential(ptcore.nn.Linear(8, 8), ptcore.nn.Dropout(0.5)).cuda()
    x = ptcore.randn(6, 8, device="cuda", requires_grad=True)
    ptcore.manual_seed(0)
    y = checkpoint(m, x, use_reentrant=reentrant)
    y.sum().backward()
    g_ckpt = x.grad.clone()
    x.grad = None
    ptcore.manual_seed(0)
    y2 = m(x)
    y2.sum().backward()
    assert ptcore.equal(y, y2)
    assert ptcore.equal(g_ckpt, x.grad)
    assert (y == 0).any()                      # the masks did drop something


def test_initialized_attribute():
    ptcore.ones(1, device="cuda")
    assert ptcore.cuda._initialized is True
    assert ptcore.cuda._initialized == ptcore.cuda.is_initialized()


def test_set_rng_state_with_an_index_then_a_new_device_generator():
    # set_rng_state(state, 0) (what checkpointing calls) queued the device as the
    # string "0", which the next device generator created could not read
    st = ptcore.cuda.get_rng_state(0)
    ptcore.cuda.set_rng_state(st, 0)
    from ptcore.cuda import random as _random
    _random._reset_generators()
    a = ptcore.rand(3, device="cuda:0")
    ptcore.cuda.set_rng_state(st, 0)
    assert ptcore.equal(ptcore.rand(3, device="cuda:0"), a)
    if ptcore.cuda.device_count() > 1:
        ptcore.rand(2, device="cuda:1")
