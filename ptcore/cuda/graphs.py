"""CUDA graphs (``torch.cuda.graphs``): capture the work queued on a stream
once, replay it with one launch.

A capture records every kernel, copy and cuBLAS/cuFFT/cuSOLVER call that
ptcore queues on the capturing stream (and on streams that join it through
events) into a graph, without running it; :meth:`CUDAGraph.replay` launches
the whole graph with one driver call, reading and writing the same device
addresses as the capture did.  So the tensors a graph reads (static inputs)
are refilled in place before a replay, and the tensors it wrote during the
capture (static outputs) hold the results after it.

Memory: allocations made while a stream captures come from a private pool
of the caching allocator (a tuple key, ``graph_pool_handle()`` or
``CUDAGraph.pool()``), never from the memory of other work, and the pool's
segments stay reserved while a graph that uses them exists -- a replay
writes to them.  Captures may share a pool (``pool=``), as in PyTorch.

Like CUDA itself, a capture refuses host synchronisation with the capturing
stream (``.item()``, ``.cpu()`` into pageable memory, ``synchronize()``):
those raise :class:`~ptcore.cuda.CudaError` and invalidate the capture.

Random numbers are graph-safe, as PyTorch's: a random kernel captured into a
graph reads its generator's (seed, offset) from device memory that every
replay refills, and each replay advances the generator by what the captured
draws consumed -- so replays draw new numbers, the same ones the same ops
would draw eagerly, and a capture leaves the generator where it was.

Everything here talks to the device through the driver interface
(:mod:`ptcore.cuda.driver.interface`), so the emulated device runs the same code.
"""
import ctypes
import gc
import itertools
import struct
import threading

from ptcore._ops import random as _random_ops
from ptcore.cuda import streams
from ptcore.cuda.allocator.device_allocators import empty_cache as _empty_cache
from ptcore.cuda.runtime import state as _runtime

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph",
           "make_graphed_callables"]


def _synchronize(what):
    """``ptcore.cuda.synchronize()`` of the current device."""
    _runtime.lazy_init(what).device_synchronize(_runtime.current_device())

_CAPTURE_MODES = ("global", "thread_local", "relaxed")
_MASK64 = (1 << 64) - 1
_user_pool_ids = itertools.count(1)      # graph_pool_handle(): (0, n)
_graph_pool_ids = itertools.count(1)     # a graph's own pool: (n, 0)
_lock = threading.Lock()
_pool_by_capture = {}                    # (device, capture id) -> pool key
_graph_by_capture = {}                   # (device, capture id) -> the capturing CUDAGraph
_active = [0]                            # captures in progress (any thread)


def is_current_stream_capturing():
    """True when the current stream of the current device is capturing a
    CUDA graph (False, without initialising CUDA, when CUDA is not started)."""
    if not _runtime.is_initialized():
        return False
    dev = _runtime.current_device()
    handle = _runtime.current_stream_handle(dev)
    if not handle:
        return False
    drv = _runtime.get()
    drv.set_current(dev)
    return drv.stream_capture_info(handle)[0] != 0


def graph_pool_handle():
    """An opaque token naming a new graph memory pool, to pass as ``pool=``
    to several captures that may share memory."""
    return (0, next(_user_pool_ids))


def _route(device):
    """The allocator's pool lookup for a stream that joined a capture."""
    def route(stream):
        drv = _runtime.get()
        status, cid = drv.stream_capture_info(stream)
        if not status:
            return None
        return _pool_by_capture.get((device, cid))
    return route


def _capturing_graph(device):
    """The CUDAGraph capturing the current stream of ``device`` (or None)."""
    handle = _runtime.current_stream_handle(device)
    if not handle:
        return None
    status, cid = _runtime.get().stream_capture_info(handle)
    return _graph_by_capture.get((device, cid)) if status else None


