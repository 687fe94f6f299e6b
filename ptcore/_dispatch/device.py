"""The device layer of the dispatch point: where an op meets the device its
tensors live on.

The layer is the last before the op's body (order 40).  It is off until a
device runtime initialises (``ptcore.cuda`` turns it on with the first CUDA
call), so CPU-only programs never pay for it; once on, it acts per call
(``off_cpu_only``): an entry whose tensor arguments (also inside lists/tuples
and keyword arguments, ``out=`` included) are all on the CPU runs the op's
body directly, as with no layer on (the core methods stay the Cython ones).
Otherwise:

* ops that touch no element themselves pass through: the tensor-core
  methods (views, ``to``, ``clone``, ``contiguous``, ``item`` ... whose data
  movement the core routes to the device runtime), factories, the ops whose
  declaration says ``device="through"`` (views, metadata queries,
  composites written with other ops' entries, each of which comes through
  here again) and the composites of the ``*_composite`` modules;
* every other op runs the kernel registered for the device type in its
  :class:`~ptcore._dispatch.table.OpDef` (``opdef.kernels[device_type]``;
  for the ops declared ``device="frontend"`` the op's own front-end, which
  runs the loops the device registered, :func:`register_frontends`),
  under the autograd body the op's ``_body_factory`` builds over it, so a
  device kernel is differentiable exactly as the CPU one;
* an op with no kernel for the device runs the device's fallback when its
  runtime registered one (:func:`register_fallback`: the meta device derives
  the outputs' shapes and dtypes there), else raises ``NotImplementedError``
  naming the op and the device: device memory is never read on the host,
  and tensors are never copied to the host behind the caller's back.

Tensors on two devices (a CPU tensor with dimensions next to a CUDA one, or
two CUDA devices) raise torch's "Expected all tensors to be on the same
device" ``RuntimeError`` (0-d CPU tensors are allowed, as in torch).

A device kernel may have a *fast form*, registered here next to it
(:func:`register_fast_form`, ``OpDef.fast_forms``): the calls it takes in C
(dense operands of one dtype) run it before the layers, from the entry
(``OpDef.device_fast``, which this module alone derives); what it declines
comes here.  The CPU driver's C fast-path table, which the operator methods
(``a + b``) and the ops' :data:`DRIVER` fast forms use, is filled here too
(:func:`register_driver_fast_paths`).
"""
from ptcore._tensor import _TensorBase, _in_host_memory, device as _device
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch.declarations import PROTOCOL_METHODS
from ptcore._dispatch.table import OPS, OpDef, lookup
from ptcore._ops.kernels import _ewdrv

__all__ = ["DeviceLayer", "LAYER", "enable", "register_kernel", "register_frontends", "use_frontend",
           "kernel_for", "DRIVER", "register_fast_form", "follow_fast_forms", "fast_forms",
           "register_driver_fast_paths",
           "register_loop", "has_loop", "loop_for", "loop_table", "register_fallback", "passes_through", "refuse_cpu_half",
           "check_same_device", "common_device", "is_accelerator", "has_fused_kernels", "in_host_memory",
           "device_index", "svd_takes_driver", "device_mismatch_error", "device_mismatch_message", "cpu_kernel", "no_kernel_error", "device_str", "register_runtime",
           "runtime"]

class DeviceLayer(_D.Layer):
    order = 40
    name = "device"
    # an entry comes here only when an argument is off the CPU (or another
    # layer is on): all-CPU calls never pay for this layer
    off_cpu_only = True

    def __init__(self):
        self._passthrough = {}      # OpDef -> bool

    def _passes(self, opdef):
        p = self._passthrough.get(opdef)
        if p is None:
            # the composites of the *_composite modules and calculus are written
            # with other ops' entries (their in-place forms are ``copy_`` of
            # the out-of-place op, whatever the op's own device fact says)
            mod = getattr(opdef.raw, "__module__", "") or ""
            decl = opdef.decl
            p = (opdef.kind == "core" or "factory" in opdef.tags or opdef.name in PROTOCOL_METHODS
                 or decl is not None and decl.device == "through"
                 or mod.endswith("_composite") or mod == "ptcore._ops.calculus")
            self._passthrough[opdef] = p
        return p

    def handle(self, entry, opdef, args, kwargs, nxt):
        dev, mixed = _devices(args, kwargs)
        if dev is None:
            return nxt(args, kwargs)
        kernels = opdef.kernels
        k = kernels.get(dev.type) if kernels else None
        if k is None and self._passes(opdef):
            return nxt(args, kwargs)
        if mixed is not None:
            raise RuntimeError(mixed)
        if k is None:
            fb = _FALLBACKS.get(dev.type)
            if fb is None:
                raise no_kernel_error(_public_name(opdef), dev)
            b = opdef.device_bodies.get(dev.type)
            if b is None:
                b = _device_body(opdef, dev.type, fb(opdef))
            return b(*args, **kwargs)
        return _device_body(opdef, dev.type, k)(*args, **kwargs)


