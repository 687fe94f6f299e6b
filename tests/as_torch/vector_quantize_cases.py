"""vector-quantize-pytorch, run by tests/as_torch/test_vector_quantize.py with the real torch and
under ``python -m ptcore.as_torch``: VectorQuantize (EMA codebook updates, the rotation trick,
cosine similarity with multiple heads, image feature maps, orthogonal regularisation),
ResidualVQ, FSQ, LFQ (entropy auxiliary loss) and ResidualFSQ, in a small encoder trained a few
steps; weights, codebooks and inputs from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


def _fill(module, seed, scale=0.5):
    state = module.state_dict()
    fill_normal([state[k] for k in sorted(state) if state[k].is_floating_point()
                 and not k.endswith(("cluster_size", "initted"))], seed, scale)


_x = normal_tensor


def _train(quantizer, x, steps=3, lr=1e-2, aux=True):
    """A linear encoder before the quantizer, trained on reconstruction + its losses."""
    enc = torch.nn.Linear(x.shape[-1], x.shape[-1])
    fill_normal([enc.weight, enc.bias], 9, 0.3)
    params = list(enc.parameters()) + [p for p in quantizer.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    out = {"losses": [], "indices": []}
    for _ in range(steps):
        opt.zero_grad()
        res = quantizer(enc(x))
        quantized, indices = res[0], res[1]
        loss = torch.nn.functional.mse_loss(quantized, x)
        if aux:
            loss = loss + res[2].sum()
        loss.backward()
        opt.step()
        out["losses"].append(loss.item())
        out["indices"].append(indices)
    out["quantized"] = quantized
    out["enc_grad"] = enc.weight.grad
    return out


def vq_case():
    """VectorQuantize: EMA updates with the rotation trick (default), straight-through with
    cosine similarity and two heads, a feature map with orthogonal regularisation."""
    from vector_quantize_pytorch import VectorQuantize
    res = {}
    vq = VectorQuantize(dim=8, codebook_size=16, decay=0.8, commitment_weight=1.0)
    _fill(vq, 1)
    res["ema_rotation"] = _train(vq, _x(2, (2, 10, 8)))
    res["ema_rotation"]["codebook"] = vq.codebook
    vq = VectorQuantize(dim=8, codebook_size=12, heads=2, separate_codebook_per_head=True,
                        use_cosine_sim=True, rotation_trick=False, straight_through=False,
                        codebook_dim=4)
    _fill(vq, 3)
    res["cosine_heads"] = _train(vq, _x(4, (3, 6, 8)))
    vq = VectorQuantize(dim=4, codebook_size=10, accept_image_fmap=True,
                        orthogonal_reg_weight=0.5, rotation_trick=False)
    _fill(vq, 5)
    fmap = _x(6, (2, 4, 3, 5))
    q, idx, loss = vq(fmap)
    loss.backward()
    vq.eval()
    with torch.no_grad():
        q_eval, idx_eval, _ = vq(fmap)
        from_idx = vq.get_output_from_indices(idx_eval)
    res["fmap"] = {"q": q, "idx": idx, "loss": loss, "q_eval": q_eval, "idx_eval": idx_eval,
                   "from_idx": from_idx}
    return res


def residual_case():
    """ResidualVQ (four quantizers, shared EMA codebook updates), its codes back to outputs."""
    from vector_quantize_pytorch import ResidualVQ
    rvq = ResidualVQ(dim=8, num_quantizers=4, codebook_size=16, decay=0.9,
                     rotation_trick=False)
    _fill(rvq, 7)
    out = _train(rvq, _x(8, (2, 12, 8)))
    rvq.eval()
    x = _x(10, (1, 5, 8))
    with torch.no_grad():
        q, idx, _, all_codes = rvq(x, return_all_codes=True)
        back = rvq.get_output_from_indices(idx)
    out.update(eval_q=q, eval_idx=idx, all_codes=all_codes, back=back)
    return out


def scalar_case():
    """Finite scalar quantization, lookup-free quantization (with its entropy and commitment
    losses) and ResidualFSQ: codes, indices and their inverse, gradients."""
    from vector_quantize_pytorch import FSQ, LFQ, ResidualFSQ
    res = {}
    fsq = FSQ(levels=[8, 5, 5, 3], dim=6)
    _fill(fsq, 11, 0.3)
    res["fsq"] = _train(fsq, _x(12, (2, 7, 6)), aux=False)
    with torch.no_grad():
        codes = fsq.indices_to_codes(res["fsq"]["indices"][-1])
    res["fsq"]["codes"] = codes
    lfq = LFQ(dim=8, codebook_size=256, entropy_loss_weight=0.1,
              commitment_loss_weight=0.25, diversity_gamma=1.0)
    _fill(lfq, 13, 0.3)
    res["lfq"] = _train(lfq, _x(14, (2, 9, 8)))
    with torch.no_grad():
        res["lfq"]["from_idx"] = lfq.indices_to_codes(res["lfq"]["indices"][-1])
    rfsq = ResidualFSQ(dim=6, levels=[8, 5, 5], num_quantizers=3)
    _fill(rfsq, 15, 0.3)
    res["rfsq"] = _train(rfsq, _x(16, (2, 5, 6)), aux=False)
    return res


CASES = {"vq": vq_case, "residual": residual_case, "scalar": scalar_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
