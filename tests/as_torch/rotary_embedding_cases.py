"""rotary-embedding-torch, run by tests/as_torch/test_rotary_embedding.py with the real torch
and under ``python -m ptcore.as_torch``: rotary position embeddings in a small attention
layer trained a few steps (language frequencies, xpos scaling, learned frequencies,
interpolation, cached keys at an offset) and axial pixel frequencies for an image; weights
and inputs from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import torch
import torch.nn.functional as F

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


class Attention(torch.nn.Module):
    def __init__(self, rotary, dim=16, heads=2, xpos=False):
        super().__init__()
        self.rotary, self.heads, self.xpos = rotary, heads, xpos
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        if self.xpos:
            q, k = self.rotary.rotate_queries_and_keys(q, k)
        else:
            q, k = self.rotary.rotate_queries_or_keys(q), self.rotary.rotate_queries_or_keys(k)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(o.transpose(1, 2).reshape(b, n, d))


def lang_case():
    """Attention with rotary embeddings of several kinds, trained three Adam steps."""
    from rotary_embedding_torch import RotaryEmbedding
    configs = {"plain": dict(dim=4), "xpos": dict(dim=8, use_xpos=True, xpos_scale_base=64),
               "learned": dict(dim=8, learned_freq=True),
               "interp": dict(dim=6, interpolate_factor=2.0, theta_rescale_factor=2.0)}
    x, y = _x(1, (2, 9, 16)), _x(2, (2, 9, 16))
    res = {}
    for name, kw in configs.items():
        rot = RotaryEmbedding(**kw)
        model = Attention(rot, xpos=kw.get("use_xpos", False))
        fill_normal([model.qkv.weight, model.qkv.bias, model.out.weight, model.out.bias], 3)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res[name] = {"losses": losses, "grad": model.qkv.weight.grad,
                     "freqs": rot.freqs.detach()}
    rot = RotaryEmbedding(dim=8)
    q, k = _x(4, (1, 2, 3, 8)), _x(5, (1, 2, 7, 8))
    cq, ck = rot.rotate_queries_with_cached_keys(q, k)
    res["cached"] = {"q": cq, "k": ck, "offset": rot.rotate_queries_or_keys(q, offset=4),
                     "seq_first": RotaryEmbedding(dim=8, seq_before_head_dim=True)
                     .rotate_queries_or_keys(_x(6, (1, 5, 2, 8)))}
    return res


def pixel_case():
    """Axial pixel frequencies on an image's tokens (apply_rotary_emb), with a gradient."""
    from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb
    rot = RotaryEmbedding(dim=8, freqs_for="pixel", max_freq=64)
    freqs = rot.get_axial_freqs(4, 5)
    t = _x(7, (2, 4, 5, 32)).requires_grad_()
    out = apply_rotary_emb(freqs, t)
    (out * _x(8, out.shape)).sum().backward()
    return {"freqs": freqs, "out": out, "grad": t.grad}


CASES = {"lang": lang_case, "pixel": pixel_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