_FALLBACKS = {}


def register_fallback(device_type, make_kernel):
    """Register the fallback of ``device_type``: ``make_kernel(opdef)`` gives
    the kernel (with the op's arguments) of an op that has none registered
    for the device and does not pass through this layer."""
    _FALLBACKS[device_type] = make_kernel


def passes_through(opdef):
    """Whether ``opdef`` passes through this layer to its own body (a core
    method, factory, geometry op or composite) when it has no device kernel."""
    return LAYER._passes(opdef)


def _public_name(opdef):
    ns = opdef.namespace
    if ns == "Tensor":
        return f"Tensor.{opdef.name}"
    if ns == "ptcore":
        return f"ptcore.{opdef.name}"
    return f"ptcore.{ns}.{opdef.name}"


def _device_body(opdef, device_type, kernel):
    bodies = opdef.device_bodies
    b = bodies.get(device_type)
    if b is None:
        factory = opdef._body_factory
        b = factory(kernel) if factory is not None else kernel
        bodies[device_type] = b
    return b


def _scan(x, found):
    if isinstance(x, _TensorBase):
        found.append(x)
    elif type(x) in (list, tuple):
        for y in x:
            if isinstance(y, _TensorBase):
                found.append(y)
            elif type(y) in (list, tuple):
                _scan(y, found)


def _devices(args, kwargs):
    """(the non-CPU device of the tensor arguments or None, and the message
    of torch's same-device error when they are on two devices, or None)."""
    found = []
    for a in args:
        _scan(a, found)
    if kwargs:
        for v in kwargs.values():
            _scan(v, found)
    dev = None
    mixed = None
    for t in found:
        d = t.device
        if d.type != "cpu":
            if dev is None:
                dev = d
            elif d != dev and mixed is None:
                mixed = device_mismatch_message(dev, d)
    if dev is None:
        return None, None
    if mixed is None:
        for t in found:
            if t.device.type == "cpu" and t.dim() != 0:
                mixed = device_mismatch_message(dev, t.device)
                break
    return dev, mixed


LAYER = _D.register_layer(DeviceLayer())
_ENABLED_BY = set()     # the device types whose runtime has the layer on


def enable(flag=True, device_type="cuda"):
    """Turn the device layer on (the runtime of ``device_type`` initialised,
    or made its first tensor) or off for that device type: the layer is on
    while some device type's runtime has it on."""
    if flag:
        _ENABLED_BY.add(device_type)
    else:
        _ENABLED_BY.discard(device_type)
    LAYER.set_enabled(bool(_ENABLED_BY))


def register_kernel(name, device_type, kernel, namespaces=("ptcore", "Tensor"), optional=False):
    """Register ``kernel`` as op ``name``'s implementation on ``device_type``
    (``"cuda"``) in each namespace where the op is declared (KeyError when
    it is declared in none, unless ``optional``).  The kernel
    takes the op's arguments as its CPU front-end does."""
    done = 0
    for ns in namespaces:
        d = lookup(name, ns)
        if d is not None:
            d.kernels[device_type] = kernel
            d.device_bodies.pop(device_type, None)
            done += 1
            if d.kind == "core" and not _D.core_device_kernels[0]:
                # the core methods must then be entries while the layer is on
                _D.core_device_kernels[0] = True
                _D.refresh()
    if not done and not optional:
        raise KeyError(f"register_kernel: no op {name!r} in {namespaces}")
    return kernel


def use_frontend(opdef, device_type):
    """Make ``opdef``'s front-end its kernel on ``device_type`` (where the
    device registered the loops it runs).  The device layer wraps a kernel
    in the op's autograd body (``_body_factory``), so the kernel is ``raw``;
    an op whose body was built otherwise runs that body whole.  Unlike
    :func:`register_kernel`, a core method's front-end set here does not make
    the core methods entries while the layer is on."""
    opdef.kernels[device_type] = opdef.raw if opdef._body_factory is not None else opdef.body
    opdef.device_bodies.pop(device_type, None)


