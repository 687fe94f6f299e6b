"""Stable-Baselines3 on ptcore, unmodified, against torch (``sb3_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch): PPO (two
vectorised CartPole environments, and Pendulum with a Gaussian policy), A2C with VecNormalize
and DQN (replay buffer, epsilon-greedy exploration, target network) learning a few hundred
steps of gymnasium's environments; SB3's logged training statistics, the final weights,
``evaluate_policy``, ``predict``, ``evaluate_actions`` and a save/load round trip.  The
policies' action draws come from one NumPy generator in both runs (see the case program);
everything else is the library's.  All agree to float32 rounding, A2C's weights to 1e-5:
RMSprop divides each gradient by its running RMS, so the sign of a gradient element that is
zero but for rounding moves that weight by a whole learning-rate step.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("stable_baselines3", "gymnasium")

NAMES = ["ppo_cartpole", "a2c_cartpole", "dqn_cartpole", "ppo_pendulum"]
runs, test_stable_baselines3 = case_tests(
    "sb3_cases.py", NAMES, per_case={"a2c_cartpole": {"params": {"rtol": 1e-4, "atol": 1e-5}}})
