"""The default-device layer of the dispatch point (order 1).

``ptcore.set_default_device(d)`` (ptcore._settings) and ``with ptcore.device(d):`` make the
factory functions (the ops declared ``default_device=True``, torch's
``_device_constructors``: ``zeros``, ``tensor``, ``arange``, ``rand`` ...)
create their tensors on ``d`` when the call names no device, as torch's
``DeviceContext`` mode does.  Both are per thread, a ``with`` block wins over
the thread's default, and the innermost block wins over outer ones.  The layer
is on only while some thread has set a device, so it costs nothing otherwise;
while it is on, every op takes the layered path (as every op passes torch's
mode stack while a default device is set).
"""
import threading

from ptcore import _settings
from ptcore import _tensor as _C
from ptcore._dispatch import dispatcher as _D

__all__ = []


class _Tls(threading.local):
    def __init__(self):
        self.default = None      # set_default_device's device
        self.blocks = []         # devices of the open `with device` blocks, innermost last
        # how many of the blocks were open when set_default_device was called: as in
        # torch, it overrides those (and outlives them), blocks opened later override it
        self.default_at = 0
        self.depth = 0           # op calls in progress on this thread


_tls = _Tls()
_lock = threading.Lock()
_active = [0]                    # threads with a default device or an open block


def _current():
    t = _tls
    if t.blocks and (t.default is None or len(t.blocks) > t.default_at):
        return t.blocks[-1]
    return t.default


def _update(before):
    """Turn the layer on or off when this thread's state changed between
    having no device (``before`` False) and having one."""
    now = _current() is not None
    if now == before:
        return
    with _lock:
        _active[0] += 1 if now else -1
        _LAYER.set_enabled(_active[0] > 0)


class _DefaultDeviceLayer(_D.Layer):
    order = 1
    name = "default_device"

    def handle(self, entry, opdef, args, kwargs, nxt):
        t = _tls
        # only the caller's own factory calls: the ones ops make inside their
        # bodies (scratch and host-staging tensors) keep their own devices
        decl = opdef.decl
        if t.depth == 0 and decl is not None and decl.default_device and \
                opdef.kind != "method" and kwargs.get("device") is None:
            dev = _current()
            if dev is not None:
                kwargs = dict(kwargs)
                kwargs["device"] = dev
        t.depth += 1
        try:
            return nxt(args, kwargs)
        finally:
            t.depth -= 1


_LAYER = _D.register_layer(_DefaultDeviceLayer())


def _set(device):
    before = _current() is not None
    _tls.default = device
    _tls.default_at = len(_tls.blocks)
    _update(before)


def _enter(device):
    before = _current() is not None
    _tls.blocks.append(device)
    _update(before)


def _exit(device):
    before = _current() is not None
    blocks = _tls.blocks
    if blocks:
        if blocks[-1] is device:
            blocks.pop()
        else:                            # blocks closed out of order
            for i in range(len(blocks) - 1, -1, -1):
                if blocks[i] is device:
                    del blocks[i]
                    break
    if _tls.default_at > len(blocks):
        _tls.default_at = len(blocks)
    _update(before)


_C._set_device_context_hooks(_enter, _exit)
_settings._default_device_state.update(set=_set, current=_current)
