"""Wavelet transforms (ptwt, over PyWavelets' filters), run by tests/as_torch/test_wavelets.py
with the real torch and under ``python -m ptcore.as_torch``: the convolution-based fast
wavelet transform in one, two and three dimensions with each boundary mode, its inverse and
its gradient; the separable and stationary transforms; the sparse-matrix transforms (boundary
wavelets orthogonalized by Gram-Schmidt, sparse products); wavelet packets in one and
two dimensions; the continuous transform with a Morlet and a differentiable Shannon wavelet.
Data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import main, normal_tensor

warnings.filterwarnings("ignore")


def _x(seed, shape, dtype=np.float64):
    return normal_tensor(seed, shape, dtype=dtype)


def conv_case():
    """wavedec/waverec in 1, 2 and 3 dimensions (each padding mode, several wavelets, a
    batch axis, the gradient of a coefficient's energy), the separable transforms and
    the stationary transform with its inverse."""
    import ptwt
    res = {}
    sig = _x(1, (3, 37))
    for wavelet in ["haar", "db2", "sym4", "coif1"]:
        for mode in ["zero", "reflect", "periodic", "symmetric", "constant"]:
            x = sig.clone().requires_grad_()
            coeffs = ptwt.wavedec(x, wavelet, mode=mode, level=2)
            rec = ptwt.waverec(coeffs, wavelet)
            (coeffs[0] ** 2).sum().backward()
            res[f"1d_{wavelet}_{mode}"] = {"coeffs": list(coeffs), "rec": rec,
                                          "grad": x.grad}
    img = _x(2, (2, 19, 22))
    for mode in ["zero", "reflect", "symmetric"]:
        c2 = ptwt.wavedec2(img, "db3", mode=mode, level=2)
        res[f"2d_{mode}"] = {"approx": c2[0], "details": [list(d) for d in c2[1:]],
                             "rec": ptwt.waverec2(c2, "db3")}
    vol = _x(3, (1, 9, 10, 12))
    c3 = ptwt.wavedec3(vol, "haar", mode="reflect", level=2)
    res["3d"] = {"approx": c3[0], "details": [sorted(d) for d in c3[1:]],
                 "coeffs": [[d[k] for k in sorted(d)] for d in c3[1:]],
                 "rec": ptwt.waverec3(c3, "haar")}
    f2 = ptwt.fswavedec2(img, "db2", mode="reflect", level=2)
    res["fs2"] = {"approx": f2[0], "rec": ptwt.fswaverec2(f2, "db2"),
                  "keys": [sorted(d) for d in f2[1:]]}
    s = ptwt.swt(sig[:, :32], "db2", level=2)
    res["swt"] = {"coeffs": list(s), "rec": ptwt.iswt(s, "db2")}
    return res


def matrix_case():
    """The sparse-matrix fast wavelet transforms with boundary wavelets (orthogonalized by
    Gram-Schmidt) in one and two dimensions, their inverses, and the sparse analysis matrix
    itself."""
    import ptwt
    res = {}
    sig = _x(4, (2, 32))
    # (Gram-Schmidt only: QR's boundary rows there are the Q of a rank-deficient matrix
    # whose zero pivots leave a column's sign to the LAPACK build, which differs between
    # torch's and SciPy's, which ptcore's QR calls)
    for orth in ["gramschmidt"]:
        dec = ptwt.MatrixWavedec("db3", level=2, orthogonalization=orth)
        coeffs = dec(sig)
        rec = ptwt.MatrixWaverec("db3", orthogonalization=orth)(coeffs)
        res[f"1d_{orth}"] = {"coeffs": list(coeffs), "rec": rec,
                             "matrix": dec.sparse_fwt_operator.to_dense()}
    img = _x(5, (2, 16, 16))
    dec2 = ptwt.MatrixWavedec2("db2", level=2, separable=False, orthogonalization="gramschmidt")
    c2 = dec2(img)
    res["2d"] = {"approx": c2[0], "details": [list(d) for d in c2[1:]],
                 "rec": ptwt.MatrixWaverec2("db2", separable=False,
                                            orthogonalization="gramschmidt")(c2)}
    dec2s = ptwt.MatrixWavedec2("haar", level=2, separable=True)
    c2s = dec2s(img)
    res["2d_separable"] = {"approx": c2s[0],
                           "rec": ptwt.MatrixWaverec2("haar", separable=True)(c2s)}
    return res


def packets_case():
    """1-d and 2-d wavelet packet trees (natural and frequency order), and the continuous
    transform with a Morlet wavelet and with a learnable Shannon wavelet (gradient to its
    bandwidth and center)."""
    import ptwt
    import pywt
    res = {}
    sig = _x(6, (2, 64))
    wp = ptwt.WaveletPacket(sig, "db2", mode="reflect", maxlevel=3)
    res["wp"] = {key: wp[key] for key in ["a", "d", "ad", "dda", "aaa"]}
    res["wp_order"] = wp.get_level(3) if hasattr(wp, "get_level") else None
    img = _x(7, (1, 24, 24))
    wp2 = ptwt.WaveletPacket2D(img, "haar", mode="reflect", maxlevel=2)
    res["wp2"] = {key: wp2[key] for key in ["a", "h", "v", "d", "ad", "hv", "dd"]}
    t = np.linspace(0, 1, 128)
    chirp = torch.from_numpy(np.sin(2 * np.pi * (5 + 20 * t) * t))
    scales = np.arange(1, 16)
    cw, freqs = ptwt.cwt(chirp, scales, "morl")
    res["cwt_morl"] = {"coeffs": cw, "freqs": freqs}
    cw_c, _ = ptwt.cwt(chirp, torch.arange(1, 9.0, dtype=torch.float64), "cmor1.5-1.0")
    res["cwt_cmor"] = {"real": cw_c.real, "imag": cw_c.imag}
    wav = ptwt.continuous_transform._ShannonWavelet("shan1-1")
    cw_s, _ = ptwt.cwt(chirp, torch.arange(1, 6.0, dtype=torch.float64), wav)
    loss = cw_s.abs().pow(2).sum()
    loss.backward()
    res["cwt_shannon"] = {"abs": cw_s.abs(), "grads": [p.grad for p in wav.parameters()]
                          if hasattr(wav, "parameters") else
                          [wav.bandwidth_par.grad, wav.center_par.grad]}
    del pywt
    return res


CASES = {"conv": conv_case, "matrix": matrix_case, "packets": packets_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
