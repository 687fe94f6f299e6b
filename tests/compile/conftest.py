"""Every compile test starts and ends with no compiled code cached."""
import pytest

import ptcore


@pytest.fixture(autouse=True)
def _fresh_compiler():
    ptcore.compiler.reset()
    yield
    ptcore.compiler.reset()
