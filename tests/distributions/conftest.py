"""The distributions tests compare against torch with its default argument
validation on.  torch turns it off for the whole process when its compiler
first runs (torch._dynamo's eval_frame calls
``Distribution.set_default_validate_args(False)``), so a ``torch.compile`` in an
earlier test changes what torch's distributions raise: each test here runs
with torch's default as torch ships it, and the state is restored after."""
import pytest


@pytest.fixture(autouse=True)
def _torch_default_validation():
    try:
        import torch.distributions as TD
    except ImportError:
        yield
        return
    old = TD.Distribution._validate_args
    TD.Distribution.set_default_validate_args(True)
    try:
        yield
    finally:
        TD.Distribution.set_default_validate_args(old)