def register_frontends(device_type):
    """Install the front-end of every op declared ``device="frontend"`` as
    its kernel on ``device_type``, every form of it (a device's op
    registration calls this before registering its own kernels, which then
    replace the front-end of the forms they cover)."""
    for d in OPS.values():
        decl = d.decl
        if decl is not None and decl.device == "frontend":
            use_frontend(d, device_type)


def kernel_for(name, device_type, namespace="ptcore"):
    d = lookup(name, namespace)
    return None if d is None else d.kernels.get(device_type)


# ---------------------------------------------------------------------------
# a kernel's fast form: the calls a device kernel takes without the layers
# (dense operands of one dtype and shape, nothing to check or record but the
# op's formula), in C.  ``OpDef.fast_forms[device_type]`` holds it next to
# the kernel; the entry tries ``OpDef.device_fast``, the one callable this
# module derives from those tables, first for a call with an argument off
# the CPU (the dispatcher's hottest line: one attribute read).  A fast form
# is ``fn(args, kwargs)``: the result, or None for a call it does not take
# (another device's tensors among them), which then goes down the layers.
# ---------------------------------------------------------------------------

# the key of a fast form that runs through the CPU driver's per-device C
# table (``_ewdrv``: the ops declared with a ``fast`` fact): it serves every
# device type that filled its row (:func:`register_driver_fast_paths`) and
# registered no fast form of its own for the op
DRIVER = "driver"
_DRIVER_TYPES = []      # the device types with driver fast paths, in registration order
_DRIVER_FORMS = set()   # the OpDefs with a DRIVER form (their cache follows _DRIVER_TYPES)
_FOLLOWING = {}         # OpDef -> (base OpDef, adapt): forms derived from the base's
_FOLLOWERS = {}         # base OpDef -> {OpDef: None}, the inverse of _FOLLOWING
_DERIVED = {}           # OpDef -> {device type: form}, the forms it has from its base


def register_fast_form(op, device_type, fn, namespaces=("ptcore", "Tensor"), optional=False):
    """Register ``fn(args, kwargs)`` as the fast form of op ``op``'s kernel
    on ``device_type`` (``"cuda"``, or :data:`DRIVER` for a form that runs
    through the CPU driver's C table); ``fn`` None removes it.  ``op`` is an
    OpDef, or a name looked up in each of ``namespaces`` (KeyError when it is
    declared in none, unless ``optional``).  The entries' cache
    (``OpDef.device_fast``) follows at once."""
    if isinstance(op, OpDef):
        opdefs = [op]
    else:
        opdefs = [d for d in (lookup(op, ns) for ns in namespaces) if d is not None]
        if not opdefs and not optional:
            raise KeyError(f"register_fast_form: no op {op!r} in {namespaces}")
    for d in opdefs:
        if fn is None:
            d.fast_forms.pop(device_type, None)
        else:
            d.fast_forms[device_type] = fn
        _refresh_fast(d)
    return fn


def follow_fast_forms(opdef, base, adapt=None):
    """Give ``opdef`` the fast forms of ``base`` (each through ``adapt(form)``
    when given), now and whenever they change: an operator method that is
    its op's method with the same arguments (``a == b`` is ``a.eq(b)``), a
    function that takes its op's call with one argument more
    (``F.relu(x, inplace=False)``).  A form registered for ``opdef`` itself
    takes precedence on its device type."""
    old = _FOLLOWING.get(opdef)
    if old is not None:
        _FOLLOWERS[old[0]].pop(opdef, None)
    _FOLLOWING[opdef] = (base, adapt)
    _FOLLOWERS.setdefault(base, {})[opdef] = None
    _refresh_fast(opdef)


def fast_forms(opdef):
    """``{device type: fast form}`` of ``opdef``: its own registrations over
    those it follows (:func:`follow_fast_forms`)."""
    forms = dict(_DERIVED.get(opdef, ()))
    forms.update(opdef.fast_forms)
    return forms


