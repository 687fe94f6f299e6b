"""Tiny Hugging Face transformers models run the same way on torch and on ptcore.

Imported by the tests (with the real torch) and run as a program under
``python -m ptcore.as_torch hf_cases.py MODEL_ROOT OUT_DIR NAME...`` (where ``torch`` is
ptcore): :func:`run_case` loads a model saved in ``MODEL_ROOT/NAME`` with ``from_pretrained``
and records, as NumPy arrays, its loss and logits, every parameter's gradient, three AdamW
steps, greedy and sampled ``generate``, a ``save_pretrained`` round trip and three ``Trainer``
steps; :func:`run_accelerate` trains a small network with an ``accelerate.Accelerator``.  No data is downloaded: the models are built from small configs (dropout 0) by
:func:`make_model` and written with ``save_pretrained`` (safetensors).
"""
import json
import os
import sys
import time

import numpy as np
import torch
import transformers

VOCAB = 96
BATCH, SEQ, PAD = 2, 10, 3           # the second row ends with PAD padding tokens
PROMPT, NEW_TOKENS = 4, 5
TOP_K, TEMPERATURE = 8, 0.8

CONFIGS = {
    "gpt2": ("GPT2LMHeadModel", "GPT2Config", dict(
        n_layer=2, n_head=2, n_embd=32, n_positions=32, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=0, eos_token_id=1, pad_token_id=1)),
    "llama": ("LlamaForCausalLM", "LlamaConfig", dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=32, bos_token_id=0, eos_token_id=1,
        pad_token_id=1)),
    "bert": ("BertForMaskedLM", "BertConfig", dict(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        pad_token_id=1)),
    "t5": ("T5ForConditionalGeneration", "T5Config", dict(
        d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, dropout_rate=0.0,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)),
    "bart": ("BartForConditionalGeneration", "BartConfig", dict(
        d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=32, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
        forced_eos_token_id=None)),
    # a state-space model: its selective scan imports torch._higher_order_ops
    "mamba": ("MambaForCausalLM", "MambaConfig", dict(
        hidden_size=32, state_size=4, num_hidden_layers=2, expand=2, conv_kernel=3,
        use_mambapy=False, bos_token_id=0, eos_token_id=1, pad_token_id=1)),
}
GENERATES = {"gpt2", "llama", "t5", "bart", "mamba"}
ENCODER_DECODER = {"t5", "bart"}
TRAINER = {"gpt2", "bart"}


def make_model(name, directory, seed=0):
    """Build the tiny model ``name`` with a seeded initialisation and save it (safetensors)."""
    model_cls, config_cls, kwargs = CONFIGS[name]
    config = getattr(transformers, config_cls)(vocab_size=VOCAB, **kwargs)
    torch.manual_seed(seed)
    model = getattr(transformers, model_cls)(config)
    model.save_pretrained(directory)


def batch(name):
    """The inputs and labels (integer arrays from a fixed NumPy generator)."""
    rng = np.random.default_rng(1234)
    ids = rng.integers(3, VOCAB, size=(BATCH, SEQ))
    pad = CONFIGS[name][2]["pad_token_id"]
    mask = np.ones((BATCH, SEQ), dtype=np.int64)
    ids[1, SEQ - PAD:] = pad
    mask[1, SEQ - PAD:] = 0
    labels = np.where(mask == 1, ids, -100)
    if name == "bert":                       # masked LM: predict every third token only
        labels[:, 1::3] = -100
    out = {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask),
           "labels": torch.tensor(labels)}
    if name in ENCODER_DECODER:             # the decoder's targets
        out["labels"] = torch.tensor(rng.integers(3, VOCAB, size=(BATCH, 6)))
    return out


def _np(t):
    return t.detach().cpu().numpy().copy()


def _load(model_dir):
    config = transformers.AutoConfig.from_pretrained(model_dir)
    return getattr(transformers, config.architectures[0]).from_pretrained(model_dir)


def _grads(model):
    return {f"grad/{n}": _np(p.grad) for n, p in model.named_parameters() if p.grad is not None}


def _params(model, prefix):
    return {f"{prefix}/{n}": _np(p) for n, p in model.named_parameters()}


