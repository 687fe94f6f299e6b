"""Ops whose result size is known up front refuse an impossible one at once,
with torch's exception type (issue 61, item 6).

``combinations(arange(100), r=10)`` built every tuple in Python until memory
ran out; torch refuses its ``100 ** 10`` grid at once.  Every case below runs
in a subprocess under an address-space cap (``RLIMIT_AS``, 4 GiB) and a
deadline, once with ptcore and once with torch: each must raise, the same
RuntimeError-ness as torch (an allocation that cannot succeed is torch's
allocator RuntimeError; ptcore's HostAllocationError is one), and nothing
may hang or crash.
"""
import json
import subprocess
import sys

import pytest

import ptcore

torch = pytest.importorskip("torch")

CASES = [
    "L.combinations(L.arange(100), r=10)",
    "L.combinations(L.arange(100), r=10, with_replacement=True)",
    "L.combinations(L.arange(100), r=100)",
    "L.combinations(L.arange(40), r=8)",
    "L.combinations(L.arange(3000), r=4)",
    "L.cartesian_prod(*[L.arange(100)] * 10)",
    "L.cartesian_prod(*[L.arange(1000)] * 4)",
    "L.arange(2 ** 62)",
    "L.arange(2 ** 40)",
    "L.arange(0, 1e30, 1e-30)",
    "L.arange(0, 2 ** 62, 1, dtype=L.float32)",
    "L.linspace(0, 1, 2 ** 62)",
    "L.linspace(0, 1, 2 ** 40)",
    "L.logspace(0, 1, 2 ** 40)",
    "L.zeros(2 ** 62)",
    "L.zeros(2 ** 31, 2 ** 31, 4)",
    "L.zeros(2 ** 40, dtype=L.bool)",
    "L.full((2 ** 20, 2 ** 20), 1)",
    "L.rand(2 ** 40)",
    "L.randint(0, 5, (2 ** 40,))",
    "L.randperm(2 ** 40)",
    "L.eye(2 ** 30)",
    "L.arange(4).repeat(2 ** 40)",
    "L.arange(4).repeat(2 ** 31, 2 ** 31)",
    "L.arange(4).expand(2 ** 40, 4).contiguous()",
    "L.arange(4.).expand(2 ** 40, 4) + 1",
    "L.tile(L.arange(4), (2 ** 40,))",
    "L.repeat_interleave(L.arange(4), 2 ** 40)",
    "L.repeat_interleave(L.tensor([2 ** 40]))",
    "L.repeat_interleave(L.tensor([2 ** 62, 2 ** 62]))",
    "L.kron(L.ones(2 ** 20), L.ones(2 ** 20))",
    "L.tril_indices(2 ** 20, 2 ** 20)",
    "L.triu_indices(2 ** 20, 2 ** 20)",
    "L.tril_indices(2 ** 40, 2 ** 40)",
    "L.block_diag(L.ones(2 ** 20, 1), L.ones(1, 2 ** 20))",
    "L.stack(L.meshgrid(L.arange(2 ** 20), L.arange(2 ** 20), indexing='ij'))",
    "L.diag(L.ones(2 ** 20))",
    "L.outer(L.ones(2 ** 20), L.ones(2 ** 20))",
    "L.nn.functional.one_hot(L.tensor([2 ** 40]))",
    "L.bincount(L.tensor([1]), minlength=2 ** 40)",
    "L.histc(L.ones(3), bins=2 ** 40)",
    "L.vander(L.ones(4), N=2 ** 40)",
    "L.multinomial(L.ones(2), 2 ** 40, replacement=True)",
    "L.hann_window(2 ** 40)",
    "L.nn.functional.pad(L.ones(2), (2 ** 40, 0))",
    "L.unique_consecutive(L.arange(4).expand(2 ** 40, 4))",
    "L.ones(1).expand(2 ** 40).kthvalue(1)",
    "L.ones(1).expand(2 ** 40).topk(2 ** 39)",
]

_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import {lib} as L
res = {{}}
for code in json.loads(sys.argv[1]):
    try:
        eval(code)
        res[code] = "returned"
    except Exception as e:
        res[code] = "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__
print(json.dumps(res))
"""


def _outcomes(lib):
    p = subprocess.run([sys.executable, "-c", _CHILD.format(lib=lib), json.dumps(CASES)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (lib, p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_impossible_sizes_are_refused_at_once_as_torch():
    mine, theirs = _outcomes("ptcore"), _outcomes("torch")
    assert all(v == "RuntimeError" for v in theirs.values()), theirs
    assert {c: v for c, v in mine.items() if v != theirs[c]} == {}


def test_combinations_refuse_an_overflowing_grid_with_torchs_message():
    for kw in ({}, {"with_replacement": True}):
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            ptcore.combinations(ptcore.arange(100), r=10, **kw)
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            torch.combinations(torch.arange(100), r=10, **kw)


@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_values_match_torch(with_replacement):
    for n, r in ((0, 2), (1, 3), (5, 0), (5, 1), (5, 3), (6, 6), (4, 5), (9, 4)):
        x = list(range(10, 10 + n))
        got = ptcore.combinations(ptcore.tensor(x, dtype=ptcore.int64), r=r,
                                  with_replacement=with_replacement)
        want = torch.combinations(torch.tensor(x, dtype=torch.int64), r=r,
                                  with_replacement=with_replacement)
        assert list(got.shape) == list(want.shape) and got.tolist() == want.tolist(), (n, r)


def test_tril_triu_indices_values_match_torch():
    for row in (0, 1, 3, 5):
        for col in (0, 1, 4, 6):
            for off in (-7, -3, -1, 0, 1, 2, 5, 9):
                for name in ("tril_indices", "triu_indices"):
                    got = getattr(ptcore, name)(row, col, off)
                    want = getattr(torch, name)(row, col, off)
                    assert list(got.shape) == list(want.shape), (name, row, col, off)
                    assert got.tolist() == want.tolist(), (name, row, col, off)


def test_block_diag_values_match_torch():
    shapes = [(2, 3), (0, 2), (1,), (), (3, 0), (2, 2)]
    rng = __import__("numpy").random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in shapes]
    got = ptcore.block_diag(*[ptcore.tensor(a) for a in arrs])
    want = torch.block_diag(*[torch.tensor(a) for a in arrs])
    assert list(got.shape) == list(want.shape) and got.tolist() == want.tolist()
    got = ptcore.block_diag(ptcore.tensor([[1, 2]]), ptcore.tensor([[1.5]], dtype=ptcore.float32))
    want = torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([[1.5]], dtype=torch.float32))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()
