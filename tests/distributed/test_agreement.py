"""Ranks that disagree on a collective's or a message's arguments (operation, shape, dtype,
root, reduction, split sizes, group members, number of objects) all raise a clear error:
run with 2 and 3 MPI processes (dist_worker_agreement.py) over the cases of
dist_agreement_cases.py, and in one process for the agreement word's algebra.

A rank that hangs fails its case with the group's timeout (90 s), well inside the job's.
"""
import numpy as np
import pytest

from dist_launch import run_mpi
import dist_agreement_cases as cases

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _results(tmp_path, n, which):
    p = run_mpi("dist_worker_agreement.py", n, which, timeout=600,
                env={"OUT_DIR": str(tmp_path)})
    files = {r: tmp_path / f"agreement.{r}.npy" for r in range(n)}
    missing = [r for r, f in files.items() if not f.exists()]
    assert not missing, f"ranks {missing} saved nothing:\n{p.stdout}"
    return {r: cases.load(f) for r, f in files.items()}, p.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_every_rank_raises_when_the_ranks_disagree(n, tmp_path):
    names = cases.collective_names()
    results, out = _results(tmp_path, n, "collectives")
    bad = cases.check(results, n, names)
    assert not bad, "\n".join(bad) + "\n" + out


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("which", cases.LAST)
def test_new_group_with_different_members_raises_on_every_rank(n, which, tmp_path):
    results, out = _results(tmp_path, n, which)
    bad = cases.check(results, n, [which])
    assert not bad, "\n".join(bad) + "\n" + out


# ---------------------------------------------------------------- in one process (no MPI)
def _xor(words):
    out = 0
    for w in words:
        out ^= int(w[0])
    return out


def test_the_words_cancel_exactly_when_the_ranks_agree():
    from ptcore.distributed import _agreement as A
    import ptcore
    for n in (1, 2, 3, 7):
        same = [A.describe("all_reduce", ptcore.float32, (2, 3), A.extra_of(op=0))] * n
        assert _xor(A.word(r, n, d) for r, d in enumerate(same)) == 0
        for r_odd in range(n if n > 1 else 0):
            for other in (A.describe("all_reduce", ptcore.float32, (2, 4)),
                          A.describe("all_reduce", ptcore.float64, (2, 3)),
                          A.describe("all_reduce", ptcore.float32, (2, 3), A.extra_of(op=4)),
                          A.describe("broadcast", ptcore.float32, (2, 3)),
                          A.describe("barrier")):
                descs = list(same)
                descs[r_odd] = other
                assert _xor(A.word(r, n, d) for r, d in enumerate(descs)) != 0, (n, r_odd)


def test_the_all_to_all_counts_cancel_exactly_when_they_match():
    from ptcore.distributed import _agreement as A
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5):
        counts = rng.integers(0, 6, size=(n, n))          # counts[a, b]: a sends to b
        desc = A.describe("all_to_all_single", None)

        def words(sent, expected):
            return [A.word(r, n, desc, (sent[r], expected[r])) for r in range(n)]
        assert _xor(words(counts, counts.T)) == 0
        for a in range(n):
            for b in range(n):
                wrong = counts.T.copy()
                wrong[b, a] += 1                           # b expects one more from a
                assert _xor(words(counts, wrong)) != 0, (n, a, b)
        if n > 1:                                          # two wrong pairs do not cancel
            wrong = counts.T.copy()
            wrong[1, 0] += 1
            wrong[0, 1] += 1
            assert _xor(words(counts, wrong)) != 0


def test_operation_codes_do_not_depend_on_call_order():
    # codes were numbered by first use, so ranks calling collectives in a different order
    # gave one operation different codes
    import subprocess
    import sys
    code = ("import ptcore.distributed._agreement as A, sys\n"
            "names = sys.argv[1:]\n"
            "print([A.describe(n)[0] for n in sorted(names)])\n")
    from dist_launch import _env
    outs = {subprocess.run([sys.executable, "-c", code, *order], capture_output=True, text=True,
                           timeout=120, env=_env()).stdout
            for order in (["all_reduce", "broadcast"], ["broadcast", "all_reduce"])}
    assert len(outs) == 1 and outs != {""}, outs


def test_the_pair_terms_are_the_same_in_python_and_numpy():
    # small groups compute them in Python ints, large ones with NumPy: every rank of a
    # group takes the same branch, but the two must agree for the algebra above to hold
    from ptcore.distributed import _agreement as A
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 17, 64):
        for rank in {0, n // 2, n - 1}:
            sent, expected = rng.integers(0, 1 << 40, size=(2, n)).tolist()
            assert A._pair_term(rank, n, sent, expected) == \
                A._pair_term_np(rank, n, sent, expected)
