"""``Variable._execution_engine.queue_callback``: final callbacks of the running
backward pass, as torch's."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _run(T):
    log = []
    engine = T.autograd.Variable._execution_engine
    x = T.ones(3, requires_grad=True)

    def hook(g):
        log.append(("hook", x.grad is None))
        engine.queue_callback(lambda: (log.append(("final", x.grad is not None)),
                                       engine.queue_callback(lambda: log.append("nested"))))
        return g
    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    log.append("after")
    (x * 3).sum().backward()          # no callbacks queued: nothing runs again
    try:
        engine.queue_callback(lambda: None)
    except RuntimeError as e:
        log.append(("outside", type(e).__name__, str(e)))
    return log


def test_final_callbacks_run_after_the_pass_in_order_as_torch():
    got = _run(ptcore)
    assert got == _run(torch)
    assert got[:3] == [("hook", True), ("final", True), "nested"]


def test_a_failing_backward_drops_its_callbacks():
    engine = ptcore.autograd.Variable._execution_engine
    ran = []
    x = ptcore.ones(2, requires_grad=True)

    def hook(g):
        engine.queue_callback(lambda: ran.append(1))
        raise ValueError("boom")
    y = x * 2
    y.register_hook(hook)
    with pytest.raises(ValueError, match="boom"):
        y.sum().backward()
    (x * 2).sum().backward()
    assert ran == []
