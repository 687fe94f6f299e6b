"""PEFT, run by tests/as_torch/test_peft.py with the real torch and under
``python -m ptcore.as_torch``: parameter-efficient fine-tuning of tiny randomly initialised
transformers models (GPT-2 with its Conv1D layers, Llama with Linear ones, no downloads) and of
a small CNN.  Every parameter (base and adapter) and every random buffer is overwritten from
NumPy after the adapter is made, so both runs compute on the same numbers.  Each case writes
what it computed to ``<out>/<case>.json``.
"""
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")

VOCAB = 64


def _fill(model, seed, scale=0.1, buffers=()):
    """Overwrite every parameter (and the buffers whose names contain one of ``buffers``)
    with NumPy normals."""
    tensors = [p for _, p in model.named_parameters()]
    tensors += [b for n, b in model.named_buffers() if any(k in n for k in buffers)]
    fill_normal(tensors, seed, scale)


def _ids(seed=1, shape=(2, 8)):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, VOCAB, shape))


def _gpt2():
    import transformers
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_layer=2, n_head=2, n_embd=16,
                                  n_positions=32, resid_pdrop=0.0, embd_pdrop=0.0,
                                  attn_pdrop=0.0, bos_token_id=0, eos_token_id=1)
    model = transformers.GPT2LMHeadModel(cfg)
    _fill(model, 0)
    return model


def _llama():
    import transformers
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=2, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=32,
                                   bos_token_id=0, eos_token_id=1, pad_token_id=1)
    model = transformers.LlamaForCausalLM(cfg)
    _fill(model, 0)
    return model


