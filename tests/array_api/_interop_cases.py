"""Run SciPy and scikit-learn array-API code on ptcore tensors and on NumPy arrays; print a JSON report.

Run as a script in a fresh interpreter: ``SCIPY_ARRAY_API=1`` must be set before SciPy is
imported, which a test session that already imported SciPy cannot do.
"""
import json
import os
import sys
import warnings

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402

import ptcore  # noqa: E402

rng = np.random.default_rng(0)
A = rng.standard_normal((6, 5))
X = rng.standard_normal((40, 5))
Y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(40)
YC = (Y > 0).astype(np.int64)


def _scipy_cases():
    import scipy.cluster.vq
    import scipy.fft
    import scipy.integrate
    import scipy.ndimage
    import scipy.signal
    import scipy.special
    import scipy.stats
    return {
        "special.logsumexp": lambda a: scipy.special.logsumexp(a, axis=0),
        "special.erf": lambda a: scipy.special.erf(a),
        "special.softmax": lambda a: scipy.special.softmax(a, axis=1),
        "stats.zscore": lambda a: scipy.stats.zscore(a, axis=0),
        "stats.skew": lambda a: scipy.stats.skew(a, axis=0),
        "stats.ttest_1samp": lambda a: scipy.stats.ttest_1samp(a, 0.0, axis=0).statistic,
        "signal.fftconvolve": lambda a: scipy.signal.fftconvolve(a, a[:3], mode="same"),
        "signal.convolve": lambda a: scipy.signal.convolve(a[:, 0], a[:3, 1]),
        "ndimage.gaussian_filter": lambda a: scipy.ndimage.gaussian_filter(a, 1.0),
        "ndimage.median_filter": lambda a: scipy.ndimage.median_filter(a, 3),
        "integrate.trapezoid": lambda a: scipy.integrate.trapezoid(a, axis=0),
        "integrate.cumulative_trapezoid": lambda a: scipy.integrate.cumulative_trapezoid(a, axis=0),
        "cluster.vq.whiten": lambda a: scipy.cluster.vq.whiten(a),
        "cluster.vq.vq": lambda a: scipy.cluster.vq.vq(a, a[:2])[0],
        "fft.fft": lambda a: scipy.fft.fft(a, axis=0),
        "fft.rfft": lambda a: scipy.fft.rfft(a, axis=0),
    }


def _sklearn_cases():
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.metrics import accuracy_score, mean_squared_error, r2_score
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    return {
        "PCA": lambda X, y, yc: PCA(n_components=2, svd_solver="full").fit_transform(X),
        "LinearDiscriminantAnalysis": lambda X, y, yc: LinearDiscriminantAnalysis().fit(X, yc).predict_proba(X),
        "Ridge": lambda X, y, yc: Ridge(alpha=1.0, solver="svd").fit(X, y).predict(X),
        "StandardScaler": lambda X, y, yc: StandardScaler().fit_transform(X),
        "MinMaxScaler": lambda X, y, yc: MinMaxScaler().fit_transform(X),
        "accuracy_score": lambda X, y, yc: accuracy_score(yc, (X[:, 0] > 0) * 1),
        "r2_score": lambda X, y, yc: r2_score(y, X[:, 0]),
        "mean_squared_error": lambda X, y, yc: mean_squared_error(y, X[:, 0]),
    }


def _record(out, ref):
    if isinstance(out, ptcore.Tensor):
        kind, val = "Tensor", out.numpy()
    elif isinstance(out, np.ndarray):
        kind, val = "ndarray", out
    else:
        kind, val = type(out).__name__, np.asarray(out)
    close = val.shape == np.shape(ref) and bool(np.allclose(val, ref, rtol=1e-6, atol=1e-9))
    return {"type": kind, "close": close}


def main(which):
    report = {}
    warnings.simplefilter("ignore")
    if which == "scipy":
        for name, f in _scipy_cases().items():
            try:
                report[name] = _record(f(ptcore.from_numpy(A.copy())), f(A))
            except Exception as exc:  # reported to the test, which fails with the message
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
    else:
        import sklearn
        for name, f in _sklearn_cases().items():
            try:
                with sklearn.config_context(array_api_dispatch=True):
                    ref = f(X, Y, YC)
                    out = f(*(ptcore.from_numpy(v.copy()) for v in (X, Y, YC)))
                report[name] = _record(out, ref)
            except Exception as exc:
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
