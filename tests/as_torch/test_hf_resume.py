"""A Hugging Face ``Trainer`` checkpoint made by one library resumed by the other: ptcore
under the launcher writes ``checkpoint-2`` (model, optimizer, scheduler, ``rng_state.pth``),
torch resumes it to step 4, and the other way round.  Resuming calls
``torch.random.set_rng_state`` on the saved CPU generator state, which torch refused while
ptcore's state was 16 bytes.  Real interpreters, generous timeouts, no timing checks."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

TIMEOUT = 600

PROGRAM = textwrap.dedent("""\
    import json, sys, warnings
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    warnings.simplefilter("ignore")
    out, resume = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_positions=16, n_embd=16, n_layer=1,
                                       n_head=2))

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            ids = torch.tensor(np.arange(i, i + 8) % 50)
            return {"input_ids": ids, "labels": ids}

    args = TrainingArguments(output_dir=out, per_device_train_batch_size=4, max_steps=4,
                             save_steps=2, logging_steps=1, report_to=[], use_cpu=True,
                             dataloader_num_workers=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=Data())
    result = trainer.train(resume_from_checkpoint=resume)
    print(json.dumps({"loss": result.training_loss, "step": trainer.state.global_step}))
""")


def _python(args, cwd, launcher):
    env = dict(os.environ)
    env.pop("PYTHONSAFEPATH", None)
    env.pop("PTCORE_AS_TORCH", None)
    env.setdefault("PTCORE_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    pre = ["-m", "ptcore.as_torch"] if launcher else []
    proc = subprocess.run([sys.executable, *pre, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        pytest.fail(f"{'ptcore' if launcher else 'torch'} {args} exited with "
                    f"{proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("writer", ["ptcore", "torch"])
def test_trainer_checkpoint_resumed_by_the_other_library(tmp_path, writer):
    (tmp_path / "train.py").write_text(PROGRAM)
    first = _python(["train.py", "run"], tmp_path, launcher=writer == "ptcore")
    assert first["step"] == 4
    ckpt = tmp_path / "run" / "checkpoint-2"
    assert (ckpt / "rng_state.pth").exists()
    resumed = _python(["train.py", "resumed", str(ckpt)], tmp_path,
                      launcher=writer != "ptcore")
    assert resumed["step"] == 4
    # the steps after the checkpoint ran on the same weights and data: the mean loss over
    # the run is close to the uninterrupted one (dropout draws differ between libraries)
    assert abs(resumed["loss"] - first["loss"]) < 0.05 * abs(first["loss"])