def _train(model, ids, steps=3, lr=1e-2):
    """Loss, AdamW steps on the trainable parameters; the losses and the trainable count."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "trainable": list(model.get_nb_trainable_parameters()),
            "grad_norm": torch.stack([p.grad.norm() for p in params]).norm()}


def _adapter_weights(model):
    from peft import get_peft_model_state_dict
    return {k: v for k, v in sorted(get_peft_model_state_dict(model).items())}


def lora_gpt2_case():
    """LoRA on GPT-2's Conv1D layers (fan_in_fan_out): training, disabling, a second adapter,
    weighted adapter combination, a save/load round trip (safetensors), merge and unload."""
    from peft import LoraConfig, PeftModel, TaskType, get_peft_model
    ids = _ids()
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn", "c_proj"],
                        lora_dropout=0.0, fan_in_fan_out=True, task_type=TaskType.CAUSAL_LM)
    model = get_peft_model(_gpt2(), config)
    _fill(model, 2)
    res = {"train": _train(model, ids)}
    model.eval()
    res["logits"] = model(input_ids=ids).logits
    with model.disable_adapter():
        res["disabled"] = model(input_ids=ids).logits
    model.add_adapter("second", LoraConfig(r=2, lora_alpha=4, target_modules=["c_attn"],
                                           fan_in_fan_out=True, lora_dropout=0.0))
    with torch.no_grad():
        for n, p in model.named_parameters():
            if ".second." in n:
                p.copy_(torch.full_like(p, 0.05))
    model.set_adapter("second")
    res["second"] = model(input_ids=ids).logits
    res["active"] = model.active_adapters
    model.add_weighted_adapter(["default", "second"], [0.7, 0.3], "combo",
                               combination_type="cat")
    model.set_adapter("combo")
    res["combo"] = model(input_ids=ids).logits
    model.set_adapter("default")
    res["weights"] = _adapter_weights(model)
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d, selected_adapters=["default"])
        reloaded = PeftModel.from_pretrained(_gpt2(), d).eval()
        res["reloaded"] = reloaded(input_ids=ids).logits
    model.delete_adapter("combo")
    model.delete_adapter("second")
    merged = model.merge_and_unload()
    res["merged"] = merged(input_ids=ids).logits
    res["merged_type"] = type(merged.transformer.h[0].attn.c_attn).__name__
    return res


def llama_tuners_case():
    """Adapters on Llama's Linear layers: LoRA with DoRA and rsLoRA and modules_to_save, LoHa,
    LoKr, IA3, OFT, BOFT, VeRA -- trained three steps each, then merged where the tuner can."""
    from peft import (BOFTConfig, IA3Config, LoHaConfig, LoKrConfig, LoraConfig, OFTConfig,
                      VeraConfig, get_peft_model)
    ids = _ids(3)
    targets = ["q_proj", "v_proj"]
    configs = {
        "dora": LoraConfig(r=4, lora_alpha=8, target_modules=targets, use_dora=True),
        "rslora": LoraConfig(r=4, use_rslora=True, target_modules=["q_proj", "down_proj"],
                             modules_to_save=["lm_head"]),
        "loha": LoHaConfig(r=4, alpha=8, target_modules=targets),
        "lokr": LoKrConfig(r=4, alpha=8, target_modules=targets),
        "ia3": IA3Config(target_modules=["k_proj", "down_proj"], feedforward_modules=["down_proj"]),
        "oft": OFTConfig(r=4, oft_block_size=0, target_modules=targets),
        "boft": BOFTConfig(boft_block_size=4, target_modules=targets),
        "vera": VeraConfig(r=4, target_modules=targets),
    }
    res = {}
    for name, config in configs.items():
        model = get_peft_model(_llama(), config)
        # (VeRA's shared projections are buffers drawn from torch's generator)
        _fill(model, 4, scale=0.05, buffers=("vera_A", "vera_B"))
        out = {"train": _train(model, ids)}
        model.eval()
        out["logits"] = model(input_ids=ids).logits
        if name not in ("vera",):
            merged = model.merge_and_unload()
            out["merged"] = merged(input_ids=ids).logits
        res[name] = out
    return res


def prompt_learning_case():
    """Prompt tuning, prefix tuning and P-tuning (its prompt encoder an MLP and an LSTM)."""
    from peft import (PrefixTuningConfig, PromptEncoderConfig, PromptTuningConfig, TaskType,
                      get_peft_model)
    ids = _ids(5)
    configs = {
        "prompt": PromptTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=3),
        "prefix": PrefixTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=3),
        "prefix_projection": PrefixTuningConfig(task_type=TaskType.CAUSAL_LM,
                                                num_virtual_tokens=2, prefix_projection=True,
                                                encoder_hidden_size=8),
        "ptuning_mlp": PromptEncoderConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=3,
                                           encoder_hidden_size=8),
        "ptuning_lstm": PromptEncoderConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=3,
                                            encoder_hidden_size=8,
                                            encoder_reparameterization_type="LSTM"),
    }
    res = {}
    for name, config in configs.items():
        model = get_peft_model(_gpt2() if name != "prefix" else _llama(), config)
        _fill(model, 6, scale=0.1)
        out = {"train": _train(model, ids)}
        model.eval()
        out["logits"] = model(input_ids=ids).logits
        res[name] = out
    # generation with a learned prompt (greedy)
    model = get_peft_model(_gpt2(), configs["prompt"])
    _fill(model, 7)
    res["generate"] = model.generate(input_ids=ids[:1, :4], max_new_tokens=4, do_sample=False,
                                     pad_token_id=1)
    return res


def _sgd(model, inputs, y, steps, lr, after_step=None):
    """SGD steps of the trainable parameters on a cross-entropy loss; the losses."""
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(*inputs), y)
        loss.backward()
        opt.step()
        if after_step is not None:
            after_step(step)
        losses.append(loss.item())
    return losses


def custom_model_case():
    """LoRA on a plain CNN's Conv2d, Embedding and Linear layers (targets by regex), AdaLoRA's
    rank allocation during training, and the functional helpers (inject, state dicts)."""
    from peft import (AdaLoraConfig, LoraConfig, get_peft_model, get_peft_model_state_dict,
                      inject_adapter_in_model, set_peft_model_state_dict)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 6)
            self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
            self.head = torch.nn.Linear(6 * 4 * 4 + 6, 5)

        def forward(self, x, tok):
            h = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
            return self.head(torch.cat([h.flatten(1), self.emb(tok)], 1))

    rng = np.random.default_rng(8)
    x = torch.from_numpy(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    tok = torch.from_numpy(rng.integers(0, 10, 4))
    y = torch.from_numpy(rng.integers(0, 5, 4))
    res = {}
    net = Net()
    model = get_peft_model(net, LoraConfig(r=2, lora_alpha=4, target_modules=r".*(conv|emb|head)"))
    _fill(model, 9, scale=0.2)
    res["lora_losses"] = _sgd(model, (x, tok), y, 4, 0.1)
    res["lora_out"] = model(x, tok)
    sd = get_peft_model_state_dict(model)
    res["lora_keys"] = sorted(sd)
    merged = model.merge_and_unload()
    res["lora_merged"] = merged(x, tok)

    fresh = Net()
    _fill(fresh, 10)
    injected = inject_adapter_in_model(LoraConfig(r=2, target_modules=["head"]), fresh)
    set_peft_model_state_dict(injected, {k: torch.full_like(v, 0.01) for k, v in
                                         get_peft_model_state_dict(injected).items()})
    res["injected"] = injected(x, tok)

    ada_net = Net()
    ada = get_peft_model(ada_net, AdaLoraConfig(r=3, init_r=4, target_r=2,
                                                target_modules=["head"], tinit=1, tfinal=1,
                                                deltaT=1, total_step=6))
    _fill(ada, 11, scale=0.2)
    res["adalora_losses"] = _sgd(ada, (x, tok), y, 6, 0.05,
                                 after_step=ada.base_model.update_and_allocate)
    res["adalora_ranks"] = {k: int(v.sum()) for k, v in
                            ada.base_model.model.head.ranknum.items()}
    res["adalora_out"] = ada(x, tok)
    return res


CASES = {"lora_gpt2": lora_gpt2_case, "llama_tuners": llama_tuners_case,
         "prompt_learning": prompt_learning_case, "custom_model": custom_model_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