def philox_args(generator):
    """``(seed, offset, graph_state)`` for the next draw of a CUDA kernel from
    ``generator``: ``graph_state`` 0 outside a capture; on a capturing stream
    the device address of the (seed, offset) that each replay of the graph
    writes, with ``offset`` the draw's position inside the graph (the kernels'
    ``philox_graph`` argument)."""
    if _active[0]:
        graph = _capturing_graph(generator.device.index or 0)
        if graph is not None:
            state = graph._rng_state(generator)
            return 0, generator._offset, state.block.ptr
    seed, off = generator._take()
    return seed, off, 0


def _refuse_rng_in_capture(generator):
    """``Generator._take`` on a capturing stream: the draws that read the
    generator on the host (``randperm``) cannot be captured."""
    if not _active[0]:
        return
    if _capturing_graph(generator.device.index or 0) is not None:
        raise RuntimeError(
            "this random op draws its numbers on the host from the CUDA generator, which a CUDA "
            "graph cannot capture (every replay would repeat them); run it outside the capture")


def keep_alive_in_capture(device, obj):
    """Attach ``obj`` (pinned host memory a captured copy reads) to the graph
    capturing the current stream of ``device``: it lives as long as the
    graph, whose replays read it again.  False when no graph is capturing."""
    if not _active[0]:
        return False
    graph = _capturing_graph(device)
    if graph is None:
        return False
    graph._host.append(obj)
    return True


class _RngState:
    """A generator's part in one graph: the device words (seed, offset) each
    replay writes, the generator's offset when the capture first drew from it
    (given back at the end of the capture), and the offsets the captured draws
    consume per replay."""
    __slots__ = ("generator", "block", "start", "delta")

    def __init__(self, generator, block, start):
        self.generator, self.block, self.start, self.delta = generator, block, start, 0


def _install_rng_guard():
    _random_ops.take_hooks["cuda"] = _refuse_rng_in_capture


_install_rng_guard()


def _check_pool(pool):
    if not (isinstance(pool, tuple) and len(pool) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in pool)):
        raise TypeError(f"pool must be a token from graph_pool_handle() or CUDAGraph.pool(), "
                        f"got {pool!r}")
    return pool


