"""e3nn (E(3)-equivariant networks), run by tests/as_torch/test_e3nn.py with the real torch and
under ``python -m ptcore.as_torch``: irreps algebra, Wigner D-matrices and 3j symbols,
spherical harmonics, o3.Linear and tensor products (modules e3nn generates with torch.fx and
optimizes with opt_einsum_fx), gates and a small equivariant network trained a few steps, on
NumPy inputs and weights.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


def _randn(seed, *shape):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _fill(module, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(module.named_parameters()):
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) * scale).astype(np.float32)))


def _rotation(seed):
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return torch.from_numpy(q.astype(np.float32))


def o3_case():
    """Irreps arithmetic, D-matrices of a rotation, 3j symbols, spherical harmonics (with their
    gradients) and the angle conversions."""
    from e3nn import o3
    irreps = o3.Irreps("2x0e + 1x1o + 1x2e + 3x1e")
    R = _rotation(0)
    vec = _randn(1, 6, 3)
    sh = o3.spherical_harmonics([0, 1, 2, 3], vec.requires_grad_(), normalize=True,
                                normalization="component")
    (sh * torch.linspace(-1, 1, 16)).sum().backward()
    alpha, beta, gamma = o3.matrix_to_angles(R)
    return {"irreps": [str(irreps), str(irreps.simplify()), str(irreps.sort().irreps),
                       irreps.dim, irreps.num_irreps, str(irreps * 2)],
            "D": irreps.D_from_matrix(R), "angles": [alpha, beta, gamma],
            "back": o3.angles_to_matrix(alpha, beta, gamma),
            "w3j": [o3.wigner_3j(1, 1, 2), o3.wigner_3j(1, 2, 3), o3.wigner_3j(2, 2, 2)],
            "sh": sh.detach(), "sh_grad": vec.grad,
            "sh_rotated": o3.spherical_harmonics(2, vec.detach() @ R.T, normalize=True),
            "legendre": o3.Legendre([0, 1, 2, 3])(torch.linspace(-1, 1, 5),
                                                  torch.linspace(0, 1, 5))}


def tensor_products_case():
    """o3.Linear, the fully connected, elementwise and channel-wise tensor products with external
    weights, and o3.Norm; their outputs, gradients and equivariance under a rotation."""
    from e3nn import o3
    irreps_in = o3.Irreps("2x0e + 1x1o + 1x2e")
    irreps_2 = o3.Irreps("1x0e + 1x1o")
    irreps_out = o3.Irreps("2x0e + 2x1o + 1x2e")
    x1 = _randn(2, 4, irreps_in.dim).requires_grad_()
    x2 = _randn(3, 4, irreps_2.dim)
    R = _rotation(4)
    D_in, D_2, D_out = (i.D_from_matrix(R) for i in (irreps_in, irreps_2, irreps_out))
    res = {}
    lin = o3.Linear(irreps_in, irreps_out)
    fc = o3.FullyConnectedTensorProduct(irreps_in, irreps_2, irreps_out)
    el = o3.ElementwiseTensorProduct("2x0e + 2x1o", "2x1e + 2x0e")
    for i, m in enumerate((lin, fc, el)):
        _fill(m, 10 + i)
    res["linear"] = lin(x1)
    res["fctp"] = fc(x1, x2)
    with torch.no_grad():     # (equivariance errors are rounding: whether they are small)
        res["equivariant"] = [
            bool((lin(x1 @ D_in.T) - res["linear"] @ D_out.T).abs().max() < 1e-5),
            bool((fc(x1 @ D_in.T, x2 @ D_2.T) - res["fctp"] @ D_out.T).abs().max() < 1e-4)]
    res["fctp"].pow(2).sum().backward()
    res["x1_grad"] = x1.grad
    res["weight_grad"] = fc.weight.grad
    res["elementwise"] = el(_randn(5, 3, 8), _randn(6, 3, 8))
    tp = o3.TensorProduct(irreps_in, irreps_2, "1x1o + 1x1e",
                          [(0, 1, 0, "uvw", True), (2, 1, 0, "uvw", True), (1, 1, 1, "uvw", True)],
                          shared_weights=False, internal_weights=False)
    w = _randn(7, 4, tp.weight_numel)
    res["tp_external"] = tp(x1.detach(), x2, w)
    res["norm"] = o3.Norm(irreps_out)(res["fctp"].detach())
    res["numel"] = [lin.weight_numel, fc.weight_numel, tp.weight_numel]
    return res


def _exact_normalization(module):
    """Replace the constants of e3nn's normalized activations (``normalize2mom``: 1/sqrt of
    E[f(z)^2], estimated from a million normals of torch's seeded generator, a stream ptcore
    does not reproduce) by Gauss-Hermite quadratures, the same numbers in both runs."""
    from e3nn.math import normalize2mom
    z, w = np.polynomial.hermite_e.hermegauss(100)
    for m in module.modules():
        if isinstance(m, normalize2mom):
            f2 = m.f(torch.from_numpy(z)).double().numpy() ** 2
            m.cst, m._is_id = float(((w * f2).sum() / np.sqrt(2 * np.pi)) ** -0.5), False


def network_case():
    """A Gate nonlinearity between two tensor products, with spherical-harmonic edge features
    on a small point cloud, trained 3 Adam steps to an invariant target."""
    from e3nn import o3
    from e3nn.nn import Gate
    pos = _randn(8, 6, 3)
    src, dst = np.nonzero(~np.eye(6, dtype=bool))
    src, dst = torch.from_numpy(src), torch.from_numpy(dst)
    irreps_sh = o3.Irreps.spherical_harmonics(2)
    gate = Gate("4x0e", [torch.relu], "2x0e", [torch.sigmoid], "2x1o")
    _exact_normalization(gate)
    tp1 = o3.FullyConnectedTensorProduct("1x0e", irreps_sh, gate.irreps_in)
    tp2 = o3.FullyConnectedTensorProduct(gate.irreps_out, irreps_sh, "1x0e")
    params = list(tp1.parameters()) + list(tp2.parameters())
    _fill(tp1, 20, 0.5)
    _fill(tp2, 21, 0.5)
    target = torch.tensor([[0.5]])

    def model(p):
        edge = p[dst] - p[src]
        sh = o3.spherical_harmonics(irreps_sh, edge, normalize=True)
        ones = torch.ones(len(src), 1)
        h = gate(tp1(ones, sh))
        node = torch.zeros(6, h.shape[1]).index_add(0, dst, h)
        out = tp2(node[dst], sh)
        return torch.zeros(6, 1).index_add(0, dst, out).mean(0, keepdim=True)
    opt = torch.optim.Adam(params, lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (model(pos) - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        return {"losses": losses, "out": model(pos), "out_rotated": model(pos @ _rotation(9).T)}


def modules_case():
    """e3nn's compiled modules (``e3nn.util.jit.compile``: TorchScript of a traced/scripted
    o3.Linear, SphericalHarmonics, a fully connected tensor product and a Gate),
    FullyConnectedNet, equivariant BatchNorm (training and eval), the reduced tensor
    products' change of basis, ToS2Grid/FromS2Grid and the smooth radial bases."""
    from e3nn import o3
    from e3nn.math import soft_one_hot_linspace
    from e3nn.nn import BatchNorm, FullyConnectedNet, Gate
    from e3nn.util.jit import compile as e3nn_compile
    lin = o3.Linear("2x0e + 1x1o", "1x0e + 2x1o")
    _fill(lin, 30)
    x = _randn(31, 4, 5)
    sh = o3.SphericalHarmonics([0, 1, 2], normalize=True, normalization="integral")
    vec = _randn(32, 6, 3)
    fcn = FullyConnectedNet([3, 8, 2], torch.tanh)
    _exact_normalization(fcn)
    _fill(fcn, 33)
    bn = BatchNorm("2x0e + 1x1o + 1x2e")
    feats = _randn(34, 6, 10)
    train_out = bn(feats)
    bn.eval()
    rtp = o3.ReducedTensorProducts("ij=-ji", i="1o")
    to_grid = o3.ToS2Grid(2, (10, 11))
    signal = _randn(35, 3, 9)
    grid = to_grid(signal)
    fctp = o3.FullyConnectedTensorProduct("2x0e + 1x1o", "1x0e + 1x1o", "2x0e + 1x1o + 1x1e")
    _fill(fctp, 37)
    gate = Gate("2x0e", [torch.tanh], "1x0e", [torch.sigmoid], "1x1o")
    _exact_normalization(gate)
    gate_in = _randn(38, 3, 6)
    return {"compiled_linear": e3nn_compile(lin)(x), "linear": lin(x),
            "compiled_fctp": e3nn_compile(fctp)(x, _randn(39, 4, 4)),
            "compiled_gate": e3nn_compile(gate)(gate_in), "gate": gate(gate_in),
            "compiled_sh": e3nn_compile(sh)(vec), "fcn": fcn(_randn(36, 4, 3)),
            "bn_train": train_out, "bn_eval": bn(feats), "bn_running": bn.running_mean,
            "rtp_basis": rtp.change_of_basis, "rtp_irreps": str(rtp.irreps_out),
            "grid": grid, "back": o3.FromS2Grid((10, 11), 2)(grid),
            "bases": [soft_one_hot_linspace(torch.linspace(0.1, 1, 7), 0.0, 1.0, 4, basis=b,
                                            cutoff=c)
                      for b, c in (("gaussian", False), ("cosine", True), ("smooth_finite", True),
                                   ("fourier", True), ("bessel", True))]}


CASES = {"o3": o3_case, "tensor_products": tensor_products_case, "network": network_case,
         "modules": modules_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
