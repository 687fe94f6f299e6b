"""The variants each public op has in the running package, as
``ptcore/_dispatch/variants.py`` declares them.

``python tools/op_variants.py`` prints the declaration body (groups of op
names by variant set) from what the package binds; it reads them with
``existing()`` of ``tests/dispatch/test_variants.py``, the test that checks the
declaration and the package agree both ways.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "dispatch"))


def main():
    import ptcore.fft  # noqa: F401
    import ptcore.linalg  # noqa: F401
    import ptcore.nn.functional  # noqa: F401
    import ptcore.special  # noqa: F401
    groups = {}
    from test_variants import existing
    for (group, op), v in sorted(existing().items()):
        order = ("function", "method", "inplace", "out", "operator")
        key = (group, " ".join(x for x in order if x in v))
        groups.setdefault(key, []).append(op)
    for (group, variants), ops in sorted(groups.items()):
        print(f'    ({group!r}, {variants!r}): """')
        line = "       "
        for op in ops:
            if len(line) + len(op) + 1 > 98:
                print(line)
                line = "       "
            line += " " + op
        print(line + '""",')


if __name__ == "__main__":
    main()