def register_driver_fast_paths(device_type, binary, inplace, unary):
    """Fill ``device_type``'s row of the CPU driver's C fast-path table
    (:func:`ptcore._ops.kernels._ewdrv.set_device_fast_paths`: PyCapsules of
    its ``device_binary_fn``, ``device_inplace_fn`` and ``device_unary_fn``,
    all None to empty it): the operator methods' fast path (``a + b``) then
    serves its tensors, and so do the ops' :data:`DRIVER` fast forms."""
    _ewdrv.set_device_fast_paths(device_type, binary, inplace, unary)
    filled = binary is not None or inplace is not None or unary is not None
    if filled and device_type not in _DRIVER_TYPES:
        _DRIVER_TYPES.append(device_type)
    elif not filled and device_type in _DRIVER_TYPES:
        _DRIVER_TYPES.remove(device_type)
    for d in list(_DRIVER_FORMS):
        _refresh_fast(d)


def _refresh_fast(opdef):
    """Derive ``opdef.device_fast`` from its fast forms (and those of the
    OpDefs that follow it): the one form, or the forms in turn when device
    types have distinct ones; a DRIVER form serves while a device type with
    driver fast paths has no form of its own."""
    f = _FOLLOWING.get(opdef)
    if f is not None:
        base, adapt = f
        derived = fast_forms(base)
        if adapt is not None:
            made = {}
            for t, fn in derived.items():
                g = made.get(id(fn))
                if g is None:
                    g = made[id(fn)] = adapt(fn)
                derived[t] = g
        _DERIVED[opdef] = derived
    forms = fast_forms(opdef)
    driver = forms.pop(DRIVER, None)
    fns = []
    for fn in forms.values():
        if fn not in fns:
            fns.append(fn)
    if driver is not None:
        _DRIVER_FORMS.add(opdef)
        if any(t not in forms for t in _DRIVER_TYPES) and driver not in fns:
            fns.append(driver)
    else:
        _DRIVER_FORMS.discard(opdef)
    opdef.device_fast = None if not fns else fns[0] if len(fns) == 1 else _in_turn(tuple(fns))
    for follower in list(_FOLLOWERS.get(opdef, ())):
        _refresh_fast(follower)


def _in_turn(fns):
    """A fast form that tries ``fns`` in turn (the first result that is not None)."""
    def fast(args, kwargs):
        for fn in fns:
            r = fn(args, kwargs)
            if r is not None:
                return r
        return None
    return fast


# ---------------------------------------------------------------------------
# what the CPU front-ends use: their kernels run on the CPU only (a tensor
# on another device reaches its kernel through the layer above, from
# ``OpDef.kernels``), and mixed devices raise torch's error
# ---------------------------------------------------------------------------

def device_str(d):
    """``cuda:0`` for a CUDA device (index 0 when unset), ``cpu`` for the CPU."""
    return f"{d.type}:{d.index if d.index is not None else 0}" if d.type == "cuda" else d.type


def refuse_cpu_half(kname, t):
    """torch's ``NotImplementedError`` where its CPU kernel ``kname`` has no
    float16/bfloat16 version (avg_pool3d, ctc_loss, the margin losses): raised for
    a half-precision CPU tensor ``t``; other devices keep their half kernels."""
    dt = t.dtype
    if dt.itemsize == 2 and dt.is_floating_point and t.device.type == "cpu":
        raise NotImplementedError(f"\"{kname}\" not implemented for '{dt._legacy}'")


def no_kernel_error(op, device):
    """The ``NotImplementedError`` for op ``op`` (its public name) on ``device``."""
    dtype_ = device if isinstance(device, str) else device.type
    return NotImplementedError(
        f"{op}: no {dtype_.upper()} kernel yet for this op (an argument is on {device}); move "
        f"the tensors to the CPU with .cpu() to run it there")


# The loops of front-ends every device shares (as ATen's DispatchStub): the
# front-end checks arguments, applies the dtype rules and allocates outputs,
# then runs its element loop for the tensors' device.  ``fn`` below is the
# CPU loop; other devices register theirs with :func:`register_loop` (the
# CUDA backend's sort, scatter, reduction, random and conv/norm loops).
_LOOPS = {}


def register_loop(op, device_type, fn):
    """Register ``fn`` as the ``device_type`` loop of front-end loop ``op``."""
    if device_type == "cpu":
        raise ValueError("register_loop: CPU loops are the front-ends' own (cpu_kernel's fn)")
    _LOOPS[(op, device_type)] = fn
    table = _LOOP_TABLES.get(op)
    if table is not None:
        table[device_type] = fn
    return fn


_LOOP_TABLES = {}       # op -> {device type: loop}, the tables loop_table handed out


