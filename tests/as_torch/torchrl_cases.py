"""TorchRL, run by tests/as_torch/test_torchrl.py with the real torch and under
``python -m ptcore.as_torch``: replay buffers (tensor and memory-mapped storages, a ring
writer wrapping around, sampling without replacement in order, slices), the value estimators
(GAE, TD(0), TD(lambda), their vectorized and loop forms and the functional ones) on a
trajectory with terminations and truncations, PPO/DQN/DDPG losses with Adam steps on MLP
networks, and a CartPole rollout through transforms with a deterministic policy followed by
GAE and PPO updates on what it collected; weights and data from NumPy.  Each case writes what
it computed to ``<out>/<case>.json``."""
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def _traj(seed, n=2, t=6, obs=4):
    """A batch of ``n`` trajectories of ``t`` steps with a termination and a truncation."""
    from tensordict import TensorDict
    done = torch.zeros(n, t, 1, dtype=torch.bool)
    terminated = done.clone()
    terminated[0, 2] = True
    truncated = done.clone()
    truncated[1, 4] = True
    done = terminated | truncated
    done[:, -1] = True
    return TensorDict({
        "observation": _x(seed, (n, t, obs)),
        "action": _x(seed + 1, (n, t, 2)),
        "next": {"observation": _x(seed + 2, (n, t, obs)),
                 "reward": _x(seed + 3, (n, t, 1)),
                 "done": done, "terminated": terminated, "truncated": truncated},
    }, batch_size=[n, t])


def buffer_case():
    """ReplayBuffer/TensorDictReplayBuffer over LazyTensorStorage and LazyMemmapStorage:
    extend past capacity (the ring writer wraps), in-order sampling without replacement,
    indexing, len, and a transform applied at sampling."""
    from tensordict import TensorDict
    from torchrl.data import (LazyMemmapStorage, LazyTensorStorage, ListStorage, ReplayBuffer,
                              TensorDictReplayBuffer)
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    res = {}
    td = TensorDict({"obs": _x(0, (7, 3)), "act": torch.arange(7),
                     "nested": {"r": _x(1, (7, 1))}}, batch_size=[7])
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(10),
                                sampler=SamplerWithoutReplacement(shuffle=False), batch_size=4)
    rb.extend(td)
    rb.extend(td[:5])                          # 12 > 10: wraps around
    res["len"] = len(rb)
    res["all"] = rb[:].to_dict()
    res["samples"] = [rb.sample().to_dict() for _ in range(2)]
    with tempfile.TemporaryDirectory() as d:
        mrb = ReplayBuffer(storage=LazyMemmapStorage(8, scratch_dir=d),
                           sampler=SamplerWithoutReplacement(shuffle=False), batch_size=3)
        mrb.extend(td)
        mrb.add(TensorDict({"obs": _x(2, (3,)), "act": torch.tensor(9),
                            "nested": {"r": _x(3, (1,))}}, []))
        res["memmap_all"] = mrb[:].to_dict()
        res["memmap_sample"] = mrb.sample().to_dict()
        res["memmap_index"] = mrb[torch.tensor([0, 7, 3])].to_dict()
    lrb = ReplayBuffer(storage=ListStorage(5), sampler=SamplerWithoutReplacement(shuffle=False),
                       batch_size=2, transform=lambda x: x * 2)
    lrb.extend([_x(4, (2,)), _x(5, (2,)), _x(6, (2,))])
    res["list_sample"] = lrb.sample()
    return res


