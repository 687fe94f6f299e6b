"""The variants each public op has in the running package, in the form of
its declaration in ``ptcore/_ops/declarations``.

``python tools/op_variants.py`` prints, for every op whose variants in the
package differ from its declaration (or that has none), the ``op(name,
variants)`` line to put in its family's declaration module.  It reads the
package with ``existing()`` of ``tests/dispatch/test_variants.py``, the test
that checks the declarations and the package agree both ways.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "dispatch"))


def main():
    import ptcore.fft  # noqa: F401
    import ptcore.linalg  # noqa: F401
    import ptcore.nn.functional  # noqa: F401
    import ptcore.special  # noqa: F401
    from ptcore._dispatch.declarations import DECLARED
    from test_variants import existing
    order = ("function", "method", "inplace", "out", "operator")
    for (group, op), v in sorted(existing().items()):
        d = DECLARED.get((group, op))
        if d is not None and d.variants == frozenset(v):
            continue
        where = f"  # group {group!r}" if group != "ptcore" else ""
        print(f'op("{op}", "{" ".join(x for x in order if x in v)}"){where}')

if __name__ == "__main__":
    main()
