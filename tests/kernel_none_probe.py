"""None for each tensor/dtype argument of every Python-callable function of
ptcore's Cython kernel modules, one argument at a time (issue 15).

The kernels' ``def`` functions are internal, but reachable from Python: each
must raise (TypeError) rather than dereference None.  Argument types are read
from the signatures Cython embeds in the docstrings; the other arguments get
plausible values (a 2x2 float32 tensor, 0, False, ...).  Each call is written
to stdout (flushed) before it runs, so a crash names the call; the parent
(tests/test_kernel_none_args.py) runs this in a subprocess.

    PYTHONPATH=$PWD python tests/kernel_none_probe.py
"""
import importlib
import re
import sys

import ptcore

MODULES = ["ptcore._ops.kernels._blas", "ptcore._ops.kernels._conv", "ptcore._ops.kernels._index", "ptcore._ops.kernels._reduce",
           "ptcore._ops.kernels._sort", "ptcore._ops.kernels._optim", "ptcore._ops.kernels._fused", "ptcore._ops.kernels._ewdrv",
           "ptcore._ops.kernels._copy", "ptcore._ops.kernels._random", "ptcore._dlpack", "ptcore._tensor",
           "ptcore._ops.kernels._resample", "ptcore._ops.kernels._ctc"]
_VALUES = {"int": 0, "Py_ssize_t": 0, "bint": False, "double": 0.0, "float": 0.0, "str": "sum",
           "tuple": (), "list": [], "int64_t": 0, "uint64_t": 0}
_NULLABLE_KINDS = ("_TensorBase", "Storage", "dtype", "_Dtype", "object", None)


def calls():
    """(description, function, args) for every probe call."""
    t = ptcore.zeros(2, 2)
    values = dict(_VALUES, dtype=ptcore.float32, _Dtype=ptcore.float32)
    for mname in MODULES:
        m = importlib.import_module(mname)
        for name in sorted(dir(m)):
            f = getattr(m, name)
            if name.startswith("__") or not callable(f) or isinstance(f, type):
                continue
            doc = (getattr(f, "__doc__", None) or "").split("\n")[0]
            sig = re.match(rf"{re.escape(name)}\((.*)\)", doc)
            if not sig:
                continue
            req = []
            for p in (p.strip() for p in sig.group(1).split(",")):
                if not p or "=" in p or p.startswith("*"):
                    break
                words = p.replace(" not None", "").split()
                req.append((words[0] if len(words) > 1 else None, "not None" in p))
            for k, (kind, not_none) in enumerate(req):
                if not_none or kind not in _NULLABLE_KINDS:
                    continue
                args = [values.get(kind2, t) for kind2, _ in req]
                args[k] = None
                yield f"{mname}.{name} arg {k} ({kind})", f, args


def main():
    n = 0
    for desc, f, args in calls():
        sys.stdout.write(desc + "\n")
        sys.stdout.flush()
        try:
            f(*args)
        except BaseException:      # noqa: BLE001 - any exception is fine, a crash is not
            pass
        n += 1
    sys.stdout.write(f"done {n}\n")


if __name__ == "__main__":
    main()
