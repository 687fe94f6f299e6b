"""MACE (``mace-torch``), run by tests/as_torch/test_mace.py with the real torch and under
``python -m ptcore.as_torch``: tiny MACE models built with ``mace.modules.MACE`` and
``ScaleShiftMACE`` (e3nn irreps, symmetric contractions, Bessel radial bases), weights from
NumPy, on small water and hydroxyl structures from ASE graphs batched by MACE's own loader:
energies, per-atom energies and forces by autograd, and a few Adam steps of MACE's weighted
energy-forces loss.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _batch():
    import ase
    from mace import data, tools
    from mace.tools import torch_geometric
    table = tools.AtomicNumberTable([1, 8])
    rng = np.random.default_rng(0)
    structures = [ase.Atoms("OHH", positions=[[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0]]),
                  ase.Atoms("OH", positions=[[0, 0, 0], [0.97, 0.1, 0]]),
                  ase.Atoms("OHHOH", positions=[[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0],
                                                [2.6, 0.3, 0.2], [3.3, 0.9, 0.1]])]
    graphs = []
    for atoms in structures:
        atoms.positions += 0.03 * rng.standard_normal(atoms.positions.shape)
        atoms.info["REF_energy"] = float(rng.standard_normal())
        atoms.arrays["REF_forces"] = rng.standard_normal(atoms.positions.shape)
        config = data.config_from_atoms(atoms)
        graphs.append(data.AtomicData.from_config(config, z_table=table, cutoff=3.0))
    loader = torch_geometric.dataloader.DataLoader(graphs, batch_size=3, shuffle=False)
    return table, next(iter(loader))


def _model(table, cls, seed, **extra):
    from e3nn import o3
    from mace import modules
    block = modules.interaction_classes["RealAgnosticResidualInteractionBlock"]
    model = cls(r_max=3.0, num_bessel=6, num_polynomial_cutoff=5, max_ell=2,
                interaction_cls=block, interaction_cls_first=block, num_interactions=2,
                num_elements=len(table), hidden_irreps=o3.Irreps("8x0e + 8x1o"),
                MLP_irreps=o3.Irreps("8x0e"), gate=torch.nn.functional.silu,
                atomic_energies=np.array([-1.0, -3.0]), avg_num_neighbors=3.0,
                atomic_numbers=table.zs, correlation=2, **extra)
    fill_normal([p for _, p in sorted(model.named_parameters())], seed, 0.3)
    return model


def mace_case():
    """MACE and ScaleShiftMACE: total and per-node energies, forces."""
    from mace import modules
    table, batch = _batch()
    res = {}
    for i, (name, cls, extra) in enumerate([
            ("mace", modules.MACE, {}),
            ("scale_shift", modules.ScaleShiftMACE, {"atomic_inter_scale": 1.5,
                                                     "atomic_inter_shift": 0.2})]):
        model = _model(table, cls, 10 + i, **extra)
        out = model(batch.to_dict(), training=False, compute_force=True)
        res[name] = {k: out[k].detach() for k in ("energy", "node_energy", "forces")}
    return res


def train_case():
    """Three Adam steps of a MACE model on MACE's weighted energy-forces loss."""
    from mace import modules
    table, batch = _batch()
    model = _model(table, modules.MACE, 20)
    loss_fn = modules.WeightedEnergyForcesLoss(energy_weight=1.0, forces_weight=10.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        out = model(batch.to_dict(), training=True, compute_force=True)
        loss = loss_fn(pred=out, ref=batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out = model(batch.to_dict(), training=False, compute_force=True)
    return {"losses": losses, "energy": out["energy"].detach(), "forces": out["forces"].detach()}


CASES = {"mace": mace_case, "train": train_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
