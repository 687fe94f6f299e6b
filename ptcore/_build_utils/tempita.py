#!/usr/bin/env python3
"""Expand a Tempita template (``x.pyx.tp`` -> ``x.pyx``), as SciPy's build does."""
import argparse
import os

from Cython import Tempita


def main():
    p = argparse.ArgumentParser()
    p.add_argument("infile")
    p.add_argument("-o", "--outdir", required=True)
    args = p.parse_args()
    with open(args.infile, encoding="utf-8") as f:
        tmpl = Tempita.Template(f.read(), name=args.infile)
    out = tmpl.substitute()
    name = os.path.basename(args.infile)
    if name.endswith(".tp"):
        name = name[:-3]
    target = os.path.join(args.outdir, name)
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(out)
    os.replace(tmp, target)


if __name__ == "__main__":
    main()