def loop_table(op, cpu_fn):
    """The live table ``{device type: loop}`` of front-end loop ``op``: ``"cpu"``
    maps to ``cpu_fn``, every other device type to the loop it registered
    (:func:`register_loop` adds later registrations).  For the hottest
    front-ends, where :func:`cpu_kernel`'s call would show in a call of a few
    microseconds: ``table.get(device.type)`` is one dict lookup."""
    table = _LOOP_TABLES.get(op)
    if table is None:
        table = _LOOP_TABLES[op] = {t: fn for (o, t), fn in _LOOPS.items() if o == op}
    table["cpu"] = cpu_fn
    return table


def has_loop(op, device_type):
    """Whether loop ``op`` runs on ``device_type`` (always on the CPU)."""
    return device_type == "cpu" or (op, device_type) in _LOOPS


def loop_for(op, device, cpu_fn):
    """The loop ``op`` of a front-end's *fast form* for ``device`` (a
    ptcore.device or a type string): ``cpu_fn`` on the CPU, the loop a device
    registered with :func:`register_loop`, or None where the device has none
    -- the front-end then takes its general path, written with other ops'
    entries, each of which reaches the device through the table.  A
    front-end chooses its fast form through this, never by testing the
    device type."""
    t = device if isinstance(device, str) else device.type
    if t == "cpu":
        return cpu_fn
    return _LOOPS.get((op, t))


def cpu_kernel(op, device, fn):
    """The loop ``op`` of a front-end for ``device`` (a ptcore.device, a type
    string or None): ``fn``, the CPU loop, on the CPU; the loop a device
    registered with :func:`register_loop` elsewhere; otherwise
    :func:`no_kernel_error`.  A front-end calls its loops through this, so no
    device memory is ever read on the host."""
    if device is None or device == "cpu":
        return fn
    t = device if isinstance(device, str) else device.type
    if t == "cpu":
        return fn
    k = _LOOPS.get((op, t))
    if k is None:
        raise no_kernel_error(op, device)
    return k


def check_same_device(op, *tensors):
    """The device of ``tensors`` (None entries skipped); torch's
    ``RuntimeError`` when they live on two devices."""
    dev = None
    for t in tensors:
        if t is None:
            continue
        d = t.device
        if dev is None:
            dev = d
        elif d != dev:
            raise device_mismatch_error(dev, d, op)
    return dev


def common_device(*args):
    """The device of the tensors among ``args`` (other values skipped), where
    an elementwise result lives: a 0-d CPU tensor joins a tensor of another
    device, as in torch; torch's ``RuntimeError`` for two devices otherwise."""
    dev = first = None
    for a in args:
        if isinstance(a, _TensorBase):
            d = a.device
            if dev is None:
                dev, first = d, a
            elif d != dev:
                if a.dim() == 0 and d.type == "cpu":
                    continue
                if dev.type == "cpu" and first.dim() == 0:
                    dev, first = d, a
                    continue
                raise device_mismatch_error(dev, d)
    return dev


def device_mismatch_message(a, b, op=None):
    """torch's text for tensors on two devices ``a`` and ``b`` (``op``: the
    op whose arguments were checked).  Every same-device check in ptcore
    raises through this function or :func:`device_mismatch_error`."""
    msg = (f"Expected all tensors to be on the same device, but found at least two devices, "
           f"{device_str(a)} and {device_str(b)}!")
    return msg if op is None else f"{msg} (when checking argument for {op})"


def device_mismatch_error(a, b, op=None):
    """torch's ``RuntimeError`` for tensors on two devices ``a`` and ``b``."""
    return RuntimeError(device_mismatch_message(a, b, op))


# ---------------------------------------------------------------------------
# torch's per-device rules: the places where torch's *semantics* (not the
# choice of a kernel) depend on the kind of device.  They are declared here
# once; a front-end asks them by meaning and never compares device types
# itself (a kernel comes from ``OpDef.kernels``, a fast form from
# :func:`loop_for`; tests/dispatch/test_device_routes.py holds the front-end
# folders to that).
# ---------------------------------------------------------------------------

_ACCELERATORS = frozenset(("cuda",))     # torch adds its PrivateUse1 backend; ptcore has none


def is_accelerator(device):
    """Whether ``device`` is an accelerator in torch's sense (CUDA here; torch
    also counts its PrivateUse1 backend): ``ParameterList``/``ParameterDict``
    reprs show such a parameter's device, ``parameters_to_vector`` tracks its
    device index (-1 for every other device)."""
    return device.type in _ACCELERATORS


