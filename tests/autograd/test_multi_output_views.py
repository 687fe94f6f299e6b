"""In-place writes into views that autograd forbids, as torch 2.13: one output
of split/chunk/unbind (torch's CreationMeta::MULTIPLE_OUTPUTS, views of it
included), a view made under no_grad of a tensor that requires grad written
with grad mode on (CreationMeta::NO_GRAD_MODE), and ``leaf[index] = v``
through a view of a leaf; the uses torch allows (no_grad, detach, .data,
tensor_split, unsafe_split) stay allowed."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _base(lib, leaf=False):
    a = lib.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]], requires_grad=True)
    return a if leaf else a * 1


def _nograd_view(lib, multi=False, leaf=False):
    a = _base(lib, leaf)
    with lib.no_grad():
        v = a.split(2)[0] if multi else a[1:3]
    return v


CASES = {
    "no_grad view written with grad": lambda lib: _nograd_view(lib).mul_(2),
    "no_grad view of a leaf written with grad": lambda lib: _nograd_view(lib, leaf=True).zero_(),
    "no_grad split piece written with grad": lambda lib: _nograd_view(lib, multi=True).add_(1),
    "no_grad view copy_": lambda lib: _nograd_view(lib).copy_(lib.zeros(2, 2)),
    "no_grad view fill_": lambda lib: _nograd_view(lib).fill_(3.0),
    "no_grad view setitem": lambda lib: _nograd_view(lib).__setitem__(0, 1.0),
    "unbind": lambda lib: _base(lib).unbind(0)[2].mul_(2),
    "unbind dim 1": lambda lib: _base(lib).unbind(1)[1].copy_(lib.zeros(4)),
    "split": lambda lib: _base(lib).split(2)[1].add_(1),
    "split sizes": lambda lib: _base(lib).split([1, 3])[0].add_(1),
    "split one piece": lambda lib: _base(lib).split(4)[0].add_(1),
    "chunk": lambda lib: _base(lib).chunk(2)[0].zero_(),
    "split of a leaf": lambda lib: _base(lib, leaf=True).split(2)[0].add_(1),
    "select of a piece": lambda lib: _base(lib).split(2)[0][1].add_(1),
    "view of a piece": lambda lib: _base(lib).chunk(2)[1].view(-1).add_(1),
    "setitem into a piece": lambda lib: _base(lib).split(2)[0].__setitem__(0, 5.0),
    "leaf[0] = 5": lambda lib: _base(lib, leaf=True).__setitem__(0, 5.0),
    "leaf[0:2] = 5": lambda lib: _base(lib, leaf=True).__setitem__(slice(0, 2), 5.0),
    "leaf[:, 1] = 5": lambda lib: _base(lib, leaf=True).__setitem__((slice(None), 1), 5.0),
    "leaf[None] = 5": lambda lib: _base(lib, leaf=True).__setitem__(None, 5.0),
    "leaf[0:4] = 5": lambda lib: _base(lib, leaf=True).__setitem__(slice(0, 4), 5.0),
    "leaf[...] = 5": lambda lib: _base(lib, leaf=True).__setitem__(Ellipsis, 5.0),
    "leaf[[0]] = 5": lambda lib: _base(lib, leaf=True).__setitem__([0], 5.0),
}


def _allowed_no_grad(lib):
    x = _base(lib).split(2)[0]
    with lib.no_grad():
        x.add_(1)


def _allowed_base_without_grad(lib):
    x, y = lib.ones(4, 2).split(2)
    x.add_(1)
    return x


def _allowed_nograd_view_in_no_grad(lib):
    v = _nograd_view(lib)
    with lib.no_grad():
        v.mul_(2)


def _allowed_nograd_view_of_plain_tensor(lib):
    a = lib.ones(4, 2)
    with lib.no_grad():
        v = a[1:3]
    v.mul_(2)


ALLOWED = {
    "no_grad view written in no_grad": _allowed_nograd_view_in_no_grad,
    "no_grad view of a tensor without grad": _allowed_nograd_view_of_plain_tensor,
    "no_grad view detached": lambda lib: _nograd_view(lib).detach().mul_(2),
    "no_grad": _allowed_no_grad,
    "detach": lambda lib: _base(lib).split(2)[0].detach().add_(1),
    ".data": lambda lib: _base(lib).unbind(0)[0].data.add_(1),
    "tensor_split": lambda lib: _base(lib).tensor_split(2)[0].add_(1),
    "hsplit": lambda lib: _base(lib).hsplit(2)[0].add_(1),
    "unsafe_split": lambda lib: _base(lib).unsafe_split(2)[0].add_(1),
    "base without grad": _allowed_base_without_grad,
}


def _outcome(fn, lib):
    try:
        fn(lib)
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_forbidden_inplace_on_views_matches_torch(name):
    want = _outcome(CASES[name], torch)
    assert want is not None
    assert _outcome(CASES[name], ptcore) == want


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed_inplace_on_views_matches_torch(name):
    assert _outcome(ALLOWED[name], torch) is None
    assert _outcome(ALLOWED[name], ptcore) is None


def test_requires_grad_view_written_in_place_is_a_view_of_a_leaf():
    for lib in (ptcore, torch):
        v = lib.arange(8.0).reshape(4, 2).requires_grad_()      # a view made a leaf
        with pytest.raises(RuntimeError, match="^a view of a leaf Variable"):
            v.add_(1)