def _timed(fn, reps=5):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run_case(name, model_dir, work_dir):
    """Everything recorded for model ``name`` saved in ``model_dir``: a dict of arrays and a
    dict of JSON values."""
    arrays, info = {}, {}
    inputs = batch(name)
    model = _load(model_dir)
    model.eval()

    # forward: loss and logits; backward: every gradient
    out = model(**inputs)
    arrays["logits"] = _np(out.logits)
    arrays["loss"] = _np(out.loss)
    out.loss.backward()
    arrays.update(_grads(model))

    def fwd_bwd():
        model.zero_grad()
        model(**inputs).loss.backward()
    info["fwd_bwd_seconds"] = _timed(fwd_bwd)
    model.zero_grad()

    # save_pretrained round trip (before training changes the weights)
    saved = os.path.join(work_dir, f"{name}-saved")
    model.save_pretrained(saved)
    again = _load(saved)
    again.eval()
    with torch.no_grad():
        arrays["reloaded_logits"] = _np(again(**inputs).logits)
    info["saved_files"] = sorted(os.listdir(saved))

    # generate: greedy, and sampled (seeded) with the processed scores of every step
    if name in GENERATES:
        gen_in = ({"input_ids": inputs["input_ids"], "attention_mask": inputs["attention_mask"]}
                  if name in ENCODER_DECODER else
                  {"input_ids": inputs["input_ids"][:, :PROMPT],
                   "attention_mask": torch.ones(BATCH, PROMPT, dtype=torch.int64)})
        with torch.no_grad():
            greedy = model.generate(**gen_in, max_new_tokens=NEW_TOKENS, do_sample=False)
            arrays["greedy"] = _np(greedy)
            runs = []
            for _ in range(2):
                torch.manual_seed(7)
                runs.append(model.generate(**gen_in, max_new_tokens=NEW_TOKENS, do_sample=True,
                                           top_k=TOP_K, temperature=TEMPERATURE,
                                           output_scores=True, return_dict_in_generate=True))
        arrays["sampled"] = _np(runs[0].sequences)
        arrays["sampled_scores"] = np.stack([_np(s) for s in runs[0].scores])
        info["sampled_repeats"] = bool(torch.equal(runs[0].sequences, runs[1].sequences))

    # three AdamW steps on the batch: the parameters after the first (later steps amplify
    # rounding where a gradient is about zero), the loss before each
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    losses = []
    for step in range(3):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step == 0:
            arrays.update(_params(model, "adamw"))
    info["adamw_losses"] = losses

    # three Trainer steps (use_cpu, sequential batches) from the saved weights
    if name in TRAINER:
        model = _load(model_dir)
        rows = [{k: v[i % BATCH] for k, v in inputs.items()} for i in range(6)]
        args = transformers.TrainingArguments(
            output_dir=os.path.join(work_dir, f"{name}-trainer"), use_cpu=True, max_steps=3,
            per_device_train_batch_size=2, learning_rate=1e-3, logging_steps=1, report_to=[],
            save_strategy="no", train_sampling_strategy="sequential", seed=0,
            disable_tqdm=True, dataloader_num_workers=0)
        trainer = transformers.Trainer(model=model, args=args, train_dataset=rows)
        trainer.train()
        info["trainer_losses"] = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        info["trainer_grad_norms"] = [h["grad_norm"] for h in trainer.state.log_history
                                      if "grad_norm" in h]
        arrays.update(_params(model, "trainer"))
    return arrays, info


def run_accelerate(work_dir):
    """Three steps of a small network trained through ``accelerate.Accelerator`` (CPU):
    ``prepare``, ``backward``, ``clip_grad_norm_``, ``gather``; then ``save_state``, the
    parameters zeroed, and ``load_state``."""
    import accelerate
    accelerator = accelerate.Accelerator(cpu=True)
    accelerate.utils.set_seed(0)
    rng = np.random.default_rng(5)
    x = torch.tensor(rng.standard_normal((8, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 8))
    weights = [torch.tensor(rng.standard_normal(s) * 0.3, dtype=torch.float32)
               for s in [(16, 6), (16,), (3, 16), (3,)]]

    def network():
        net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
        with torch.no_grad():
            for p, w in zip(net.parameters(), weights):
                p.copy_(w)
        return net
    net = network()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    net, opt, loader = accelerator.prepare(net, opt, loader)
    losses, norms = [], []
    for xb, yb in loader:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xb), yb)
        accelerator.backward(loss)
        norms.append(float(accelerator.clip_grad_norm_(net.parameters(), 1.0)))
        opt.step()
        losses.append(float(accelerator.gather(loss.detach()).mean()))
    arrays = _params(net, "accelerate")
    state = os.path.join(work_dir, "accelerate-state")
    accelerator.save_state(state)
    trained = [p.detach().clone() for p in net.parameters()]
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
    accelerator.load_state(state)
    restored = all(torch.equal(a, b) for a, b in zip(net.parameters(), trained))
    return arrays, {"accelerate_losses": losses, "accelerate_grad_norms": norms,
                    "state_restored": restored}


def reference_scores(name, model_dir, sequences):
    """torch's processed sampling scores along the given sequences (teacher forcing): the
    temperature- and top-k-warped logits each sampled token was drawn from."""
    from transformers.generation.logits_process import (LogitsProcessorList,
                                                        TemperatureLogitsWarper, TopKLogitsWarper)
    model = _load(model_dir)
    model.eval()
    seq = torch.tensor(sequences)
    inputs = batch(name)
    with torch.no_grad():
        if name in ENCODER_DECODER:
            logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                           decoder_input_ids=seq[:, :-1]).logits
            start = 0
        else:
            logits = model(input_ids=seq[:, :-1]).logits
            start = PROMPT - 1
    warp = LogitsProcessorList([TemperatureLogitsWarper(TEMPERATURE), TopKLogitsWarper(TOP_K)])
    steps = []
    for t in range(seq.shape[1] - 1 - start):
        prefix = seq[:, :start + t + 1]
        steps.append(_np(warp(prefix, logits[:, start + t, :].clone())))
    return np.stack(steps)


def _foreign_torch_modules():
    """Modules loaded from a real torch installation (there must be none under the launcher)."""
    import ptcore
    return sorted(n for n, m in list(sys.modules.items())
                  if (n == "torch" or n.startswith("torch.")) and m is not None
                  and not getattr(m, "__name__", "").startswith("ptcore")
                  and m is not ptcore)


def _real_torch_on_path():
    """Whether a torch package is installed in a folder of sys.path (the launcher's answers
    aside)."""
    return any(os.path.isfile(os.path.join(d or ".", "torch", "__init__.py")) for d in sys.path)


def main(argv):
    model_root, out_dir, *names = argv
    import ptcore
    assert torch is ptcore, "run this under python -m ptcore.as_torch"
    for name in names:
        if name == "accelerate":
            arrays, info = run_accelerate(out_dir)
        else:
            arrays, info = run_case(name, os.path.join(model_root, name), out_dir)
        info["foreign_torch_modules"] = _foreign_torch_modules()
        info["real_torch_on_path"] = _real_torch_on_path()
        np.savez(os.path.join(out_dir, f"{name}.npz"), **arrays)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(info, f)


if __name__ == "__main__":
    main(sys.argv[1:])
