"""Hugging Face models under ``torch.compile`` (the cases of test_hf_compile.py): under the
launcher the model is ``ptcore.compile``d; the torch run is eager (torch's compile of these
models takes a minute), so the compiled ptcore results are checked against torch eager.
Weights and inputs from NumPy; dropout off."""
import sys

import numpy as np
import torch
import transformers

from case_results import fill_normal, main

COMPILE = "ptcore" in sys.modules
B = 2


def _config(name, **kw):
    cfg = transformers.AutoConfig.for_model(name, **kw)
    for a in dir(cfg):
        if ("dropout" in a or a.endswith("_pdrop") or a == "drop_path_rate") and \
                isinstance(getattr(cfg, a, None), float):
            setattr(cfg, a, 0.0)
    return cfg


def _run(model, inputs, seed):
    transformers.logging.set_verbosity_error()
    fill_normal(model.parameters(), seed, scale=0.05)
    model.train()
    run = torch.compile(model) if COMPILE else model
    out = run(**inputs)
    out = run(**inputs)             # (the second call runs the compiled graphs)
    out.loss.backward()
    res = {"loss": out.loss, "logits": out.logits,
           "grads": {k: p.grad for k, p in model.named_parameters() if p.grad is not None}}
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = run(**inputs).loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["losses"] = losses
    model.eval()
    with torch.no_grad():
        res["eval_logits"] = run(**inputs).logits
    return res


def gpt2_case():
    cfg = _config("gpt2", n_embd=32, n_layer=2, n_head=4, vocab_size=64, n_positions=32)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.from_numpy(np.random.default_rng(1).integers(0, 64, size=(B, 10)))
    return _run(model, {"input_ids": ids, "labels": ids}, 3)


def vit_case():
    cfg = _config("vit", image_size=16, patch_size=4, hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=4, intermediate_size=64, num_labels=3)
    model = transformers.ViTForImageClassification(cfg)
    px = torch.from_numpy(np.random.default_rng(2).standard_normal((B, 3, 16, 16))
                          .astype(np.float32))
    return _run(model, {"pixel_values": px, "labels": torch.tensor([0, 2])}, 4)


def mobilevit_case():
    # (its unfolding takes a tensor-shape path when jit.is_tracing() is True)
    cfg = _config("mobilevit", image_size=32, patch_size=2, hidden_sizes=[16, 24, 32],
                  neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32], num_labels=3)
    model = transformers.MobileViTForImageClassification(cfg)
    px = torch.from_numpy(np.random.default_rng(5).standard_normal((B, 3, 32, 32))
                          .astype(np.float32))
    return _run(model, {"pixel_values": px, "labels": torch.tensor([1, 2])}, 6)


CASES = {"gpt2": gpt2_case, "vit": vit_case, "mobilevit": mobilevit_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
