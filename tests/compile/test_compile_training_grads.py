"""Training through ``ptcore.compile``: for each op, the gradient of a loss
through the compiled graph (first call: captured; second: the compiled
forward and its captured backward) equals eager's.  Advanced indexing's
backward wrote its gradient with a kernel the captured backward did not see,
and gave zeros; a batch norm whose capture ran its op-by-op path and whose
graph ran its fused kernel handed a later ``view`` other strides."""
import pytest

import ptcore as torch

F = torch.nn.functional



torch.manual_seed(0)
x4 = torch.randn(2, 3, 6, 6)
x2 = torch.randn(5, 4)
idx = torch.tensor([0, 2, 2, 4])
mask = torch.tensor([True, False, True, True, False])
GRID = torch.rand(2, 4, 4, 2) * 2 - 1
cases = {
 "getitem_int": (x2, lambda x: (x[idx] * 2).sum()),
 "getitem_mask": (x2, lambda x: x[mask].pow(2).sum()),
 "getitem_col": (x2, lambda x: x[:, torch.tensor([1, 3])].sum()),
 "getitem_2idx": (x2, lambda x: x[idx, torch.tensor([0, 1, 1, 3])].sum()),
 "getitem_none": (x2, lambda x: x[None, ..., 1:].exp().sum()),
 "setitem": (x2, lambda x: (lambda y: (y.__setitem__(idx[:2], 0.0), y)[1])(x * 1).sum()),
 "index_put": (x2, lambda x: x.index_put((idx,), torch.ones(4, 4), accumulate=True).pow(2).sum()),
 "gather": (x2, lambda x: x.gather(1, torch.tensor([[0], [1], [2], [3], [0]])).sum()),
 "scatter": (x2, lambda x: torch.zeros(5, 4).scatter(1, torch.tensor([[0], [1], [2], [3], [0]]), x[:, :1]).pow(2).sum()),
 "scatter_add": (x2, lambda x: torch.zeros(6, 4).scatter_add(0, torch.tensor([[0, 1, 2, 3]] * 5), x).pow(2).sum()),
 "index_select": (x2, lambda x: x.index_select(0, idx).pow(2).sum()),
 "take": (x2, lambda x: x.take(torch.tensor([0, 5, 19])).pow(2).sum()),
 "take_along": (x2, lambda x: torch.take_along_dim(x, torch.tensor([[1], [0], [3], [2], [1]]), 1).pow(2).sum()),
 "embedding": (x2, lambda x: F.embedding(torch.tensor([[0, 2], [4, 4]]), x).pow(2).sum()),
 "embedding_bag": (x2, lambda x: F.embedding_bag(torch.tensor([0, 2, 4, 4]), x, torch.tensor([0, 2])).pow(2).sum()),
 "masked_fill": (x2, lambda x: x.masked_fill(x > 0, 0.0).pow(2).sum()),
 "masked_scatter": (x2, lambda x: torch.zeros(5, 4).masked_scatter(x > 0, x).pow(2).sum()),
 "where": (x2, lambda x: torch.where(x > 0, x, x * 3).pow(2).sum()),
 "sort": (x2, lambda x: x.sort(1)[0][:, :2].pow(2).sum()),
 "topk": (x2, lambda x: x.topk(2, 1)[0].pow(2).sum()),
 "max_dim": (x2, lambda x: x.max(1)[0].pow(2).sum()),
 "kthvalue": (x2, lambda x: x.kthvalue(2, 1)[0].pow(2).sum()),
 "median": (x2, lambda x: x.median(1)[0].pow(2).sum()),
 "cummax": (x2, lambda x: x.cummax(1)[0].pow(2).sum()),
 "cumprod": (x2, lambda x: x.cumprod(1).sum()),
 "roll": (x2, lambda x: x.roll(1, 0).pow(3).sum()),
 "flip": (x2, lambda x: x.flip(0).pow(3).mul(torch.arange(4.)).sum()),
 "repeat_interleave": (x2, lambda x: x.repeat_interleave(2, 0).pow(2).sum()),
 "unfold": (x2, lambda x: x.unfold(0, 2, 1).pow(2).sum()),
 "pad_neg": (x2, lambda x: F.pad(x, (-1, 1)).pow(2).sum()),
 "pad_reflect": (x4, lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect").pow(2).sum()),
 "maxpool": (x4, lambda x: F.max_pool2d(x, 2).pow(2).sum()),
 "maxpool_idx": (x4, lambda x: F.max_pool2d(x, 3, 1, return_indices=True)[0].pow(2).sum()),
 "avgpool": (x4, lambda x: F.avg_pool2d(x, 3, 2, 1).pow(2).sum()),
 "adaptive_max": (x4, lambda x: F.adaptive_max_pool2d(x, 4).pow(2).sum()),
 "adaptive_avg": (x4, lambda x: F.adaptive_avg_pool2d(x, 4).pow(2).sum()),
 "interp_nearest": (x4, lambda x: F.interpolate(x, scale_factor=2).pow(2).mul(torch.arange(12.)).sum()),
 "interp_bilinear": (x4, lambda x: F.interpolate(x, size=(9, 9), mode="bilinear").pow(2).sum()),
 "grid_sample": (x4, lambda x: F.grid_sample(x, GRID, align_corners=False).pow(2).sum()),
 "pixel_shuffle": (x4[:, :, :4, :4].repeat(1, 4, 1, 1).contiguous(), lambda x: F.pixel_shuffle(x, 2).pow(2).mul(torch.arange(8.)).sum()),
 "fold": (torch.randn(1, 12, 9), lambda x: F.fold(x, (4, 4), 2).pow(2).mul(torch.arange(4.)).sum()),
 "unfold_im": (x4, lambda x: F.unfold(x, 3).pow(2).mul(torch.arange(16.)).sum()),
 "conv_t": (x4, lambda x: F.conv_transpose2d(x, torch.ones(3, 2, 3, 3), stride=2).pow(2).sum()),
 "ce_ignore": (x2, lambda x: F.cross_entropy(x, torch.tensor([0, -100, 2, 3, 1]), ignore_index=-100, label_smoothing=0.1)),
 "nll_weight": (x2, lambda x: F.nll_loss(F.log_softmax(x, 1), torch.tensor([0, 1, 2, 3, 1]), weight=torch.tensor([1., 2., 3., 4.]))),
 "ctc": (torch.randn(6, 2, 4), lambda x: F.ctc_loss(F.log_softmax(x, 2), torch.tensor([[1, 2], [3, 1]]), torch.tensor([6, 6]), torch.tensor([2, 2]))),
 "bn_train": (x4, lambda x: F.batch_norm(x, None, None, torch.ones(3), torch.zeros(3), True).pow(2).mul(torch.arange(6.)).sum()),
 "group_norm": (x4, lambda x: F.group_norm(x, 3).pow(3).sum()),
 "instance_norm": (x4, lambda x: F.instance_norm(x).pow(3).sum()),
 "diag": (torch.randn(4, 4), lambda x: x.diagonal().pow(2).sum() + torch.diag_embed(x[0]).pow(2).sum()),
 "tril": (torch.randn(4, 4), lambda x: x.tril(-1).pow(2).sum()),
 "narrow_copy": (x2, lambda x: x.narrow_copy(0, 1, 2).pow(2).sum()),
 "select_scatter": (x2, lambda x: torch.select_scatter(torch.zeros(5, 4), x[0], 0, 2).pow(2).sum() + x.pow(2).sum()),
 "index_add": (x2, lambda x: torch.zeros(6, 4).index_add(0, torch.tensor([0, 0, 1, 2, 5]), x).pow(2).sum()),
 "index_copy": (x2, lambda x: torch.zeros(6, 4).index_copy(0, torch.tensor([0, 3, 1, 2, 5]), x).pow(2).sum()),
 "put": (x2, lambda x: torch.zeros(5, 4).put(torch.tensor([0, 3]), x[0, :2]).pow(2).sum() + x.sum()),
 "chunk_cat": (x2, lambda x: torch.cat(x.chunk(2, 1)[::-1], 1).pow(2).mul(torch.arange(4.)).sum()),
 "split_sizes": (x2, lambda x: sum(t.pow(i + 2).sum() for i, t in enumerate(x.split([1, 3], 1)))),
 "unbind": (x2, lambda x: sum(t.pow(i % 3 + 1).sum() for i, t in enumerate(x.unbind(0)))),
 "expand_as": (torch.randn(1, 4), lambda x: x.expand(5, 4).pow(2).mul(torch.arange(20.).reshape(5, 4)).sum()),
 "cdist": (x2, lambda x: torch.cdist(x, x[:2]).sum()),
 "norm_inf": (x2, lambda x: torch.linalg.vector_norm(x, float("inf"), dim=1).sum()),
 "logsumexp": (x2, lambda x: x.logsumexp(1).sum()),
 "sdpa_mask": (torch.randn(1, 2, 4, 8), lambda x: F.scaled_dot_product_attention(x, x, x, attn_mask=torch.tril(torch.ones(4, 4)).bool()).pow(2).sum()),
}


@pytest.mark.parametrize("name", sorted(cases))
def test_compiled_gradient_equals_eager(name):
    x0, f = cases[name]
    x = x0.clone().requires_grad_()
    f(x).backward()
    ref = x.grad.clone()
    c = torch.compile(f)
    for _ in range(2):
        x.grad = None
        c(x).backward()
        torch.testing.assert_close(x.grad, ref, rtol=1e-4, atol=1e-5)


def test_inplace_dropout_and_activations_train_as_eager():
    nn = torch.nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5, inplace=True), nn.ReLU(inplace=True),
                      nn.Linear(8, 8), nn.LeakyReLU(0.1, inplace=True), nn.Linear(8, 1))
    x = torch.randn(5, 4)
    c = torch.compile(m)
    for i in range(3):
        torch.manual_seed(10 + i)
        m.zero_grad()
        l1 = c(x).pow(2).sum()
        l1.backward()
        g1 = [p.grad.clone() for p in m.parameters()]
        torch.manual_seed(10 + i)
        m.zero_grad()
        l2 = m(x).pow(2).sum()
        l2.backward()
        assert l1.item() == pytest.approx(l2.item(), rel=1e-6)
        for a, p in zip(g1, m.parameters()):
            torch.testing.assert_close(a, p.grad)


def test_batch_norm_layout_does_not_depend_on_the_path():
    """torch's batch norm writes the input's suggested memory format (else
    contiguous), its op-by-op path too (it runs while a dispatch layer is on)."""
    from ptcore.overrides import TorchFunctionMode

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = torch.randn(6, 4, 16).transpose(1, 2)
    outs = []
    for layer_on in (False, True):
        for training in (False, True):
            xx = x.detach().requires_grad_(training)
            if layer_on:
                with Mode():
                    y = F.batch_norm(xx, torch.zeros(16), torch.ones(16), training=training)
            else:
                y = F.batch_norm(xx, torch.zeros(16), torch.ones(16), training=training)
            outs.append(y.stride())
    assert outs == [(64, 4, 1)] * 4
