"""Forward+backward of small Hugging Face transformers models: ptcore (through
``python -m ptcore.as_torch``, in a subprocess) against PyTorch (in this process).

    python benchmarks/transformers_models.py            # small models (hidden 128, 4 layers)
    python benchmarks/transformers_models.py --tiny     # the test suite's models (hidden 32)

Each model is built from a config with PyTorch, saved with ``save_pretrained`` and loaded by
both libraries; the table gives the median seconds of one forward+backward of the loss on a
batch of 8 sequences of 64 tokens (16 of 10 with ``--tiny``) and the ratio ptcore / PyTorch
(lower is better).
"""
import json
import os
import subprocess
import sys
import tempfile

from _harness import median_time

CONFIGS = {
    "gpt2": ("GPT2LMHeadModel", "GPT2Config", dict(n_layer=4, n_head=4, n_embd=128,
                                                   n_positions=128, bos_token_id=0,
                                                   eos_token_id=1)),
    "llama": ("LlamaForCausalLM", "LlamaConfig", dict(
        hidden_size=128, intermediate_size=256, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128)),
    "bert": ("BertForMaskedLM", "BertConfig", dict(
        hidden_size=128, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256,
        max_position_embeddings=128)),
    "t5": ("T5ForConditionalGeneration", "T5Config", dict(
        d_model=128, d_kv=32, d_ff=256, num_layers=4, num_heads=4, decoder_start_token_id=0)),
    "bart": ("BartForConditionalGeneration", "BartConfig", dict(
        d_model=128, encoder_layers=4, decoder_layers=4, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
        max_position_embeddings=128)),
}
TINY = {"gpt2": dict(n_layer=2, n_head=2, n_embd=32), "llama": dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4),
    "bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64),
    "t5": dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
    "bart": dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                 decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64)}
VOCAB = 1000


def _time_models(root, tiny):
    """{model: median seconds of forward+backward} with whatever ``torch`` is."""
    import numpy as np
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    batch, seq = (16, 10) if tiny else (8, 64)
    ids = torch.tensor(np.random.default_rng(0).integers(3, VOCAB, (batch, seq)))
    out = {}
    for name in CONFIGS:
        path = os.path.join(root, name)
        config = transformers.AutoConfig.from_pretrained(path)
        model = getattr(transformers, config.architectures[0]).from_pretrained(path)
        model.train()
        labels = ids[:, :8].contiguous() if name in ("t5", "bart") else ids

        def step():
            model.zero_grad()
            model(input_ids=ids, labels=labels).loss.backward()
        out[name] = median_time(step, repeat=7, min_time=0.2)
    return out


def main(argv):
    tiny = "--tiny" in argv
    if "--worker" in argv:
        print(json.dumps(_time_models(argv[argv.index("--worker") + 1], tiny)))
        return
    import torch
    import transformers
    transformers.logging.disable_progress_bar()
    threads = os.environ.get("PTCORE_NUM_THREADS") or str(torch.get_num_threads())
    with tempfile.TemporaryDirectory() as root:
        for name, (model_cls, config_cls, kwargs) in CONFIGS.items():
            kwargs = dict(kwargs, **TINY[name]) if tiny else kwargs
            config = getattr(transformers, config_cls)(vocab_size=VOCAB, **kwargs)
            torch.manual_seed(0)
            getattr(transformers, model_cls)(config).save_pretrained(os.path.join(root, name))
        env = dict(os.environ, PTCORE_NUM_THREADS=threads, TRANSFORMERS_VERBOSITY="error")
        proc = subprocess.run([sys.executable, "-m", "ptcore.as_torch", os.path.abspath(__file__),
                               *argv, "--worker", root], env=env, capture_output=True,
                              text=True)
        if proc.returncode:
            sys.exit(f"the ptcore run failed:\n{proc.stderr[-3000:]}")
        pt = json.loads(proc.stdout.strip().splitlines()[-1])
        th = _time_models(root, tiny)
    print(f"forward+backward, median seconds ({'tiny' if tiny else 'small'} models, "
          f"{threads} threads): model, PyTorch, ptcore, ptcore/PyTorch")
    for name in CONFIGS:
        print(f"  {name:6s} {th[name]:9.5f} {pt[name]:9.5f} {pt[name] / th[name]:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
