"""Optimizer libraries on ptcore, unmodified, against torch (``optimizer_libraries_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), a small MLP with weights and data from NumPy trained six steps: schedulefree's AdamW,
SGD and RAdam (with warmup, weight decay, their closure forms, the wrapper around a torch
optimizer; parameters in train and in eval mode) and 28 optimizers of torch-optimizer
(Adahessian from a create_graph backward with NumPy-drawn Hutchinson probes, Shampoo's
SVD-based matrix roots, Lookahead around SGD ...).  Losses and parameters agree to float32
rounding.

Adahessian needed AccumulateGrad to copy a create_graph gradient as torch does (into a tensor
with the parameter's strides): ptcore kept the engine's result, for a Linear weight a view
(the transposed product), and Adahessian's ``grad.detach_()`` raised "Can't detach views
in-place".
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("schedulefree", "torch_optimizer")

NAMES = ["schedulefree", "torch_optimizer"]
runs, test_optimizer_libraries = case_tests("optimizer_libraries_cases.py", NAMES)