class CUDAGraph:
    """A captured CUDA graph (``torch.cuda.CUDAGraph``).

    Parameters
    ----------
    keep_graph : bool, default False
        Keep the captured (not instantiated) graph after ``capture_end``:
        it is then instantiated by :meth:`instantiate` or the first
        :meth:`replay`, and :meth:`raw_cuda_graph` returns it.
    """

    def __init__(self, keep_graph=False):
        self._keep = bool(keep_graph)
        self._graph = None          # driver graph handle
        self._exec = None           # driver executable graph handle
        self._pool = None
        self._device = None
        self._stream = None         # the capturing stream's handle
        self._capture_id = None
        self._debug = False
        self._has_capture = False
        self._rng = {}              # id(generator) -> _RngState
        self._host = []             # pinned host buffers captured copies read

    # -- capture ---------------------------------------------------------------
    def capture_begin(self, pool=None, capture_error_mode="global", check_input_liveness=False):
        """Begin capturing the work queued on the current stream (not the
        default stream).  ``pool`` shares another capture's memory pool."""
        if self._has_capture or self._stream is not None:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To "
                               "capture a new graph, create a new instance.")
        if capture_error_mode not in _CAPTURE_MODES:
            raise RuntimeError(f"Unknown capture error mode. Expected `global`, `thread_local`, "
                               f"or `relaxed`, got {capture_error_mode!r}")
        drv = _runtime.lazy_init("CUDAGraph.capture_begin")
        dev = _runtime.current_device()
        handle = _runtime.current_stream_handle(dev)
        if not handle:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, "
                               "after capture, it's ok to replay them on the default stream.)")
        pool = (next(_graph_pool_ids), 0) if pool is None else _check_pool(pool)
        alloc = _runtime.allocator(dev)
        drv.set_current(dev)
        # frees still queued behind other streams must not land in the pool later
        alloc.begin_allocate_to_pool(pool, handle, route=_route(dev))
        try:
            drv.stream_begin_capture(handle, capture_error_mode)
        except BaseException:
            alloc.end_allocate_to_pool(handle)
            alloc.release_pool(pool)
            raise
        cid = drv.stream_capture_info(handle)[1]
        with _lock:
            _pool_by_capture[(dev, cid)] = pool
            _graph_by_capture[(dev, cid)] = self
            _active[0] += 1
        self._device, self._stream, self._pool, self._capture_id = dev, handle, pool, cid

    def capture_end(self):
        """End the capture begun by :meth:`capture_begin` (on the same stream);
        instantiate the graph unless ``keep_graph``."""
        if self._stream is None or self._has_capture:
            raise RuntimeError("CUDAGraph.capture_end called without a capture in progress")
        drv = _runtime.get()
        dev, handle = self._device, self._stream
        if _runtime.current_stream_handle(dev) != handle:
            raise RuntimeError("Capture must end on the same stream it began on.")
        alloc = _runtime.allocator(dev)
        drv.set_current(dev)
        # the captured draws did not happen: each generator is back where the
        # capture found it, and each replay will advance it by what they consume
        for st in self._rng.values():
            st.delta = st.generator._offset
            st.generator._advance(st.start)
        try:
            g = drv.stream_end_capture(handle)
        except BaseException:
            self._free_rng(alloc)
            alloc.release_pool(self._pool)
            self._stream = None
            raise
        finally:
            alloc.end_allocate_to_pool(handle)
            with _lock:
                _pool_by_capture.pop((dev, self._capture_id), None)
                _graph_by_capture.pop((dev, self._capture_id), None)
                _active[0] -= 1
        self._graph = g
        self._has_capture = True
        if not self._keep:
            self.instantiate()
            if not self._debug:
                drv.graph_destroy(g)
                self._graph = None

    def instantiate(self):
        """Instantiate the captured graph (again, after changes to the raw
        graph); done by :meth:`capture_end` unless ``keep_graph``."""
        if self._graph is None:
            raise RuntimeError("CUDAGraph.instantiate called without a captured graph "
                               "(capture first; with keep_graph=False capture_end instantiates)")
        drv = _runtime.get()
        drv.set_current(self._device)
        if self._exec is not None:
            drv.graph_exec_destroy(self._exec)
            self._exec = None
        self._exec = drv.graph_instantiate(self._graph)

    def replay(self):
        """Launch the captured work on the current stream."""
        if self._exec is None:
            if self._keep and self._graph is not None:
                self.instantiate()
            else:
                raise RuntimeError("Called CUDAGraph.replay without a preceding successful capture.")
        drv = _runtime.get()
        drv.set_current(self._device)
        stream = _runtime.current_stream_handle(self._device)
        for st in self._rng.values():
            # this replay's (seed, offset), in stream order before the graph
            g = st.generator
            words = struct.pack("<QQ", g._seed & _MASK64, g._offset & _MASK64)
            buf = ctypes.create_string_buffer(words, 16)
            drv.memcpy_htod(st.block.ptr, ctypes.addressof(buf), 16, stream)
            g._advance(g._offset + st.delta)
        drv.graph_launch(self._exec, stream)

    def _rng_state(self, generator):
        """This capture's state of ``generator``, made at its first draw (16
        bytes from the graph's pool); from then until the capture ends the
        generator's offset counts the offsets inside the graph, from 0."""
        st = self._rng.get(id(generator))
        if st is None:
            block = _runtime.allocator(self._device).malloc(16, self._stream)
            st = self._rng[id(generator)] = _RngState(generator, block, generator._offset)
            generator._advance(0)
        return st

    def _free_rng(self, alloc):
        for st in self._rng.values():
            alloc.free(st.block)
        self._rng = {}

    def reset(self):
        """Delete the graph this instance holds and give up its memory pool
        (its segments return to the device at the next ``empty_cache``)."""
        if self._stream is None:
            return
        drv = _runtime.get()
        drv.set_current(self._device)
        if self._exec is not None:
            drv.graph_exec_destroy(self._exec)
        if self._graph is not None:
            drv.graph_destroy(self._graph)
        if self._has_capture:
            alloc = _runtime.allocator(self._device)
            self._free_rng(alloc)
            alloc.release_pool(self._pool)
        self._exec = self._graph = None
        self._stream = None
        self._has_capture = False
        self._host = []

    def __del__(self):
        try:
            if _runtime.is_initialized():
                self.reset()
        except Exception:
            pass            # never raise from the garbage collector

    # -- inspection ------------------------------------------------------------
    def pool(self):
        """The token of this graph's memory pool (to share it with another
        capture through ``pool=``)."""
        if self._pool is None:
            raise RuntimeError("Called CUDAGraph.pool() without a preceding successful capture.")
        return self._pool

    def enable_debug_mode(self):
        """Keep the captured graph so that :meth:`debug_dump` can write it."""
        self._debug = True

    def debug_dump(self, debug_path):
        """Write the captured graph to ``debug_path`` (Graphviz DOT)."""
        if not self._debug:
            import warnings
            warnings.warn("CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()")
            return
        if self._graph is None:
            raise RuntimeError("CUDAGraph.debug_dump: no captured graph to dump")
        drv = _runtime.get()
        drv.set_current(self._device)
        drv.graph_debug_dot_print(self._graph, debug_path)

    def raw_cuda_graph(self):
        """The driver's graph handle (an int); needs ``keep_graph=True``."""
        if not self._keep:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance unless CUDAGraph "
                               "was initialized with keep_graph=true")
        if self._graph is None:
            raise RuntimeError("CUDAGraph.raw_cuda_graph: no captured graph")
        return self._graph

    def raw_cuda_graph_exec(self):
        """The driver's executable graph handle (an int)."""
        if self._exec is None:
            raise RuntimeError("You cannot access the raw cudaGraphExec_t instance until "
                               "instantiate() has been called")
        return self._exec