def has_fused_kernels(device):
    """Whether torch's fused fast paths may run on ``device``: the CPU and the
    accelerators, not the meta device (``MultiheadAttention``'s fast-path
    argument check, the devices of ``clip_grad``'s ``foreach=True``)."""
    return device.type == "cpu" or device.type in _ACCELERATORS


# in_host_memory(t): whether tensor ``t`` lives in host (CPU) memory, where
# torch's rules that name the CPU apply (a one-element CPU value read as a
# scalar without a device synchronisation: ``index_put_``'s dispatch to
# ``masked_fill_``, ``t[i] = v``'s fill of a 0-d value; ``batch_sizes`` of a
# ``PackedSequence`` must be there, ``Tensor.apply_`` runs only there,
# ``comm.reduce_add`` refuses it) and where a CPU kernel's fast form may read
# the bytes (the unary, softmax, clamp, getitem, product and dot front-ends
# try theirs first).  The core's C function: one read of the storage's device
# type code, as cheap per call as the ``is_cpu`` property.
in_host_memory = _in_host_memory


def device_index(device, optional=False, allow_cpu=False):
    """torch's ``torch._utils._get_device_index``: the index of ``device`` (an
    int as it is, a ptcore.device or a string); the CPU is ``-1`` where
    ``allow_cpu`` and a ``ValueError`` otherwise; a device without an index
    (or None) gives None when ``optional`` -- the caller then takes its
    runtime's current device -- and a ``ValueError`` otherwise."""
    if isinstance(device, str):
        device = _device(device)
    idx = None
    if isinstance(device, _device):
        if device.type == "cpu":
            if not allow_cpu:
                raise ValueError(f"Expected a non cpu device, but got: {device}")
            idx = -1
        else:
            idx = device.index
    if isinstance(device, int):
        idx = device
    if idx is None and not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    return idx


def svd_takes_driver(device):
    """torch's ``linalg.svd(driver=)``: the keyword is refused for CPU inputs
    (LAPACK has one driver); cuSOLVER's drivers take it."""
    return device.type != "cpu"


def mt19937_state_layout(device):
    """Whether a generator of ``device`` gives and takes its state in the layout of
    torch's CPU generator (5056 bytes, :mod:`ptcore._ops.random_state`): the CPU's.
    Other devices' generators use torch's CUDA form, 16 bytes (seed, offset)."""
    return device.type == "cpu"


# ---------------------------------------------------------------------------
# the device runtime as the tensor layer sees it: moving a tensor across
# devices, pinned host memory, stream use, DLPack/CUDA-array-interface export
# (``ptcore.cuda`` registers its functions when it is imported, by
# ``import ptcore``)
# ---------------------------------------------------------------------------

_RUNTIME = {}           # the CUDA runtime's functions (host-side ones: pin_memory ...)
_TRANSFERS = {}         # device type -> (priority, its runtime's to_device)


def register_runtime(device_type="cuda", transfer_priority=0, **fns):
    """Register the ``device_type`` runtime's ``to_device(t, device, dtype,
    non_blocking)`` and, for CUDA, ``pin_memory(t)``, ``is_pinned(t)``,
    ``record_stream(t, stream)``, ``dlpack_stream_sync(t, stream)`` and
    ``cuda_array_interface(t)``.  A transfer from or to ``device_type`` runs
    its ``to_device``; when both sides have one, the higher
    ``transfer_priority``'s (the meta runtime's: no data moves there)."""
    to_device = fns.pop("to_device", None)
    if to_device is not None:
        _TRANSFERS[device_type] = (transfer_priority, to_device)
    if device_type == "cuda":
        _RUNTIME.update(fns)
    elif fns:
        raise ValueError(f"register_runtime: {device_type} registers to_device only, got {sorted(fns)}")


def _to_device(t, device, dtype, non_blocking):
    best = None
    for ty in (t.device.type, device.type):
        e = _TRANSFERS.get(ty)
        if e is not None and (best is None or e[0] > best[0]):
            best = e
    if best is None:
        raise RuntimeError("to_device: no device runtime is loaded (ptcore.cuda registers one)")
    return best[1](t, device, dtype, non_blocking)


def runtime(name):
    """The device runtime's function ``name`` (see :func:`register_runtime`)."""
    if name == "to_device":
        return _to_device
    fn = _RUNTIME.get(name)
    if fn is None:
        raise RuntimeError(f"{name}: no device runtime is loaded (ptcore.cuda registers one)")
    return fn