def values_case():
    """GAE, TD(0) and TD(lambda) with a linear value network (vectorized and loop forms),
    and the functional estimators with gradients."""
    from tensordict.nn import TensorDictModule
    from torchrl.objectives.value import GAE, TD0Estimator, TDLambdaEstimator
    from torchrl.objectives.value.functional import (generalized_advantage_estimate,
                                                     td_lambda_return_estimate,
                                                     vec_generalized_advantage_estimate,
                                                     vec_td_lambda_return_estimate)
    lin = torch.nn.Linear(4, 1)
    fill_normal(lin.parameters(), 10)
    value = TensorDictModule(lin, in_keys=["observation"], out_keys=["state_value"])
    res = {}
    for name, est in {
            "gae": GAE(gamma=0.9, lmbda=0.8, value_network=value, vectorized=True),
            "gae_loop": GAE(gamma=0.9, lmbda=0.8, value_network=value, vectorized=False),
            "gae_avg": GAE(gamma=0.9, lmbda=0.8, value_network=value, average_gae=True),
            "td0": TD0Estimator(gamma=0.9, value_network=value),
            "tdl": TDLambdaEstimator(gamma=0.9, lmbda=0.7, value_network=value,
                                     vectorized=True),
            "tdl_loop": TDLambdaEstimator(gamma=0.9, lmbda=0.7, value_network=value,
                                          vectorized=False)}.items():
        td = est(_traj(20))
        res[name] = {"advantage": td["advantage"], "target": td["value_target"]}
    t = _traj(40)
    v, nv = _x(41, (2, 6, 1)), _x(42, (2, 6, 1))
    r, done, term = t["next", "reward"], t["next", "done"], t["next", "terminated"]
    res["f_gae"] = generalized_advantage_estimate(0.9, 0.8, v, nv, r, done, term)
    res["f_vgae"] = vec_generalized_advantage_estimate(0.9, 0.8, v, nv, r, done, term)
    res["f_tdl"] = td_lambda_return_estimate(0.9, 0.7, nv, r, done, term)
    res["f_vtdl"] = vec_td_lambda_return_estimate(0.9, 0.7, nv, r, done, term)
    # gradients through the vectorized estimators
    v, nv = v.clone().requires_grad_(), nv.clone().requires_grad_()
    adv, tgt = vec_generalized_advantage_estimate(0.9, 0.8, v, nv, r, done, term)
    (adv.square().sum() + vec_td_lambda_return_estimate(0.9, 0.7, nv, r, done, term)
     .square().sum()).backward()
    res["grad"] = [v.grad, nv.grad]
    return res


def _ppo_modules(obs=4, n_act=2):
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MLP, ProbabilisticActor, ValueOperator
    actor_net = MLP(in_features=obs, out_features=n_act, num_cells=[16, 16],
                    activation_class=torch.nn.Tanh)
    critic_net = MLP(in_features=obs, out_features=1, num_cells=[16],
                     activation_class=torch.nn.Tanh)
    fill_normal(actor_net.parameters(), 50, scale=0.3)
    fill_normal(critic_net.parameters(), 51, scale=0.3)
    actor = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys=["logits"], distribution_class=torch.distributions.Categorical,
        return_log_prob=True)
    critic = ValueOperator(critic_net, in_keys=["observation"])
    return actor, critic


def _ppo_updates(loss, gae, data, steps):
    """``steps`` Adam steps of a PPO ``loss`` on ``data`` with advantages from ``gae``
    recomputed before each; each step's loss terms, and the last batch."""
    opt = torch.optim.Adam(loss.parameters(), lr=1e-2)
    res = []
    for _ in range(steps):
        with torch.no_grad():
            batch = gae(data.clone())
        out = loss(batch)
        total = sum(v for k, v in out.items() if k.startswith("loss_"))
        opt.zero_grad()
        total.backward()
        opt.step()
        res.append({k: v.detach() for k, v in out.items()})
    return res, batch


