"""tensordict, run by tests/as_torch/test_tensordict.py with the real torch and under ``python
-m ptcore.as_torch``: TensorDict construction with nested keys, indexing, ``apply``,
``stack``/``cat``, reshape and unbind, arithmetic, ``flatten_keys``, masking, ``update``,
``to_dict``, ``state_dict`` and memmap-free save/load; ``TensorDictModule`` and
``TensorDictSequential`` over small networks trained a few Adam steps, ``from_module`` /
``to_module`` parameter swapping; a tensorclass.  Data and weights from NumPy.  Each case writes
what it computed to ``<out>/<case>.json``."""
import io
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def _td():
    from tensordict import TensorDict
    return TensorDict({"obs": _x(0, (4, 3)), "reward": _x(1, (4, 1)),
                       "next": {"obs": _x(2, (4, 3)), "done": torch.tensor([[0], [1], [0], [0]]).bool()}},
                      batch_size=[4])


def ops_case():
    """TensorDict operations: the leaves and batch sizes they give."""
    from tensordict import TensorDict
    td = _td()
    res = {"keys": sorted(str(k) for k in td.keys(include_nested=True, leaves_only=True)),
           "index": td[1:3]["next", "obs"], "bool_index": td[td["next", "done"].squeeze(-1)]["obs"],
           "apply": td.apply(lambda x: x * 2 if x.is_floating_point() else x)["next", "obs"],
           "stack": torch.stack([td, td.clone()], 1).batch_size,
           "cat": torch.cat([td, td], 0)["reward"],
           "reshape": td.reshape(2, 2)["obs"].shape,
           "unbind": [t["reward"] for t in td.unbind(0)],
           "flatten_keys": sorted(td.flatten_keys(".").keys()),
           "sum": td.select("obs", "reward").sum(dim=0)["obs"],
           "to_dict_keys": sorted(td.to_dict()),
           "exclude": sorted(td.exclude("reward").keys()),
           "clone_eq": bool((td.clone() == td).all())}
    td2 = td.clone()
    td2["obs"] += 1
    td2.update({"extra": torch.ones(4, 2)})
    td2.set(("next", "reward"), td2["reward"] * 3)
    res["update"] = td2["obs"]
    res["nested_set"] = td2["next", "reward"]
    res["masked_fill"] = td.masked_fill(td["next", "done"].squeeze(-1), 0.0)["obs"]
    res["expand"] = td[0].expand(3).batch_size
    res["where"] = torch.where(td["next", "done"], td.select("reward"), td.select("reward") * -1)["reward"]
    state = td.state_dict()
    back = td.clone().zero_()
    back.load_state_dict(state)
    res["state_dict"] = back["next", "obs"]
    buf = io.BytesIO()
    torch.save(td.to_dict(), buf)
    buf.seek(0)
    res["saved"] = TensorDict(torch.load(buf), batch_size=[4])["next", "obs"]
    res["batch_size"] = list(td.batch_size)
    try:        # (a function TensorDict does not handle: its __torch_function__ declines)
        torch.logaddexp(td, td)
    except Exception as exc:
        res["unhandled"] = type(exc).__name__
    return res


def modules_case():
    """TensorDictModule/Sequential over two MLPs, trained three Adam steps; from_module and
    to_module parameter swapping; a tensorclass."""
    from tensordict import TensorDict, tensorclass
    from tensordict.nn import TensorDictModule, TensorDictSequential
    torch.manual_seed(0)
    enc = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh())
    head = torch.nn.Linear(8, 1)
    fill_normal([p for _, p in sorted(enc.named_parameters())] +
                [p for _, p in sorted(head.named_parameters())], 5, 0.3)
    seq = TensorDictSequential(
        TensorDictModule(enc, in_keys=["obs"], out_keys=["hidden"]),
        TensorDictModule(head, in_keys=["hidden"], out_keys=["value"]))
    td = _td()
    out = seq(td.clone())
    res = {"value": out["value"], "hidden": out["hidden"], "in_keys": seq.in_keys,
           "out_keys": seq.out_keys}
    opt = torch.optim.Adam(seq.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        o = seq(td.clone())
        loss = (o["value"] - o["reward"]).square().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["losses"] = losses
    params = TensorDict.from_module(seq)
    res["param_keys"] = sorted(str(k) for k in params.keys(include_nested=True, leaves_only=True))
    zeros = params.apply(torch.zeros_like)
    with zeros.to_module(seq):
        res["zeroed"] = seq(td.clone())["value"]
    res["restored"] = seq(td.clone())["value"]

    @tensorclass
    class Batch:
        obs: torch.Tensor
        reward: torch.Tensor

    b = Batch(obs=_x(7, (5, 3)), reward=_x(8, (5, 1)), batch_size=[5])
    res["tensorclass"] = {"index": b[1:3].obs, "stack": torch.stack([b, b]).reward.shape,
                          "apply": b.apply(lambda x: x + 1).reward}
    return res


if __name__ == "__main__":
    main({"ops": ops_case, "modules": modules_case}, sys.argv)
