"""Dump what every layer decides about every op, as JSON, to compare before and
after a change to how ops are declared (issue 60: the facts move into one
declaration per op; what the layers do with them must not change).

    python tools/op_facts.py > before.json
    ... change ...
    python tools/op_facts.py > after.json
    python tools/op_facts.py --diff before.json after.json

For each op of the table (namespace, name): its kind, family, tags, autocast
category and variants; a fingerprint of its body (the qualified names of the
functions it is made of: the recording wrapper and the formula it closes
over), of its device fast path, of its forward-mode (JVP) rule and of its
batching rule; whether the device layer lets it through; its CUDA kernel on
the emulated device.  Also which public names are entries of which op.
"""
import json
import os
import sys


def _fingerprint(fn, depth=2):
    """Qualified names of ``fn`` and of the functions its closure holds."""
    if fn is None:
        return None
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    mod = getattr(fn, "__module__", None) or ""
    out = [f"{mod}:{name}"]
    if depth:
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if callable(v) and hasattr(v, "__qualname__") and not isinstance(v, type):
                out.extend(_fingerprint(v, depth - 1))
    return sorted(set(out))


def collect():
    os.environ.setdefault("PTCORE_CUDA_EMULATE", "1")
    import ptcore
    import ptcore.nn.functional  # noqa: F401  (declares its ops)
    import ptcore.fft  # noqa: F401
    import ptcore.special  # noqa: F401
    import ptcore.func  # noqa: F401
    import ptcore.nn.functional._aten_forms  # noqa: F401  (binds ptcore.lstm & co.)
    from ptcore._dispatch.table import OPS, op_of
    from ptcore._dispatch import device as dev
    from ptcore.autograd import _jvp_formulas as jvp
    from ptcore.func import _batching_rules as br
    ptcore.cuda.init()          # registers the CUDA kernels (emulated device)
    facts = {}
    for (ns, name), d in sorted(OPS.items()):
        facts[f"{ns}.{name}"] = {
            "kind": d.kind, "family": d.family, "tags": sorted(d.tags), "autocast": d.autocast,
            "variants": sorted(d.variants or ()),
            "raw": _fingerprint(d.raw, 0),
            "body": _fingerprint(d.body),
            "device_fast": _fingerprint(d.device_fast),
            # what the device layer does with a call on CUDA: the op's kernel, or
            # (without one) let it through to its body, or refuse
            "device": "kernel" if d.kernels.get("cuda") is not None else
                      "through" if dev.passes_through(d) else "refuse",
            "jvp": _fingerprint(jvp._rule_for(d), 0),
            "batch": _fingerprint(br._rule_of(d), 0),
            "cuda": _fingerprint(d.kernels.get("cuda"), 1),
        }
    spaces = {"ptcore": ptcore, "Tensor": ptcore.Tensor, "nn.functional": ptcore.nn.functional,
              "linalg": ptcore.linalg, "fft": ptcore.fft, "special": ptcore.special}
    public = {}
    for sname, space in spaces.items():
        for attr in sorted(dir(space)):
            try:
                v = getattr(space, attr)
            except Exception:       # noqa: BLE001
                continue
            d = op_of(v)
            if d is not None:
                public[f"{sname}.{attr}"] = f"{d.namespace}.{d.name}"
    return {"ops": facts, "public": public}


def diff(a, b):
    n = 0
    for section in ("ops", "public"):
        x, y = a[section], b[section]
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                n += 1
                if n <= 200:
                    print(f"{section} {k}:\n  before {x.get(k)}\n  after  {y.get(k)}")
    print(f"{n} differences")
    return n


if __name__ == "__main__":
    if sys.argv[1:2] == ["--diff"]:
        with open(sys.argv[2]) as f1, open(sys.argv[3]) as f2:
            sys.exit(1 if diff(json.load(f1), json.load(f2)) else 0)
    json.dump(collect(), sys.stdout, indent=1, sort_keys=True)