def losses_case():
    """ClipPPOLoss (entropy bonus, clipped value loss, normalized advantage) with GAE and
    KLPENPPOLoss trained three Adam steps; DQNLoss with a QValueActor (double DQN, target
    network) and DDPGLoss with a SoftUpdate of the targets."""
    from tensordict.nn import TensorDictModule
    from torchrl.data import OneHot
    from torchrl.modules import MLP, QValueActor
    from torchrl.objectives import ClipPPOLoss, DDPGLoss, DQNLoss, KLPENPPOLoss, SoftUpdate
    from torchrl.objectives.value import GAE
    res = {}
    actor, critic = _ppo_modules()
    data = _traj(60)
    data["action"] = torch.from_numpy(np.random.default_rng(61).integers(0, 2, (2, 6)))
    with torch.no_grad():
        lp = actor(data.select("observation").clone())
    data["action_log_prob"] = lp["action_log_prob"].detach() + 0.05
    data["logits"] = lp["logits"].detach() * 0.9    # the behaviour policy (KL penalty)
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    for name, loss in {"clip": ClipPPOLoss(actor, critic, clip_epsilon=0.2,
                                           entropy_coeff=0.01, critic_coeff=0.5,
                                           normalize_advantage=True, clip_value=0.5),
                       "klpen": KLPENPPOLoss(actor, critic, entropy_coeff=0.01)}.items():
        res[name] = _ppo_updates(loss, gae, data, 3)[0]
    # DQN: Q-values over 3 actions, one-hot actions
    qnet = MLP(in_features=4, out_features=3, num_cells=[8])
    fill_normal(qnet.parameters(), 70, scale=0.3)
    qactor = QValueActor(qnet, in_keys=["observation"], spec=OneHot(3))
    dqn = DQNLoss(qactor, double_dqn=True, delay_value=True, loss_function="smooth_l1")
    dqn.make_value_estimator(gamma=0.9)
    d = _traj(80).reshape(-1)
    d["action"] = torch.nn.functional.one_hot(
        torch.from_numpy(np.random.default_rng(81).integers(0, 3, 12)), 3)
    opt = torch.optim.Adam(dqn.parameters(), lr=1e-2)
    upd = SoftUpdate(dqn, eps=0.5)
    dq = []
    for _ in range(3):
        out = dqn(d.clone())
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
        upd.step()
        dq.append(out["loss"].detach())
    res["dqn"] = dq
    res["dqn_greedy"] = qactor(d.select("observation").clone())["action"]
    # DDPG: deterministic actor, Q(s, a) critic
    anet = MLP(in_features=4, out_features=2, num_cells=[8], activation_class=torch.nn.Tanh)
    cnet = MLP(in_features=6, out_features=1, num_cells=[8])
    fill_normal(anet.parameters(), 90, scale=0.3)
    fill_normal(cnet.parameters(), 91, scale=0.3)

    class QCat(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, obs, act):
            return self.net(torch.cat([obs, act], -1))
    ddpg_actor = TensorDictModule(anet, in_keys=["observation"], out_keys=["action"])
    ddpg_value = TensorDictModule(QCat(cnet), in_keys=["observation", "action"],
                                  out_keys=["state_action_value"])
    ddpg = DDPGLoss(ddpg_actor, ddpg_value, delay_actor=True, delay_value=True)
    ddpg.make_value_estimator(gamma=0.9)
    opt = torch.optim.Adam(ddpg.parameters(), lr=1e-2)
    upd = SoftUpdate(ddpg, tau=0.1)
    dd = []
    d2 = _traj(95).reshape(-1)
    for _ in range(3):
        out = ddpg(d2.clone())
        opt.zero_grad()
        (out["loss_actor"] + out["loss_value"]).backward()
        opt.step()
        upd.step()
        dd.append({k: v.detach() for k, v in out.items()})
    res["ddpg"] = dd
    return res


def env_case():
    """GymEnv CartPole through transforms (StepCounter, RewardSum, DoubleToFloat,
    ObservationNorm, InitTracker), a rollout with the PPO actor in deterministic mode, then
    GAE and two ClipPPOLoss updates on it."""
    from torchrl.envs import (DoubleToFloat, InitTracker, ObservationNorm, RewardSum,
                              StepCounter, TransformedEnv, Compose)
    from torchrl.envs.libs.gym import GymEnv
    from torchrl.envs.utils import ExplorationType, check_env_specs, set_exploration_type
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE
    base = GymEnv("CartPole-v1")
    env = TransformedEnv(base, Compose(
        DoubleToFloat(), StepCounter(max_steps=20), RewardSum(), InitTracker(),
        ObservationNorm(in_keys=["observation"], loc=torch.tensor([0.0, 0.1, 0.0, -0.1]),
                        scale=torch.tensor([1.0, 2.0, 5.0, 2.0]))))
    env.set_seed(0)
    check_env_specs(env, seed=0)
    env.set_seed(3)
    actor, critic = _ppo_modules()
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        roll = env.rollout(30, actor, break_when_any_done=True)
    res = {"obs": roll["observation"], "action": roll["action"],
           "steps": roll["next", "step_count"], "ep_reward": roll["next", "episode_reward"],
           "done": roll["next", "done"], "is_init": roll["is_init"],
           "log_prob": roll["action_log_prob"]}
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    loss = ClipPPOLoss(actor, critic, entropy_coeff=0.01)
    res["losses"], batch = _ppo_updates(loss, gae, roll, 2)
    res["advantage"] = batch["advantage"]
    env.close()
    return res


if __name__ == "__main__":
    main({"buffer": buffer_case, "values": values_case, "losses": losses_case,
          "env": env_case}, sys.argv)
