"""``mode="reduce-overhead"`` / ``backend="cudagraphs"``: a compiled program's
run replayed as CUDA graphs (torch's cudagraph trees, in ptcore's form).

:func:`install` wraps the functions a compiled program calls -- a
segment's generated function (inference), or a training segment's
generated forward and backward (:mod:`ptcore._inductor.aot`, whose
autograd node stays as it is) -- in :class:`GraphedCallable` s.  For each
layout of its inputs (shapes, strides, dtypes, device, non-tensor values) a
graphed callable runs the function once as it is (the warm-up: kernels
compiled, the allocator primed), captures its next call into a
:class:`ptcore.cuda.CUDAGraph` (its own memory pool) and replays the graph
from then on:

- a tensor input is *static* when it is a parameter, a tensor the program
  keeps by reference (module buffers), or memory this program's graphs own
  (their static input buffers and outputs: the tensors a forward graph saves
  for the backward); the graph reads it where it is, and each replay checks
  that it is still the same memory (else the call is captured again);
- any other tensor input is copied into a static buffer before each replay;
- a training forward is not replayed while the backward of its previous
  replay is still to run (two micro-batches before one backward): that
  backward reads the saved tensors a replay would overwrite, so the call
  runs the compiled forward without the graph (fresh memory), and its
  backward too (torch's trees record a new graph for it instead);
- the outputs are the graph's static outputs, the same tensors at every
  replay: a replay overwrites what the previous replay of the same graph
  returned.  (torch raises "accessing tensor output of CUDAGraphs that has
  been overwritten by a subsequent run" when such a tensor is read; ptcore
  cannot intercept the read, so the tensor holds the later values: clone an
  output to keep it.)

What cannot be captured runs the compiled program without graphs, with one
warning ``skipping cudagraphs due to <reason>`` per program: inputs on the
CPU next to CUDA inputs, or on several devices; a program cut by graph
breaks (``.item()``, data-dependent control flow); one that autograd records
op by op, or whose backward runs an opaque node through autograd; one that
writes an input in place; and a capture the device refuses (a host
synchronisation, a random op drawing on the host).  A program whose inputs
are all on the CPU runs as compiled, silently, as torch's option does there.
"""
import warnings
import weakref

from ptcore._tensor import _TensorBase
from ptcore.autograd.grad_mode import no_grad
from ptcore.cuda import graphs as _graphs
from ptcore.cuda import streams as _streams
from ptcore.nn.parameter import Parameter

__all__ = ["install", "release", "counters", "mark_step_begin", "GraphedCallable", "Tree"]

# process-wide counts: graphs captured, replays, warm-up runs, programs skipped,
# captures made again (a static input moved), steps marked, training forwards run
# unreplayed because the backward of the previous replay had not run yet
counters = {"captures": 0, "replays": 0, "warmups": 0, "skips": 0, "recaptures": 0,
            "steps": 0, "busy": 0}
_RECAPTURE_LIMIT = 8
_WARM = object()


def mark_step_begin():
    """``torch.compiler.cudagraph_mark_step_begin``: a new step begins.  ptcore
    keeps no liveness record of earlier outputs that this would release (each
    replay overwrites its graph's previous outputs), so it only counts steps."""
    counters["steps"] += 1


class Tree:
    """The graphs of one compiled program: what they own, the warning given
    and whether they are switched off (``disabled``: the reason)."""

    def __init__(self, name):
        self.name = name
        self.callables = []
        self.owned = set()          # storage addresses of static buffers and outputs
        self.disabled = None
        self.stream = None

    def skip(self, reason, warn=True):
        if self.disabled is not None:
            return
        self.disabled = reason
        counters["skips"] += 1
        self.release()
        if warn:
            warnings.warn(f"skipping cudagraphs due to {reason} (program {self.name!r})",
                          UserWarning, stacklevel=4)

    def release(self):
        for c in self.callables:
            c.release()
        self.owned.clear()


def _storage(t):
    return t.untyped_storage().data_ptr()


