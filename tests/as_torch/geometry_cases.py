"""Geometry on manifolds and rotation groups (geoopt, RoMa, PyPose), run by
tests/as_torch/test_geometry_libraries.py with the real torch and under
``python -m ptcore.as_torch``: geoopt's manifolds (sphere, Stiefel, Poincaré ball, Lorentz,
SPD, Birkhoff polytope, products) and their maps, and Riemannian Adam and SGD fitting
manifold parameters; RoMa's conversions between rotation representations, Procrustes on
batches of matrices (SVD and Horn's quaternion method) with gradients, slerps and rigid
registration; PyPose's LieTensor (a Tensor subclass with ``__torch_function__``) on SO3 and
SE3 (Exp, Log, Inv, Act, Jinvp, Adj, batched products) with gradients, and a pose fitted by
the Levenberg-Marquardt and Gauss-Newton optimizers.  Data from NumPy.  Each case writes what
it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def geoopt_case():
    """Projections, retractions, exponential and logarithmic maps, distances and parallel
    transport on several manifolds; then Riemannian Adam and SGD steps on manifold
    parameters."""
    import geoopt
    res = {}
    x, u = _x(1, (4, 5), dtype=np.float64), _x(2, (4, 5), dtype=np.float64)
    sphere = geoopt.Sphere()
    p = sphere.projx(x)
    v = sphere.proju(p, u)
    q = sphere.expmap(p, v)
    res["sphere"] = [p, v, q, sphere.logmap(p, q), sphere.dist(p, q),
                     sphere.transp(p, q, v), sphere.retr(p, 0.3 * v)]
    stiefel = geoopt.EuclideanStiefel()
    a = _x(3, (2, 5, 3), dtype=np.float64)
    w = stiefel.projx(a)
    g = stiefel.proju(w, _x(4, (2, 5, 3), dtype=np.float64))
    res["stiefel"] = [w, g, stiefel.retr(w, g), stiefel.transp(w, stiefel.retr(w, g), g),
                      stiefel.inner(w, g, g)]
    canon = geoopt.CanonicalStiefel()
    res["canonical_stiefel"] = [canon.retr(w, canon.proju(w, g)), canon.inner(w, g, g)]
    ball = geoopt.PoincareBall(c=1.3)
    bx, by = ball.projx(0.3 * x), ball.projx(0.2 * u)
    bv = ball.proju(bx, u)
    res["poincare"] = [ball.expmap(bx, bv), ball.logmap(bx, by), ball.dist(bx, by),
                       ball.mobius_add(bx, by), ball.mobius_matvec(_x(5, (3, 5),
                                                                       dtype=np.float64), bx),
                       ball.expmap0(u * 0.1), ball.logmap0(by), ball.egrad2rgrad(bx, u),
                       ball.dist0(bx), ball.transp(bx, by, bv)]
    stereo = geoopt.SphereProjection(k=0.7)
    res["sphere_projection"] = [stereo.expmap0(0.2 * u), stereo.dist(stereo.projx(0.2 * x),
                                                                      stereo.projx(0.1 * u))]
    lor = geoopt.Lorentz(k=1.0)
    zero = torch.zeros(4, 1, dtype=torch.float64)
    lx = lor.expmap0(torch.cat([zero, 0.3 * x], -1))
    ly = lor.expmap0(torch.cat([zero, 0.2 * u], -1))
    res["lorentz"] = [lx, lor.dist(lx, ly), lor.logmap(lx, ly), lor.inner(lx, ly)]
    spd = geoopt.SymmetricPositiveDefinite()
    m = _x(6, (2, 3, 3), dtype=np.float64)
    s1 = m @ m.transpose(-1, -2) + torch.eye(3, dtype=torch.float64)
    s2 = spd.projx(_x(7, (2, 3, 3), dtype=np.float64) + 2 * torch.eye(3, dtype=torch.float64))
    res["spd"] = [s2, spd.dist(s1, s2), spd.retr(s1, spd.proju(s1, m)), spd.inner(s1, m, m)]
    bk = geoopt.BirkhoffPolytope()
    res["birkhoff"] = [bk.projx(_x(8, (2, 4, 4)).exp())]
    prod = geoopt.ProductManifold((geoopt.Sphere(), 3), (geoopt.Euclidean(1), 2))
    pz = prod.projx(_x(9, (4, 5), dtype=np.float64))
    res["product"] = [pz, prod.expmap(pz, prod.proju(pz, u)), prod.dist(pz, prod.projx(u))]

    torch.manual_seed(0)
    target = _x(10, (6, 3))
    sp = geoopt.ManifoldParameter(geoopt.Stiefel().projx(_x(11, (6, 3))),
                                  manifold=geoopt.Stiefel())
    bp = geoopt.ManifoldParameter(geoopt.PoincareBall().projx(0.1 * _x(12, (5, 2))),
                                  manifold=geoopt.PoincareBall())
    ep = torch.nn.Parameter(_x(13, (3,)))
    opt = geoopt.optim.RiemannianAdam([sp, bp, ep], lr=5e-2, stabilize=2, amsgrad=True)
    sgd = geoopt.optim.RiemannianSGD([geoopt.ManifoldTensor(geoopt.Sphere().projx(
        _x(14, (4,))), manifold=geoopt.Sphere(), requires_grad=True)], lr=0.1, momentum=0.9,
        nesterov=True)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        sgd.zero_grad()
        loss = ((sp - target) ** 2).sum() + geoopt.PoincareBall().dist0(bp).sum() + \
            (ep ** 2).sum() + (sgd.param_groups[0]["params"][0] * torch.arange(4.)).sum()
        loss.backward()
        opt.step()
        sgd.step()
        losses.append(loss.item())
    res["riemannian_opt"] = {"losses": losses, "stiefel": sp.detach(), "ball": bp.detach(),
                             "sphere": sgd.param_groups[0]["params"][0].detach(),
                             "orth": sp.detach().T @ sp.detach()}
    return res


def roma_case():
    """Conversions between unit quaternions, rotation vectors, matrices and Euler angles;
    Procrustes (SVD and Horn) on a batch with gradients; compositions, slerps, geodesic
    distances and rigid registration of point sets."""
    import roma
    res = {}
    rv = _x(20, (5, 3), dtype=np.float64)
    R = roma.rotvec_to_rotmat(rv)
    q = roma.rotmat_to_unitquat(R)
    res["conversions"] = [R, q, roma.unitquat_to_rotvec(q), roma.rotmat_to_rotvec(R),
                          roma.unitquat_to_rotmat(q), roma.rotvec_to_unitquat(rv),
                          roma.rotmat_to_euler("xyz", R), roma.euler_to_rotmat(
                              "ZYX", rv, degrees=False), roma.unitquat_to_euler("xzx", q),
                          roma.quat_xyzw_to_wxyz(q)]
    res["products"] = [roma.quat_product(q[:4], q[1:]), roma.quat_action(q, rv),
                       roma.quat_inverse(q), roma.rotvec_composition([rv, rv.flip(0)]),
                       roma.rotmat_composition([R, R.transpose(-1, -2), R]),
                       roma.rotmat_geodesic_distance(R[:4], R[1:]),
                       roma.unitquat_geodesic_distance(q[:4], q[1:]),
                       roma.rotvec_geodesic_distance(rv[:4], rv[1:])]
    steps = torch.linspace(0, 1, 4, dtype=torch.float64)
    res["slerp"] = [roma.unitquat_slerp(q[0], q[1], steps), roma.rotvec_slerp(rv[0], rv[1],
                                                                              steps),
                    roma.rotmat_slerp(R[0], R[1], steps), roma.unitquat_slerp_fast(q[0], q[1],
                                                                                  steps)]
    M0 = _x(21, (6, 3, 3))
    for name, fn in {"special_procrustes": roma.special_procrustes,
                     "procrustes": roma.procrustes,
                     "special_gramschmidt": roma.special_gramschmidt,
                     "procrustes_quat": roma.special_procrustes_unitquat}.items():
        M = M0.clone().requires_grad_()
        out = fn(M)
        (out * torch.arange(out[0].numel(), dtype=out.dtype).reshape(out.shape[1:])).sum()\
            .backward()
        res[name] = {"value": out, "grad": M.grad}
    x = _x(22, (10, 3))
    Rt = roma.rotvec_to_rotmat(torch.tensor([0.3, -0.2, 0.5]))
    y = x @ Rt.T + torch.tensor([1.0, -2.0, 0.5])
    R_est, t_est = roma.rigid_points_registration(x, y)
    R_s, t_s, s = roma.rigid_points_registration(x, 2 * y, compute_scaling=True)
    tr = roma.Rigid(R_est, t_est)
    res["registration"] = [R_est, t_est, R_s, t_s, s, tr[None].apply(x), tr.inverse().linear,
                           (tr @ tr).translation]
    return res


def pypose_case():
    """LieTensors on SO3 and SE3 (a Tensor subclass with ``__torch_function__``): maps,
    group operations, Jacobians and adjoints, with gradients; a batch of poses fitted to
    transformed points by Levenberg-Marquardt and Gauss-Newton."""
    import pypose as pp
    res = {}
    r = _x(30, (4, 3), dtype=np.float64) * 0.5
    so3 = pp.so3(r).Exp()
    se3 = pp.se3(torch.cat([_x(31, (4, 3), dtype=np.float64), r], -1)).Exp()
    pts = _x(32, (4, 3), dtype=np.float64)
    res["so3"] = [so3.tensor(), so3.Log().tensor(), so3.Inv().tensor(),
                  (so3 @ so3.Inv()).tensor(), so3.Act(pts), so3.matrix(), so3.euler(),
                  so3.Jr(), so3.Log().Jr(), so3.Adj(pp.so3(r)).tensor(),
                  so3.Jinvp(pp.so3(r)).tensor(), type(so3).__name__, type(so3.ltype).__name__]
    res["se3"] = [se3.tensor(), se3.Log().tensor(), se3.Inv().tensor(),
                  (se3 * se3).tensor(), se3.Act(pts), se3.matrix(), se3.translation(),
                  se3.rotation().tensor(), se3.Adj(se3.Log()).tensor(),
                  list(se3.lshape), type(se3[1:3]).__name__,
                  pp.mat2SE3(se3.matrix()).tensor(), pp.cumprod(se3, dim=0).tensor()]
    x = pp.se3(_x(33, (3, 6), dtype=np.float64) * 0.3).requires_grad_()
    out = x.Exp().Act(pts[:3]).sum() + x.Exp().Log().tensor().pow(2).sum()
    out.backward()
    res["grad"] = x.grad
    # Jacobians with respect to LieTensors: pp.func.jacrev (torch.func.jacrev keeping the
    # LieTensor type of the inputs) and pp.optim.functional.modjac (of a module's outputs
    # with respect to its parameters)
    jac = pp.func.jacrev(lambda pose, p: pose.Act(p))(se3[:2], pts[:2])
    res["jacrev"] = jac

    class Transform(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pose = pp.Parameter(se3[:2].clone())

        def forward(self, p):
            return self.pose.Act(p)
    res["modjac"] = [pp.optim.functional.modjac(Transform(), input=pts[:2], vectorize=v)
                     for v in (False, True)]
    torch.manual_seed(0)

    class PoseInv(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.pose = pp.Parameter(pp.identity_SE3(n, dtype=torch.float64))

        def forward(self, src, dst):
            return self.pose.unsqueeze(-2).Act(src) - dst

    truth = pp.se3(_x(34, (2, 6), dtype=np.float64) * 0.4).Exp()
    src = _x(35, (2, 5, 3), dtype=np.float64)
    dst = truth.unsqueeze(-2).Act(src)
    for name, make in {"lm": lambda m: pp.optim.LM(m, strategy=pp.optim.strategy.Constant(damping=1e-6)),
                       "gn": lambda m: pp.optim.GN(m)}.items():
        model = PoseInv(2)
        opt = make(model)
        losses = [opt.step(input=(src, dst)).item() for _ in range(4)]
        res[name] = {"losses": losses, "pose": model.pose.detach().tensor()}
    return res


CASES = {"geoopt": geoopt_case, "roma": roma_case, "pypose": pypose_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
