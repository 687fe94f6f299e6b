"""TorchANI, run by tests/as_torch/test_torchani.py with the real torch and under
``python -m ptcore.as_torch``: ANI models assembled from torchani's own builders and constants
(``torchani.arch.simple_ani``: AEV computer, per-element networks, xTB repulsion and D3
dispersion; nothing downloaded, no pretrained files), their network weights NumPy normals;
AEVs, energies and forces (autograd) of a few small molecules given by NumPy coordinates,
a periodic box, and a few Adam steps on energies.  Each case writes what it computed to
``<out>/<case>.json``.
"""
import os
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

os.environ["TORCHANI_NO_WARN_EXTENSIONS"] = "1"
warnings.filterwarnings("ignore")

# methane, water and ammonia-like geometries (Angstrom), padded with -1 species
_SPECIES = [[6, 1, 1, 1, 1], [8, 1, 1, -1, -1], [7, 1, 1, 1, -1]]
_COORDS = [[[0, 0, 0], [0.63, 0.63, 0.63], [-0.63, -0.63, 0.63], [-0.63, 0.63, -0.63],
            [0.63, -0.63, -0.63]],
           [[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0], [0, 0, 0], [0, 0, 0]],
           [[0, 0, 0.1], [0.94, 0, -0.27], [-0.47, 0.81, -0.27], [-0.47, -0.81, -0.27],
            [0, 0, 0]]]


def _molecules(seed):
    """The three molecules with their real atoms moved by NumPy noise (0.05 Angstrom)."""
    species = torch.tensor(_SPECIES)
    rng = np.random.default_rng(seed)
    c = np.asarray(_COORDS) + 0.05 * rng.standard_normal((3, 5, 3)) * (species.numpy() >= 0)[..., None]
    return species, torch.from_numpy(c.astype(np.float32))


def _model(seed, **kwargs):
    from torchani.arch import simple_ani
    model = simple_ani(["H", "C", "N", "O"], "wb97x-631gd", strategy="pyaev", **kwargs)
    fill_normal([p for _, p in sorted(model.named_parameters())], seed, 0.2)
    return model


def _energies_forces(model, species, coords, cell=None, pbc=None):
    coords = coords.clone().requires_grad_(True)
    out = model((species, coords), cell=cell, pbc=pbc) if cell is not None \
        else model((species, coords))
    forces, = torch.autograd.grad(-out.energies.sum(), coords)
    return out.energies.detach(), forces


def ani_case():
    """A smooth-cutoff model with repulsion and D3 dispersion and an ANI-2x-style one (cosine
    cutoff, no extra potentials): AEVs, energies and forces, and per-atom energies."""
    species, coords = _molecules(0)
    res = {}
    for i, (name, kwargs) in enumerate(
            {"smooth_d3": {"dispersion": True},
             "ani2x_style": {"cutoff_fn": "cosine", "radial_start": 0.8, "angular_start": 0.8,
                             "radial_cutoff": 5.1, "repulsion": False}}.items()):
        model = _model(10 + i, **kwargs)
        e, f = _energies_forces(model, species, coords)
        with torch.no_grad():
            aev = model.aev_computer(model.species_converter(species), coords)
            atomic = model.atomic_energies((species, coords), ensemble_values=False)
        res[name] = {"energies": e, "forces": f, "aev": aev, "atomic": atomic.energies}
    return res


def train_case():
    """Energies in a periodic box (all-pairs neighbor list with the cell) and three Adam
    steps of the networks on a squared energy error."""
    species, coords = _molecules(1)
    model = _model(20, repulsion=False)
    cell = torch.eye(3) * 6.0
    pbc = torch.tensor([True, True, True])
    e_pbc, f_pbc = _energies_forces(model, species, coords + 3.0, cell, pbc)
    target = torch.tensor([-40.0, -76.0, -56.0])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = ((model((species, coords)).energies - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"energies_pbc": e_pbc, "forces_pbc": f_pbc, "losses": losses}


CASES = {"ani": ani_case, "train": train_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
