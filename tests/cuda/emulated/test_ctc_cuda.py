"""ctc_loss on CUDA tensors (emulated device): the alpha/beta recursions run
as kernels that loop over time inside (one block per batch element), so the
launches do not grow with the input length; losses and gradients equal the
CPU's (and PyTorch's) for float32/float64, repeated labels, empty targets,
inputs shorter than the targets need, another blank, batches larger than the
grid and label lattices wider than a block."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")


def _problem(T, N, C, S, blank=0, seed=0, dtype=np.float32):
    g = np.random.default_rng(seed)
    logits = g.standard_normal((T, N, C)).astype(dtype)
    labels = np.array([c for c in range(C) if c != blank])
    tg = labels[g.integers(0, len(labels), (N, S))]
    tg[0, 1] = tg[0, 0]                                  # a repeated label
    if N > 2:
        tg[2, :3] = tg[2, 0]                             # a run of three
    il = [int(v) for v in g.integers(max(1, T // 2), T + 1, N)]
    il[0] = T
    tl = [int(v) for v in g.integers(0, S + 1, N)]
    tl[0] = S
    if N > 1:
        tl[1] = 0                                        # an empty target
    if N > 3:
        il[3], tl[3] = 2, S                              # too short: infinite loss
    return logits, tg, il, tl


def _run(logits, tg, il, tl, device, blank, reduction, zero_infinity):
    x = ptcore.tensor(logits, device=device, requires_grad=True)
    lp = x.log_softmax(2)
    loss = F.ctc_loss(lp, ptcore.tensor(tg, device=device), il, tl, blank=blank, reduction=reduction,
                      zero_infinity=zero_infinity)
    (loss.sum() if reduction == "none" else loss).backward()
    return loss.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("reduction,zero_infinity,blank", [("none", True, 0), ("mean", False, 2),
                                                           ("sum", True, 5)])
def test_matches_cpu_and_torch(dtype, tol, reduction, zero_infinity, blank):
    logits, tg, il, tl = _problem(15, 5, 6, 4, blank=blank, dtype=dtype)
    got, ggot = _run(logits, tg, il, tl, "cuda", blank, reduction, zero_infinity)
    exp, gexp = _run(logits, tg, il, tl, "cpu", blank, reduction, zero_infinity)
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol)
    np.testing.assert_allclose(ggot, gexp, rtol=tol, atol=tol)
    x = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor(tg), il, tl, blank=blank,
                                         reduction=reduction, zero_infinity=zero_infinity)
    (tloss.sum() if reduction == "none" else tloss).backward()
    np.testing.assert_allclose(got, tloss.detach().numpy(), rtol=max(tol, 1e-10) * 10, atol=max(tol, 1e-10) * 10)
    np.testing.assert_allclose(ggot, x.grad.numpy(), rtol=max(tol, 1e-10) * 10, atol=max(tol, 1e-10) * 10)


def test_large_batch_and_wide_lattice():
    """N above the grid (4 SMs * 8 blocks on the emulator) and 2S+1 = 141 >
    128 threads: the blocks loop over the batch, the threads over s."""
    logits, tg, il, tl = _problem(80, 37, 5, 70, seed=3, dtype=np.float64)
    il = [80] * 37
    got, ggot = _run(logits, tg, il, tl, "cuda", 0, "none", False)
    exp, gexp = _run(logits, tg, il, tl, "cpu", 0, "none", False)
    np.testing.assert_allclose(got, exp, rtol=1e-10)
    np.testing.assert_allclose(ggot, gexp, rtol=1e-9, atol=1e-12)


def test_half_inputs_and_zero_length_input():
    logits, tg, il, tl = _problem(6, 3, 4, 2, seed=5)
    il[2], tl[2] = 0, 0
    lp = ptcore.tensor(logits).log_softmax(2)
    for dt in (ptcore.float16, ptcore.bfloat16):
        got = F.ctc_loss(lp.to(dt).cuda(), ptcore.tensor(tg).cuda(), il, tl, reduction="none")
        # (the CPU reference in float32 of the rounded input: torch's CPU CTC kernel, as
        # ptcore's, has no half-precision version)
        exp = F.ctc_loss(lp.to(dt).float(), ptcore.tensor(tg), il, tl, reduction="none")
        assert got.dtype == dt
        np.testing.assert_allclose(got.cpu().float().numpy(), exp.float().numpy(), rtol=1e-2)
    got = F.ctc_loss(lp.cuda(), ptcore.tensor(tg).cuda(), il, tl, reduction="none").cpu()
    assert got[2].item() == 0.0


def test_launches_do_not_grow_with_input_length(launches):
    counts = {}
    for T in (8, 40):
        logits, tg, il, tl = _problem(T, 3, 5, 3, seed=7)
        x = ptcore.tensor(logits, device="cuda", requires_grad=True)
        lp = x.log_softmax(2).detach().requires_grad_()
        tgt = ptcore.tensor(tg, device="cuda")
        del launches[:]
        loss = F.ctc_loss(lp, tgt, il, tl, reduction="sum")
        fwd = list(launches)
        del launches[:]
        loss.backward()
        counts[T] = (len(fwd), len(launches))
        assert [n for n in fwd + launches if "ctc" in n] == [
            "ptc_nnloss_ctcalpha_f32", "ptc_nnloss_ctcbeta_f32", "ptc_nnloss_ctcgrad_f32"]
    assert counts[8] == counts[40], counts
    assert counts[8][1] <= 6, counts           # the backward: beta, gradient, the scaling by grad_output


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment_gradient_as_torch(zero_infinity):
    """An infinite loss: NaN gradients as PyTorch (zeros with zero_infinity)."""
    logits, tg, il, tl = _problem(5, 2, 4, 3, seed=9, dtype=np.float64)
    tg[0] = [1, 1, 1]
    il, tl = [3, 5], [3, 2]                            # 1 1 1 needs 5 steps
    got, ggot = _run(logits, tg, il, tl, "cuda", 0, "sum", zero_infinity)
    x = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor(tg), il, tl, reduction="sum",
                                         zero_infinity=zero_infinity)
    tloss.backward()
    np.testing.assert_allclose(got, tloss.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ggot, x.grad.numpy(), rtol=1e-9, atol=1e-12)     # NaN where torch's are
