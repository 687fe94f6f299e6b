"""jaxtyping with beartype on ptcore, unmodified, against torch (``jaxtyping_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch):
shape/dtype-annotated functions checked at run time (named, fixed, variadic, broadcast and
expression dims, dtype families, dims consistent across arguments and the return value, a
checked dataclass), what each accepts (results equal) and rejects (the same exception), and
isinstance/is_bearable of tensors of nine dtypes against thirteen jaxtyping types, of
parameters, views, meta and float8 tensors, sparse COO/CSR tensors, sizes, dtypes and
devices.  Everything agrees; jaxtyping and beartype needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("jaxtyping", "beartype")

NAMES = ["annotations", "isinstance"]
runs, test_jaxtyping = case_tests("jaxtyping_cases.py", NAMES)
