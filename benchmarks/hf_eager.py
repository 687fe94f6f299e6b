"""Eager training steps of tiny Hugging Face transformers models: ptcore (a
``python -m ptcore.as_torch`` worker process) against PyTorch (a plain worker
process), timed in alternation in the same run.

    python benchmarks/hf_eager.py [--only NAME ...] [--repeat N] [--clock cpu|wall]
                                  [--attn sdpa|eager] [--threads N]

Each model (hidden 32, 2 layers: the per-op host cost dominates, as it does in
every small model) is built from its config with PyTorch and saved with
``save_pretrained``; both workers load it and run the same step on the same
batch (2 sequences of 8 tokens, 2 images, 2 spectrograms): zero the gradients,
forward, loss, backward, ``optim.SGD.step``.  The parent asks the two workers
for one sample each in turn (a sample is as many steps as take about 50 ms),
so a load change on the shared machine biases neither; the table gives the
median milliseconds per step and the ratio ptcore / PyTorch (lower is better).
``--clock cpu`` (the default) measures the worker thread's CPU time, which is
the right clock at one thread on a loaded machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

V = 64
_T = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
          vocab_size=V, max_position_embeddings=64)
# name: (kind, model class, config overrides)
MODELS = {
    "gpt2": ("txt", "GPT2LMHeadModel", dict(vocab_size=V, n_embd=32, n_layer=2, n_head=4,
                                             n_positions=64)),
    "gpt_neox": ("txt", "GPTNeoXForCausalLM", dict(_T, rotary_pct=0.25)),
    "llama": ("txt", "LlamaForCausalLM", dict(_T, num_key_value_heads=2)),
    "mistral": ("txt", "MistralForCausalLM", dict(_T, num_key_value_heads=2, sliding_window=4)),
    "bert": ("txt", "BertForMaskedLM", dict(_T)),
    "roberta": ("txt", "RobertaForSequenceClassification", dict(_T, pad_token_id=1,
                                                                 num_labels=3)),
    "t5": ("txt", "T5ForConditionalGeneration", dict(vocab_size=V, d_model=32, d_kv=8, d_ff=64,
                                                     num_layers=2, num_heads=4,
                                                     decoder_start_token_id=0)),
    "vit": ("img", "ViTForImageClassification", dict(
        image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64, num_labels=3)),
    "swin": ("img", "SwinForImageClassification", dict(
        image_size=16, patch_size=2, embed_dim=8, depths=[1, 1], num_heads=[2, 2],
        window_size=2, num_labels=3)),
    "whisper": ("aud", "WhisperForConditionalGeneration", dict(
        vocab_size=V, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
        decoder_ffn_dim=64, num_mel_bins=8, max_source_positions=16, max_target_positions=32,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)),
}
_DROPOUTS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout",
             "attention_dropout", "activation_dropout", "hidden_dropout", "resid_pdrop",
             "embd_pdrop", "attn_pdrop", "drop_path_rate", "dropout_rate", "classifier_dropout")


def _inputs(torch, name):
    import numpy as np
    rng = np.random.default_rng(7)
    kind, cls, _ = MODELS[name]
    if kind == "img":
        return {"pixel_values": torch.tensor(rng.standard_normal((2, 3, 16, 16), np.float32)),
                "labels": torch.tensor([0, 2])}
    if kind == "aud":
        return {"input_features": torch.tensor(rng.standard_normal((2, 8, 32), np.float32)),
                "labels": torch.tensor(rng.integers(3, V, size=(2, 5)))}
    ids = rng.integers(3, V, size=(2, 8))
    mask = np.ones((2, 8), dtype=np.int64)
    mask[1, -2:] = 0
    d = {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask)}
    if "Classification" in cls:
        d["labels"] = torch.tensor([0, 2])
    elif name == "t5":
        d["labels"] = torch.tensor(ids[:, :5])
    else:
        d["labels"] = torch.tensor(np.where(mask == 1, ids, -100))
    return d


def _make(root):
    """Save every model's weights (PyTorch, seed 0, dropout off) under ``root``."""
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    for name, (_, cls, kw) in MODELS.items():
        cfg = transformers.AutoConfig.for_model(name, **kw)
        for a in _DROPOUTS:
            if isinstance(getattr(cfg, a, None), float):
                setattr(cfg, a, 0.0)
        torch.manual_seed(0)
        getattr(transformers, cls)(cfg).save_pretrained(os.path.join(root, name))


def _worker(root, names, attn, threads, clock):
    """Serve ``name n`` lines on stdin: run n steps, answer the seconds per step."""
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    torch.set_num_threads(threads)
    clock = time.thread_time if clock == "cpu" else time.perf_counter
    steps = {}
    for name in names:
        kind, cls, _ = MODELS[name]
        kw = {"attn_implementation": attn} if kind == "txt" else {}
        model = getattr(transformers, cls).from_pretrained(os.path.join(root, name), **kw)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        inp = _inputs(torch, name)

        def step(model=model, opt=opt, inp=inp):
            opt.zero_grad()
            model(**inp).loss.backward()
            opt.step()
        for _ in range(3):
            step()
        steps[name] = step
    print("ready", flush=True)
    import gc
    for line in sys.stdin:
        name, n = line.split()
        gc.collect()
        t0 = clock()
        for _ in range(int(n)):
            steps[name]()
        print((clock() - t0) / int(n), flush=True)


def _ask(proc, name, n):
    proc.stdin.write(f"{name} {n}\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        sys.exit(f"a worker died:\n{proc.stderr.read()[-3000:]}")
    return float(line)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="model names (default: all)")
    ap.add_argument("--repeat", type=int, default=9, help="samples per library and model")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                    help="attn_implementation of the text models")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = args.only or list(MODELS)
    if args.worker:
        return _worker(args.worker, names, args.attn, args.threads, args.clock)
    env = dict(os.environ, PTCORE_NUM_THREADS=str(args.threads), TRANSFORMERS_VERBOSITY="error")
    for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        env[v] = str(args.threads)
    me = os.path.abspath(__file__)
    with tempfile.TemporaryDirectory() as root:
        _make(root)
        common = [me, "--worker", root, "--only", *names, "--attn", args.attn,
                  "--threads", str(args.threads), "--clock", args.clock]
        procs = {lib: subprocess.Popen([sys.executable, *pre, *common], env=env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE)
                 for lib, pre in (("ptcore", ["-m", "ptcore.as_torch"]), ("torch", []))}
        try:
            for proc in procs.values():
                if proc.stdout.readline().strip() != "ready":
                    sys.exit(f"a worker failed:\n{proc.stderr.read()[-3000:]}")
            rows = []
            for name in names:
                reps = {lib: max(1, int(0.05 / _ask(p, name, 1))) for lib, p in procs.items()}
                times = {lib: [] for lib in procs}
                for _ in range(args.repeat):
                    for lib, p in procs.items():
                        times[lib].append(_ask(p, name, reps[lib]))
                rows.append((name, statistics.median(times["ptcore"]),
                             statistics.median(times["torch"])))
        finally:
            for proc in procs.values():
                proc.stdin.close()
                proc.wait()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"forward+backward+SGD step of tiny HF models, {args.threads} thread(s), "
          f"attn={args.attn}, clock={args.clock}, median of {args.repeat}, load {load:.2f}")
    print("| model | ptcore ms | torch ms | ptcore/torch |\n|---|---:|---:|---:|")
    for name, p, t in rows:
        print(f"| {name} | {p * 1e3:.2f} | {t * 1e3:.2f} | {p / t:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