class graph:
    """``with ptcore.cuda.graph(g):`` captures the work of the block into the
    :class:`CUDAGraph` ``g`` (``torch.cuda.graph``).

    Parameters
    ----------
    cuda_graph : CUDAGraph
    pool : optional
        A pool token to share memory with other captures.
    stream : ptcore.cuda.Stream, optional
        The capturing stream (default: one side stream shared by all
        ``graph`` contexts).
    capture_error_mode : {"global", "thread_local", "relaxed"}
    """

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global",
                 enable_annotations=False, check_input_liveness=False):
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = streams.Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.stream_ctx = streams.stream(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        _synchronize("graph")
        gc.collect()
        _empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            self.cuda_graph.capture_end()
        finally:
            self.stream_ctx.__exit__(*exc)


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False,
                           pool=None):
    """Graphed versions of callables (functions or modules): each forward runs
    its CUDA work as one graph replay inside one autograd node, whose
    backward replays a graph of the backward work
    (``torch.cuda.make_graphed_callables``).  A tuple of callables shares one memory pool
    and must be given in the order they run.  Arguments must be passed as in
    ``sample_args`` (tensors only); modules must have no hooks and no
    trainable buffers; no double backward."""
    import ptcore
    # lazy: ptcore.cuda (and this module) load while ptcore initialises, before ptcore.utils
    from ptcore.utils import _pytree

    if ptcore.is_autocast_enabled() and ptcore.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. "
                           "Please set `cache_enabled=False`.")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables = (callables,)
        sample_args = (sample_args,)
    flat_samples = []
    for c, args in zip(callables, sample_args):
        if isinstance(c, ptcore.nn.Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise AssertionError(
                    "Modules must not have hooks registered at the time they are passed. However, "
                    "registering hooks on modules after passing them through "
                    "make_graphed_callables is allowed.")
            if not all(b.requires_grad is False for b in c.buffers()):
                raise AssertionError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, "
                    "only parameters may be trainable. All buffers must have "
                    "``requires_grad=False``.")
        flat = tuple(_pytree.tree_leaves(tuple(args)))
        if not all(isinstance(a, ptcore.Tensor) for a in flat):
            raise AssertionError("In the beta API, sample_args for each callable must contain "
                                 "only Tensors. Other types are not allowed.")
        flat_samples.append(flat)
    n_user = [len(a) for a in flat_samples]
    params = [tuple(c.parameters()) if isinstance(c, ptcore.nn.Module) else () for c in callables]
    surfaces = [flat_samples[i] + params[i] for i in range(len(callables))]
    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    mempool = graph_pool_handle() if pool is None else pool

    def grads_of(outputs, surface, grad_outputs):
        return ptcore.autograd.grad(outputs=outputs,
                                    inputs=tuple(i for i in surface if i.requires_grad),
                                    grad_outputs=grad_outputs, only_inputs=True,
                                    allow_unused=allow_unused_input)

    # warm up on a side stream (lazy initialisation, kernel compilation and
    # the allocator's first segments happen outside the capture)
    _synchronize("make_graphed_callables()")
    with streams.stream(streams.Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs = _pytree.tree_leaves(func(*args))
                needs = tuple(o for o in outputs if o.requires_grad)
                if needs:
                    grads_of(needs, surface, tuple(ptcore.empty_like(o) for o in needs))
            del outputs, needs
    _synchronize("make_graphed_callables()")

    static_outputs, specs = [], []
    for func, args, g in zip(callables, sample_args, fwd_graphs):
        with graph(g, pool=mempool):
            out = func(*args)
        flat, spec = _pytree.tree_flatten(out)
        static_outputs.append(tuple(flat))
        specs.append(spec)

    # backward graphs in reverse order (as the live workload runs them)
    static_grad_outputs, static_grad_inputs = [], []
    for surface, outs, g in zip(reversed(surfaces), reversed(static_outputs), reversed(bwd_graphs)):
        grad_outs = tuple(ptcore.empty_like(o) if o.requires_grad else None for o in outs)
        needs = tuple(o for o in outs if o.requires_grad)
        grads = None
        if needs:
            with graph(g, pool=mempool):
                grads = grads_of(needs, surface, tuple(o for o in grad_outs if o is not None))
        it = iter(grads or ())
        static_grad_inputs.append(tuple(next(it) if (a.requires_grad and grads is not None) else None
                                        for a in surface))
        static_grad_outputs.append(grad_outs)
    static_grad_outputs.reverse()
    static_grad_inputs.reverse()

    result = []
    for i, func in enumerate(callables):
        graphed = _graphed_function(fwd_graphs[i], bwd_graphs[i], params[i], n_user[i], specs[i],
                                    surfaces[i], static_outputs[i], static_grad_outputs[i],
                                    static_grad_inputs[i])
        if isinstance(func, ptcore.nn.Module):
            func.forward = _graphed_forward(func, func.training, graphed, func.forward)
            result.append(func)
        else:
            result.append(graphed)
    return result[0] if just_one else tuple(result)


def _graphed_function(fwd_graph, bwd_graph, module_params, n_user, spec, surface, static_outputs,
                      static_grad_outputs, static_grad_inputs):
    import ptcore
    # lazy: ptcore.cuda (and this module) load while ptcore initialises, before ptcore.autograd
    from ptcore.autograd.function import once_differentiable
    from ptcore.utils import _pytree  # lazy: as above

    class Graphed(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for i in range(n_user):
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            if len(grads) != len(static_grad_outputs):
                raise RuntimeError(f"graphed callable: {len(grads)} gradients for "
                                   f"{len(static_grad_outputs)} outputs")
            for g, grad in zip(static_grad_outputs, grads):
                if g is not None and g.data_ptr() != grad.data_ptr():
                    g.copy_(grad)
            bwd_graph.replay()
            return tuple(b.detach() if b is not None else b for b in static_grad_inputs)

    def functionalized(*user_args):
        flat = tuple(_pytree.tree_leaves(tuple(user_args)))
        out = Graphed.apply(*(flat + module_params))
        return _pytree.tree_unflatten(list(out), spec)
    return functionalized


def _graphed_forward(module, training_state, graphed, orig_forward):
    def forward(*args, **kwargs):
        if module.training == training_state:
            return graphed(*args, **kwargs)
        return orig_forward(*args, **kwargs)
    return forward
