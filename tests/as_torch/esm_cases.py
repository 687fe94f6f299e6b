"""fair-esm (ESM protein language models), run by tests/as_torch/test_esm.py with the real
torch and under ``python -m ptcore.as_torch``: small ESM-2, ESM-1b and MSA Transformer models
built from arguments (no download), the library's alphabets and batch converters, masked
language-model training steps, representations, attention maps and contact predictions;
weights from NumPy, dropout 0.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings
from argparse import Namespace

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")

SEQS = [("a", "MKTAYIAKQRQISFVKSHFSRQ"), ("b", "KALTARQQEVFDLIRD"), ("c", "MVLSEGEWQLVLHVWAKV")]


def _fill(model, seed, scale=0.1):
    fill_normal([t for _, t in sorted(model.state_dict().items())], seed, scale)


def _mlm_steps(model, tokens, alphabet, steps=3):
    """Masked-LM steps: every fifth real token masked; cross-entropy on those."""
    masked = tokens.clone()
    pick = torch.zeros_like(tokens, dtype=torch.bool)
    pick[:, 2::5] = True
    pick &= tokens.ne(alphabet.padding_idx) & tokens.ne(alphabet.eos_idx)
    masked[pick] = alphabet.mask_idx
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        logits = model(masked)["logits"]
        loss = torch.nn.functional.cross_entropy(logits[pick], tokens[pick])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def esm2_case():
    """ESM-2: batch conversion with padding, MLM training (token dropout), representations of
    chosen layers, attentions and contacts."""
    import esm
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    model = esm.model.esm2.ESM2(num_layers=2, embed_dim=32, attention_heads=4,
                                alphabet=alphabet)
    _fill(model, 1)
    labels, strs, tokens = alphabet.get_batch_converter()(SEQS)
    losses = _mlm_steps(model, tokens, alphabet)
    model.eval()
    with torch.no_grad():
        out = model(tokens, repr_layers=[0, 1, 2], return_contacts=True)
    return {"labels": labels, "strs": strs, "tokens": tokens, "losses": losses,
            "logits": out["logits"], "reps": [out["representations"][i] for i in range(3)],
            "attentions": out["attentions"], "contacts": out["contacts"]}


def esm1b_case():
    """ESM-1b (ProteinBertModel from arguments): learned positions, MLM steps, contacts."""
    import esm
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    args = Namespace(arch="roberta_large", embed_dim=32, ffn_embed_dim=64, attention_heads=4,
                     layers=2, max_positions=64, dropout=0.0, attention_dropout=0.0,
                     activation_dropout=0.0, final_bias=True)
    model = esm.model.esm1.ProteinBertModel(args, alphabet)
    _fill(model, 2)
    _, _, tokens = alphabet.get_batch_converter()(SEQS)
    losses = _mlm_steps(model, tokens, alphabet)
    model.eval()
    with torch.no_grad():
        out = model(tokens, repr_layers=[2], return_contacts=True)
    return {"losses": losses, "logits": out["logits"], "rep": out["representations"][2],
            "contacts": out["contacts"]}


def msa_case():
    """MSA Transformer: row and column (axial) attention over an MSA batch, MLM steps,
    row-attention contacts."""
    import esm
    alphabet = esm.data.Alphabet.from_architecture("msa_transformer")
    args = Namespace(embed_dim=32, ffn_embed_dim=64, attention_heads=4, layers=2,
                     max_positions=64, dropout=0.0, attention_dropout=0.0,
                     activation_dropout=0.0, max_tokens=2 ** 14, embed_positions_msa=True)
    model = esm.model.msa_transformer.MSATransformer(args, alphabet)
    _fill(model, 3)
    msa = [("s1", "MKTAYIAKQRQ"), ("s2", "MKTAYLAKQRE"), ("s3", "MRTAYIAQQRQ")]
    _, _, tokens = alphabet.get_batch_converter()([msa, msa[::-1]])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    masked = tokens.clone()
    masked[:, :, 3::4] = alphabet.mask_idx
    losses = []
    for _ in range(2):
        opt.zero_grad()
        logits = model(masked)["logits"]
        loss = torch.nn.functional.cross_entropy(logits[:, :, 3::4].reshape(-1, logits.shape[-1]),
                                                 tokens[:, :, 3::4].reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(tokens, repr_layers=[2], return_contacts=True)
    return {"tokens": tokens, "losses": losses, "logits": out["logits"],
            "rep": out["representations"][2], "row": out["row_attentions"],
            "col": out["col_attentions"], "contacts": out["contacts"]}


CASES = {"esm2": esm2_case, "esm1b": esm1b_case, "msa": msa_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