def _identity(t):
    return (_storage(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)


class _Recording:
    __slots__ = ("graph", "copied", "static", "outputs", "kept")

    def __init__(self, graph, copied, static, outputs, kept):
        self.graph = graph
        self.kept = kept            # (tensor, data_ptr) the code reads by reference
        self.copied = copied        # (input index, static buffer)
        self.static = static        # (input index, object, data_ptr, identity)
        self.outputs = outputs


class GraphedCallable:
    """``fn`` (a generated function: inputs -> tuple of outputs) replayed as CUDA
    graphs, one per layout of its inputs; ``n_static``: its last inputs that
    are kept by reference (static); ``kept``: tensors its code reads by
    reference (an inference program's parameters), whose memory each replay
    checks too."""

    def __init__(self, fn, tree, n_static=0, kept=(), sentinel=None):
        self.fn = fn
        # a training forward: the index of its first saved tensor, returned as a fresh
        # alias at each replay; while the last one lives (its backward has not run) a
        # replay would overwrite what that backward reads, and the call runs unreplayed
        self.sentinel = sentinel
        self.last = None
        self.kept = [t for t in kept if isinstance(t, _TensorBase)]
        self.tree = tree
        self.n_static = n_static
        self.recordings = {}
        self.n_recaptures = 0
        tree.callables.append(self)

    def release(self):
        for r in self.recordings.values():
            if r is not _WARM:
                r.graph.reset()
        self.recordings = {}

    def _key(self, inputs):
        """The layout key of a call's inputs but the static tail (the same
        objects at each call, checked by :meth:`_record` and each replay), or
        (None, reason) when it cannot be captured ("" on the CPU only)."""
        key = []
        device = None
        cpu = False
        for k in range(len(inputs) - self.n_static):
            t = inputs[k]
            if isinstance(t, _TensorBase):
                d = t.device
                if d.type == "cpu":
                    cpu = True
                elif device is None:
                    device = d
                elif d != device:
                    return None, f"multiple devices ({device}, {d})"
                key.append((tuple(t.shape), tuple(t.stride()), t.dtype))
            elif t is None or isinstance(t, (bool, int, float, str)):
                key.append(("c", type(t), t))
            else:
                # (the live autograd objects of opaque nodes, which the forward graph
                # returns and the backward graph reads: the same objects at each replay)
                key.append(("o", type(t)))
        if cpu:
            return None, ("cpu device" if device is not None else "")
        if device is None or device.type != "cuda":
            return None, ""
        return tuple(key), device

    def __call__(self, *inputs):
        tree = self.tree
        if tree.disabled is not None:
            return self.fn(*inputs)
        key, device = self._key(inputs)
        if key is None:
            tree.skip(device or "cpu device", warn=bool(device))
            return self.fn(*inputs)
        rec = self.recordings.get(key)
        if self.last is not None and self.last() is not None:
            counters["busy"] += 1
            return self.fn(*inputs)
        if rec is None:
            self.recordings[key] = _WARM
            counters["warmups"] += 1
            return self.fn(*inputs)
        if rec is not _WARM:
            for t, ptr in rec.kept:
                if t.data_ptr() != ptr:
                    rec = self._recapture(key, rec)
                    break
        if rec is not _WARM:
            for i, obj, ptr, ident in rec.static:
                t = inputs[i]
                if t is obj:
                    if ptr is None or t.data_ptr() == ptr:
                        continue
                elif ident is not None and isinstance(t, _TensorBase):
                    if _identity(t) == ident:
                        continue
                    if ident[0] in tree.owned and \
                            _storage(t) not in tree.owned:
                        # (a saved tensor of a forward that ran unreplayed: this
                        # backward runs unreplayed too)
                        return self.fn(*inputs)
                rec = self._recapture(key, rec)
                break
        if rec is _WARM:
            if tree.disabled is not None:
                return self.fn(*inputs)
            rec = self._record(key, inputs, device)
            if rec is None:
                return self.fn(*inputs)
        with no_grad():
            for i, buf in rec.copied:
                src = inputs[i]
                if src is not buf:
                    buf.copy_(src)
        rec.graph.replay()
        counters["replays"] += 1
        if self.sentinel is None:
            return rec.outputs
        outs = list(rec.outputs)
        k = self.sentinel
        outs[k] = alias = outs[k].detach()
        self.last = weakref.ref(alias)
        return tuple(outs)

    def _recapture(self, key, rec):
        """A static input of recording ``rec`` is other memory now: captured
        again (up to ``_RECAPTURE_LIMIT`` times per callable)."""
        rec.graph.reset()
        counters["recaptures"] += 1
        self.n_recaptures += 1
        if self.n_recaptures > _RECAPTURE_LIMIT:
            self.tree.skip("static inputs (parameters, saved tensors) that keep changing "
                           "address")
        self.recordings[key] = _WARM
        return _WARM

    def _is_static(self, i, t, n):
        return i >= n - self.n_static or isinstance(t, Parameter) or \
            _storage(t) in self.tree.owned

    def _record(self, key, inputs, device):
        tree = self.tree
        n = len(inputs)
        args = list(inputs)
        copied, static = [], []
        for t in self.kept:
            if t.device != device:
                tree.skip(f"{t.device.type} device (a tensor the program keeps)")
                return None
        kept = [(t, t.data_ptr()) for t in self.kept]
        with no_grad():
            for i, t in enumerate(inputs):
                if not isinstance(t, _TensorBase):
                    if not (t is None or isinstance(t, (bool, int, float, str))):
                        static.append((i, t, None, None))
                    continue
                if t.device != device:
                    tree.skip(f"{t.device.type} device (a tensor the program keeps)")
                    return None
                if self._is_static(i, t, n):
                    # (memory the graphs own is matched by address only: holding the
                    # tensor would keep a forward's saved-tensor alias alive)
                    own = i < n - self.n_static and not isinstance(t, Parameter)
                    static.append((i, None if own else t, t.data_ptr(), _identity(t)))
                    continue
                if t.is_non_overlapping_and_dense():
                    buf = t.new_empty_strided(tuple(t.shape), tuple(t.stride()))
                else:       # (an expanded gradient, ones of a sum: a dense copy)
                    buf = t.new_empty(tuple(t.shape))
                buf.copy_(t)
                args[i] = buf
                copied.append((i, buf))
        g = _graphs.CUDAGraph()
        if tree.stream is None:
            tree.stream = _streams.Stream(device=device)
        try:
            with _graphs.graph(g, stream=tree.stream):
                outs = self.fn(*args)
        except Exception as err:        # (the device refused the capture)
            g.reset()
            tree.skip(f"a capture that failed: {type(err).__name__}: {err}")
            return None
        counters["captures"] += 1
        outs = tuple(outs)
        rec = _Recording(g, copied, static, outs, kept)
        self.recordings[key] = rec
        for _, buf in copied:
            tree.owned.add(_storage(buf))
        for o in outs:
            if isinstance(o, _TensorBase):
                tree.owned.add(_storage(o))
        return rec


def _why_not(prog, cap):
    """Why a program cannot be replayed as CUDA graphs (None: it can)."""
    if len(prog.segments) > 1 or cap.breaks:
        b = cap.breaks[0] if cap.breaks else None
        return "graph breaks" + (f" ({b.reason})" if b is not None else "")
    if prog.mode == "record":
        return "a program that autograd records op by op (grad mode switched or a write " \
               "into a tensor that requires grad)"
    if cap.input_writes:
        return "mutated inputs"
    return None


def install(prog, cap, name):
    """Make ``prog`` (compiled from ``cap``) replay its run as CUDA graphs;
    returns its :class:`Tree` (``disabled`` says why when it cannot)."""
    tree = Tree(name)
    why = _why_not(prog, cap)
    if why is not None:
        tree.skip(why)
        prog.cudagraphs = tree
        return tree
    seg = prog.root
    ts = seg.backward
    if ts is None:
        seg.fn = GraphedCallable(seg.fn, tree, kept=[t for _, t in cap.free_inputs])
    else:
        ts.forward = GraphedCallable(ts.forward, tree, n_static=len(ts.free),
                                     sentinel=ts.n_out if ts.n_saved else None)
        ts.backward = GraphedCallable(ts.backward, tree)
    prog.cudagraphs = tree
    return tree


def release(prog):
    """Give up the graphs of ``prog`` (``ptcore.compiler.reset``)."""
    tree = getattr(prog, "cudagraphs", None)
    if tree is not None:
        tree.release()
