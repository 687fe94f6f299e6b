"""Stable-Baselines3, run by tests/as_torch/test_stable_baselines3.py with the real torch and
under ``python -m ptcore.as_torch``: PPO, A2C and DQN learning a few hundred steps of
gymnasium's CartPole (and PPO on Pendulum), saving and loading the model, evaluating it.

Both runs must see the same numbers: the networks' weights are overwritten from NumPy after
the model is built, the environments and SB3's own draws (exploration, replay sampling,
minibatch order) are seeded NumPy, and the policies' action draws -- which SB3 makes with
``torch.distributions`` from torch's generator, a stream ptcore does not reproduce -- are
made here by inverse transform from a NumPy generator (:func:`_numpy_sampling`; the
distributions' other methods, log-probabilities and entropies, are the library's).  Each case
writes what it computed to ``<out>/<case>.json``.
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")
os.environ.setdefault("SB3_NO_TQDM", "1")


def _numpy_sampling(seed):
    """Make ``Categorical.sample`` and ``Normal.rsample``/``sample`` draw their uniforms and
    normals from a NumPy generator (the same in both runs)."""
    rng = np.random.default_rng(seed)
    from torch.distributions import Categorical, Normal

    def categorical_sample(self, sample_shape=torch.Size()):
        probs = self.probs.detach()
        shape = tuple(sample_shape) + tuple(probs.shape[:-1])
        u = torch.from_numpy(rng.random(shape).astype(np.float32)).unsqueeze(-1)
        cdf = probs.cumsum(-1).expand(shape + probs.shape[-1:])
        return (cdf < u).sum(-1).clamp(max=probs.shape[-1] - 1)

    def normal_rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        return self.loc + eps * self.scale

    def normal_sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            return normal_rsample(self, sample_shape)

    Categorical.sample = categorical_sample
    Normal.rsample = normal_rsample
    Normal.sample = normal_sample


def _fill(policy, seed, scale=0.2):
    fill_normal([t for _, t in sorted(policy.state_dict().items())], seed, scale)


def _fill_dqn(model, seed):
    _fill(model.policy.q_net, seed)
    model.policy.q_net_target.load_state_dict(model.policy.q_net.state_dict())


class _Log:
    """Collects the scalars SB3 records at each dump (its logger's name_to_value)."""

    def __init__(self, model, keys):
        self.keys, self.rows = keys, []
        from stable_baselines3.common.logger import Logger
        logger = Logger(folder=None, output_formats=[])
        original = logger.dump

        def dump(step=0):
            self.rows.append({k: float(logger.name_to_value[k]) for k in self.keys
                              if k in logger.name_to_value})
            original(step)
        logger.dump = dump
        model.set_logger(logger)


def _evaluate(model, env_id, seed):
    import gymnasium as gym
    from stable_baselines3.common.evaluation import evaluate_policy
    env = gym.make(env_id)
    env.reset(seed=seed)
    mean, std = evaluate_policy(model, env, n_eval_episodes=3, deterministic=True)
    return [mean, std]


def _roundtrip(model, cls, obs):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.zip")
        model.save(path)
        loaded = cls.load(path)
    action, _ = loaded.predict(obs, deterministic=True)
    return {"action": action, "params": dict(loaded.policy.state_dict())}


def ppo_cartpole_case():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    _numpy_sampling(0)
    env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, learning_rate=3e-3,
                seed=0, policy_kwargs=dict(net_arch=[16, 16]), device="cpu")
    _fill(model.policy, 1)
    log = _Log(model, ["train/loss", "train/value_loss", "train/policy_gradient_loss",
                       "train/entropy_loss", "train/approx_kl", "train/clip_fraction",
                       "train/explained_variance"])
    model.learn(total_timesteps=384)
    obs = env.reset()
    res = {"log": log.rows, "params": dict(model.policy.state_dict()),
           "eval": _evaluate(model, "CartPole-v1", 5),
           "predict": model.predict(obs, deterministic=True)[0]}
    res["loaded"] = _roundtrip(model, PPO, obs)
    values, log_prob, entropy = model.policy.evaluate_actions(
        torch.as_tensor(obs), torch.as_tensor(res["predict"]))
    res["evaluate_actions"] = [values, log_prob, entropy]
    return res


def a2c_cartpole_case():
    from stable_baselines3 import A2C
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize
    _numpy_sampling(2)
    env = VecNormalize(make_vec_env("CartPole-v1", n_envs=2, seed=3), norm_reward=True)
    model = A2C("MlpPolicy", env, n_steps=8, learning_rate=7e-3, seed=3, device="cpu",
                policy_kwargs=dict(net_arch=[16]), normalize_advantage=True)
    _fill(model.policy, 4)
    log = _Log(model, ["train/value_loss", "train/policy_loss", "train/entropy_loss",
                       "train/explained_variance"])
    model.learn(total_timesteps=256, log_interval=4)
    return {"log": log.rows, "params": dict(model.policy.state_dict()),
            "obs_rms": [env.obs_rms.mean, env.obs_rms.var]}


def dqn_cartpole_case():
    from stable_baselines3 import DQN
    from stable_baselines3.common.env_util import make_vec_env
    env = make_vec_env("CartPole-v1", n_envs=1, seed=6)
    model = DQN("MlpPolicy", env, learning_rate=1e-3, buffer_size=1000, learning_starts=64,
                batch_size=32, train_freq=4, gradient_steps=1, target_update_interval=100,
                exploration_fraction=0.5, exploration_final_eps=0.05, seed=6, device="cpu",
                policy_kwargs=dict(net_arch=[16, 16]))
    _fill_dqn(model, 7)
    log = _Log(model, ["train/loss", "rollout/exploration_rate"])
    model.learn(total_timesteps=400, log_interval=2)
    obs = env.reset()
    res = {"log": log.rows, "params": dict(model.policy.state_dict()),
           "q_values": model.q_net(torch.as_tensor(obs)),
           "eval": _evaluate(model, "CartPole-v1", 8),
           "replay_rewards": model.replay_buffer.rewards[:model.replay_buffer.size()].sum()}
    res["loaded"] = _roundtrip(model, DQN, obs)
    return res


def ppo_pendulum_case():
    """A continuous action space: a diagonal Gaussian policy with a state-independent
    log-std, clipped actions, GAE."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    _numpy_sampling(9)
    env = make_vec_env("Pendulum-v1", n_envs=1, seed=10)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=10,
                learning_rate=1e-3, gae_lambda=0.9, device="cpu",
                policy_kwargs=dict(net_arch=dict(pi=[16], vf=[16]), log_std_init=-0.5))
    _fill(model.policy, 11, scale=0.1)
    log = _Log(model, ["train/loss", "train/std", "train/approx_kl", "train/clip_fraction"])
    model.learn(total_timesteps=256)
    return {"log": log.rows, "params": dict(model.policy.state_dict())}


CASES = {"ppo_cartpole": ppo_cartpole_case, "a2c_cartpole": a2c_cartpole_case,
         "dqn_cartpole": dqn_cartpole_case, "ppo_pendulum": ppo_pendulum_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
