"""Graph capture for :func:`ptcore.compile`: run the program once, eagerly,
with the tracing layer of the dispatch point on, and record the op calls it
makes into a :class:`~ptcore.jit._ir.Graph`.

The capture run IS the call the user made: its result is returned as is, so
the first call of a compiled function gives the eager result exactly (and,
under autograd, the eager graph).  What the record holds:

* the nodes, one per op call of the program (calls an op makes inside its own
  implementation are not recorded: the op is), each with the grad mode it
  ran under;
* the graph's inputs: each tensor the program read that no recorded op made,
  with where it came from -- an argument (its path in ``args``/``kwargs``),
  or a tensor reachable from the program's modules, globals or closure
  (a parameter, a buffer, a tensor attribute), kept by reference;
* *breaks*: where the program turned a tensor into a Python value
  (``item()``, ``bool(t)``, ``int(t)``, ``tolist()`` ...).  The graph is cut
  there into segments; the value becomes a guard of the segment after it,
  so that a call whose value differs takes another branch
  (:mod:`ptcore._dynamo.compiled`).  ``ptcore._dynamo.graph_break()`` cuts
  without a value;
* *checks*: Python values returned by other ops (``ptcore.equal``,
  ``is_nonzero``), checked inline when the graph runs;
* *problems*: what the graph cannot replay, so the program runs eagerly for
  these guards: a call with effects outside the graph or a result that varies
  from call to call (``print``, ``time``, ``random``, NumPy's random numbers,
  ``logging``, writes to files, a function marked
  ``ptcore.compiler.disable``), an ``autograd.Function`` applied by the
  program where autograd records (its backward is its own), a tensor
  computed outside the operator table, a module attribute the program
  assigned, an output the graph cannot rebuild.  They are found by a profile hook (``sys.setprofile``) on the
  capturing thread while the program runs, and by comparing the modules'
  state before and after.
"""
import dataclasses
import io
import logging
import sys
import threading
import traceback

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch.declarations import OPERATOR_FORMS
from ptcore._dispatch.table import OPS
from ptcore.autograd.grad_mode import is_grad_enabled
from ptcore._inductor.codegen import encode_outputs
from ptcore._dynamo.python_state import StateWatch
from ptcore.jit._ir import Graph, Node, Value, encode_const, encode_sequence
from ptcore.utils import _pytree

__all__ = ["GraphBreak", "Capture", "CaptureTracer", "capture", "is_capturing", "external_tensors",
           "disabled_code", "mark_disabled", "written", "UnsetMemory"]


class _Tls(threading.local):
    def __init__(self):
        self.tracer = None


_tls = _Tls()


def written(opdef, args, kwargs):
    """The argument an op call writes (an in-place op's ``self``, ``out=``,
    ``t[i] = v``'s ``t``), or None; ``args``/``kwargs`` as passed or encoded."""
    out = kwargs.get("out")
    if out is not None:
        return out
    name = opdef.name
    form = OPERATOR_FORMS.get(name)
    if "inplace" in opdef.tags or name == "__setitem__" or (
            form is not None and form.form == "inplace"):
        return args[0] if args else None
    return None


# ops whose result is memory nothing has written yet
_UNSET_MAKERS = frozenset({"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                           "new_empty_strided"})


class UnsetMemory:
    """The memory of recorded ``empty``-like results that no recorded op has
    written yet.  A function that fills such a buffer by a kernel called
    directly (a convolution's primitive) records the allocation but not the
    fill: a recorded op other than a view reading that memory would replay
    uninitialised values.  ``reads_unset`` tells a tracer so (it then records
    the function whole, or not at all)."""

    def __init__(self):
        self.mem = {}           # memory -> the tensor made there (kept: the memory is not reused)

    def made(self, opdef, args, kwargs, out):
        """Note a recorded call: an ``empty``-like result is unset; a result in
        unset memory that none of the call's arguments shares is set by the
        call (its kernel filled the buffer: the recorded call replays that)."""
        if opdef.name in _UNSET_MAKERS and isinstance(out, _TensorBase):
            self.mem[_memory(out)] = out
        elif self.mem:
            ins = {_memory(t) for t in _tensor_args(args, kwargs)}
            for t in _tensor_args((out,), {}):
                if _memory(t) not in ins:
                    self.mem.pop(_memory(t), None)

    def reads_unset(self, opdef, args, kwargs, out):
        """Whether the op call reads memory still unset: writing it is no read
        (it is set from then on), nor is a view of it (``out`` in that memory)."""
        if not self.mem:
            return False
        w = written(opdef, args, kwargs)
        if isinstance(w, _TensorBase):
            self.mem.pop(_memory(w), None)
        views = {_memory(t) for t in _tensor_args((out,), {})}
        return any(m in self.mem and m not in views
                   for m in (_memory(t) for t in _tensor_args(args, kwargs)))


    def holds(self, out):
        """Whether a result (tensors, nested) is memory still unset."""
        return bool(self.mem) and any(_memory(t) in self.mem for t in _tensor_args((out,), {}))


def _tensor_args(args, kwargs):
    found = {}
    _tensors_in(tuple(args), None, found)
    _tensors_in(dict(kwargs), None, found)
    return [t for t, _ in found.values()]


def _outside_effect(opdef):
    """Whether a call of ``opdef`` acts beyond its arguments: it draws random
    numbers, or it is no op of ptcore's own (what it does is unknown)."""
    return "random" in opdef.tags or opdef.decl is None and \
        opdef.namespace not in ("Tensor", "ptcore", "nn.functional", "linalg")


def is_capturing():
    """Whether a compiled program is being captured on this thread."""
    return _tls.tracer is not None


# code objects of functions marked ``ptcore.compiler.disable``: calling one
# while capturing makes the program run eagerly (its body must run each call)
_DISABLED = set()


def mark_disabled(code):
    _DISABLED.add(code)


def disabled_code(code):
    return code in _DISABLED


class GraphBreak:
    """Why the program is not one graph (``torch._dynamo``'s
    ``GraphCompileReason``): ``reason``, ``user_stack`` (the program's frames
    where it happened) and ``graph_break`` (True: the graph is cut there).

    ``kind`` is ``"conversion"`` (a tensor became a Python value: the value
    guards the next segment), ``"explicit"`` (``graph_break()``) or
    ``"unsupported"`` (the program runs eagerly); ``index`` is the number of
    nodes recorded before it, ``vid`` the converted value, ``method`` the
    conversion (``"item"``, ``"__bool__"`` ...) and ``value`` its result."""

    __slots__ = ("reason", "user_stack", "graph_break", "kind", "index", "vid", "method", "value")

    def __init__(self, reason, kind, index, vid=None, method=None, value=None):
        self.reason = reason
        self.user_stack = _user_stack()
        self.graph_break = True
        self.kind = kind
        self.index = index
        self.vid = vid
        self.method = method
        self.value = value

    def __repr__(self):
        where = ""
        if self.user_stack:
            f = self.user_stack[-1]
            where = f" (at {f.filename}:{f.lineno})"
        return f"GraphBreak({self.reason!r}{where})"


_PKG = __file__.rsplit("/_dynamo/", 1)[0]


def _user_stack():
    """The stack of the program at this point, without ptcore's frames."""
    # (lookup_lines=False: the source lines are read when shown, not here, where
    # the profile hook would take linecache's file reads for the program's I/O)
    frames = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe(2)),
                                            lookup_lines=False)
    return [f for f in reversed(frames) if not f.filename.startswith(_PKG)]


# ---------------------------------------------------------------------------
# what the program may read from outside
# ---------------------------------------------------------------------------

def _tensors_in(x, path, out, depth=0):
    """``out[id(t)] = (t, path)`` for the tensors in ``x`` (nested tuples,
    lists and dicts, as far as four levels; by the objects' types, so that a
    proxy whose ``__class__`` raises is simply none of them)."""
    t = type(x)
    if issubclass(t, _TensorBase):
        out.setdefault(id(x), (x, path))
    elif depth < 4 and issubclass(t, (tuple, list)) and not issubclass(t, ptcore.Size):
        for i, a in enumerate(x):
            _tensors_in(a, None if path is None else path + (i,), out, depth + 1)
    elif depth < 4 and issubclass(t, dict):
        for k, a in x.items():
            _tensors_in(a, None if path is None else path + (k,), out, depth + 1)


def external_tensors(fn, modules):
    """``id -> tensor`` of the tensors the program may read without making
    them: the parameters, buffers and tensor attributes of ``modules`` (and
    tensors in their list/tuple/dict attributes), and the tensors among the
    globals and closure cells of ``fn``."""
    out = {}
    for m in modules:
        for sub in m.modules():
            for t in sub._parameters.values():
                if t is not None:
                    out.setdefault(id(t), (t, None))
            for t in sub._buffers.values():
                if t is not None:
                    out.setdefault(id(t), (t, None))
            for k, v in sub.__dict__.items():
                if not k.startswith("__"):
                    _tensors_in(v, None, out, 2)
    code = getattr(fn, "__code__", None)
    if code is not None:
        g = getattr(fn, "__globals__", {})
        for name in code.co_names:
            v = g.get(name)
            if isinstance(v, _TensorBase):
                out.setdefault(id(v), (v, None))
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                _tensors_in(cell.cell_contents, None, out, 2)
            except ValueError:      # an empty cell
                pass
    return {k: t for k, (t, _) in out.items()}


# ---------------------------------------------------------------------------
# the tracer
# ---------------------------------------------------------------------------

class Capture:
    """What one capture run recorded (see the module docstring)."""

    def __init__(self):
        self.graph = Graph()
        self.grad_modes = []        # per node: grad mode it ran under
        self.arg_inputs = []        # (vid, path) of the inputs taken from the arguments
        self.free_inputs = []       # (vid, tensor): inputs kept by reference
        self.breaks = []            # GraphBreak, in order (conversions and explicit ones)
        self.checks = {}            # node index -> the Python value it returned
        self.problems = []          # GraphBreak of kind "unsupported"
        self.out_spec = None        # the program's result, encoded (see encode_output)
        self.requires_grad = set()  # values whose tensor required grad when captured
        self.recorded = False       # an op's result required grad (autograd recorded)
        self.grad_writes = False    # an op wrote into a tensor that requires grad
        self.tensors = {}           # value id -> its tensor in the capture run
        self.input_writes = []      # nodes that write an input's memory (in place)
        self.effects = set()        # nodes that write a tensor or draw random numbers
        self.state_writes = False   # its only problem: it wrote Python state it did not create


_COMPOSITES = [0, frozenset()]


def composites():
    """``(namespace, name)`` of the ops whose autograd records what they compute
    (declared ``grad="inside"``: composites of other ops, or functions that
    attach their own nodes), but the conversions (``item``, ``tolist`` ...):
    decomposed, their value would not be seen and the graph would keep the
    value of the capture run."""
    if _COMPOSITES[0] != len(OPS):
        _COMPOSITES[1] = frozenset(
            k for k, d in OPS.items() if d.decl is not None and d.decl.grad == "inside"
            and not (k[0] == "Tensor" and k[1] in _tracing.CONVERSIONS))
        _COMPOSITES[0] = len(OPS)
    return _COMPOSITES[1]


class CaptureTracer:
    """The tracer of the dispatch point's tracing layer while a program is
    captured (the protocol of :mod:`ptcore._dispatch.tracing`).

    ``transparent``: the ops recorded as the ops they call (a training
    capture decomposes the composites, so that the backward of every part
    is found; see :mod:`ptcore._inductor.aot`).  A composite whose parts the
    graph cannot hold -- it computes outside the operator table, converts a
    tensor, writes into a tensor that requires grad, or calls what the graph
    cannot replay -- is recorded as one node instead."""

    transparent_depth = 0

    def __init__(self, external, transparent=frozenset()):
        self.transparent = transparent
        self._roots = ()            # what the program could reach before it ran
        self._reach = None          # (the ids of those objects, found when needed)
        self.frames = []            # per composite being decomposed: [cannot be]
        self.cap = Capture()
        self.env = {}               # id(tensor) -> (tensor, vid): keeps the tensors alive
        self.undo = []              # (id, old env entry) of the bindings made inside composites
        self.unset = UnsetMemory()
        self.external = external
        self.next_id = 0
        self.storages = set()       # memory of the inputs (data pointers)

    # -- values ------------------------------------------------------------
    def new_value(self, kind, t=None, name=None):
        vid = self.next_id
        self.next_id += 1
        v = Value.of_tensor(vid, kind, t, name) if t is not None else Value(vid, kind, name)
        self.cap.graph.values[vid] = v
        if t is not None:
            self.cap.tensors[vid] = t
        if t is not None and t.requires_grad:
            self.cap.requires_grad.add(vid)
            if kind == "node":
                self.cap.recorded = True
        return v

    def add_arg(self, t, path):
        if id(t) in self.env:
            return
        v = self.new_value("input", t)
        self.env[id(t)] = (t, v.id)
        self.cap.graph.inputs.append(v.id)
        self.cap.arg_inputs.append((v.id, path))
        self.storages.add(_memory(t))

    def knows(self, t):
        hit = self.env.get(id(t))
        return hit is not None and hit[0] is t

    def _free(self, t, opname):
        """The value of a tensor no recorded op made and no argument holds."""
        if self.frames and self.external.get(id(t)) is not t:
            self.frames[-1][0] = True       # (a composite's own kernel made it)
            v = self.new_value("const", t.detach())
            self._set_env(t, v.id)
            return v.id
        if self.external.get(id(t)) is t:
            v = self.new_value("input", t)
            self.env[id(t)] = (t, v.id)
            self.cap.graph.inputs.append(v.id)
            self.cap.free_inputs.append((v.id, t))
            self.storages.add(_memory(t))
            return v.id
        self.problem(f"{opname} reads a tensor of shape {tuple(t.shape)} computed outside the "
                     "operator table (not an argument, parameter, buffer or attribute of the "
                     "program's modules, nor a global of the function)")
        # (recorded as a constant so that the capture goes on; the program
        # runs eagerly for these guards)
        v = self.new_value("const", t.detach())
        self.env[id(t)] = (t, v.id)
        return v.id

    def encode(self, x, opname):
        if isinstance(x, _TensorBase):
            hit = self.env.get(id(x))
            if hit is not None and hit[0] is x:
                return {"v": hit[1]}
            return {"v": self._free(x, opname)}
        seq = encode_sequence(x, lambda a: self.encode(a, opname))
        if seq is not None:
            return seq
        try:
            return encode_const(x)
        except TypeError:
            if isinstance(x, tuple) and not isinstance(x, ptcore.Size):
                return {"tuple": [self.encode(a, opname) for a in x]}
            self.problem(f"{opname} takes an argument of type {type(x).__name__}, which a graph "
                         "cannot hold")
            return None

    def _bind_tensor(self, t):
        v = self.new_value("node", t)
        self._set_env(t, v.id)
        return v.id

    def _set_env(self, t, vid):
        """Bind tensor ``t`` to value ``vid``; inside a composite being
        decomposed, logged, so that recording the composite as one node undoes
        it (an op of its parts may return a tensor the program holds, as
        ``contiguous()`` does: that tensor would stay bound to a value of a
        node that no longer exists)."""
        if self.frames:
            self.undo.append((id(t), self.env.get(id(t))))
        self.env[id(t)] = (t, vid)

    def _undo_to(self, n):
        """Restore the bindings made after the ``n`` first of the log."""
        log = self.undo
        while len(log) > n:
            key, old = log.pop()
            if old is None:
                self.env.pop(key, None)
            else:
                self.env[key] = old

    def bind(self, out):
        return encode_outputs(out, self._bind_tensor)

    # -- the tracing layer's calls ------------------------------------------
    def record(self, opdef, args, kwargs, out):
        name = f"{opdef.namespace}::{opdef.name}"
        if self.unset.reads_unset(opdef, args, kwargs, out) and self.frames:
            self.frames[-1][0] = True       # (the composite fills memory outside the table)
        self.unset.made(opdef, args, kwargs, out)
        enc_args = [self.encode(a, name) for a in args]
        enc_kwargs = {k: self.encode(v, name) for k, v in kwargs.items()}
        cap = self.cap
        idx = len(cap.graph.nodes)
        node = Node((opdef.namespace, opdef.name), enc_args, enc_kwargs, self.bind(out))
        node._fn = None
        cap.graph.nodes.append(node)
        cap.grad_modes.append(is_grad_enabled())
        w = written(opdef, args, kwargs)
        if w is not None or _outside_effect(opdef):
            cap.effects.add(idx)
        if isinstance(w, _TensorBase):
            if _memory(w) in self.storages:
                cap.input_writes.append(idx)
            if w.requires_grad:
                cap.grad_writes = True
        if out is not None and node.outputs is None:
            # a Python value (``ptcore.equal``, ``is_nonzero`` ...): checked
            # when the graph runs
            try:
                encode_const(out)
            except TypeError:
                self.problem(f"{name} returned a {type(out).__name__}, which a graph cannot check")
            cap.checks[idx] = out

    def converted_value(self, opdef, args, kwargs, out):
        if self.frames:
            self.frames[-1][0] = True
            return
        t = args[0] if args else None
        if not isinstance(t, _TensorBase):
            return
        hit = self.env.get(id(t))
        vid = hit[1] if hit is not None and hit[0] is t else self._free(t, f"Tensor.{opdef.name}")
        what = _tracing.CONVERSIONS[opdef.name]
        try:
            encode_const(out if not isinstance(out, list) else tuple(_flat(out)))
        except TypeError:
            self.problem(f"Tensor.{opdef.name} gave a {type(out).__name__}, which a graph "
                         "cannot check")
            return
        self.cap.breaks.append(GraphBreak(
            f"Tensor.{opdef.name}: a tensor converted to a Python {what} (data-dependent)",
            "conversion", len(self.cap.graph.nodes), vid, opdef.name, out))

    def custom_node(self, cls):
        if self.frames:
            self.frames[-1][0] = True       # (the composite is recorded whole)
            return
        self.problem(f"autograd.Function {cls.__name__} attaches its own backward, which a graph "
                     "of the ops of its forward would lose")

    def explicit_break(self):
        if self.frames:
            self.frames[-1][0] = True
            return
        self.cap.breaks.append(GraphBreak("graph_break() called", "explicit",
                                          len(self.cap.graph.nodes)))

    def problem(self, reason):
        if self.frames:
            self.frames[-1][0] = True
            return
        self.cap.problems.append(GraphBreak(reason, "unsupported", len(self.cap.graph.nodes)))

    def enter_transparent(self, opdef):
        cap = self.cap
        self.frames.append([False])
        return (len(cap.graph.nodes), len(cap.breaks), len(cap.problems), cap.grad_writes,
                len(cap.input_writes), len(self.undo))

    def exit_transparent(self, mark, opdef, args, kwargs, out):
        tls = _tracing._tls
        tls.depth += 1              # (called at the trace's level: its own ops are not the trace's)
        try:
            self._exit_transparent(mark, opdef, args, kwargs, out)
        finally:
            tls.depth -= 1

    def _exit_transparent(self, mark, opdef, args, kwargs, out):
        cap = self.cap
        n = mark[0]
        # (a composite that switches grad mode inside, or attaches an autograd
        # node of its own to a result, is recorded as one node: its parts
        # would lose the node)
        mode = is_grad_enabled()
        dirty = self.frames.pop()[0] or (cap.grad_writes and not mark[3]) or \
            not self._known(out) or any(m != mode for m in cap.grad_modes[n:]) or \
            not self._same_grad(out) or self.unset.holds(out)
        if not dirty:
            if not self.frames:
                self.undo.clear()
            return
        # record the composite as one node (with the effects of its parts beyond
        # it: a batch norm's writes into its running statistics, a dropout's
        # random numbers; not its writes into buffers of its own)
        self._undo_to(mark[5])
        parts_write_input = len(cap.input_writes) > mark[4]
        parts_effect = parts_write_input or any(
            OPS.get(nd.op) is not None and _outside_effect(OPS[nd.op])
            for nd in cap.graph.nodes[n:])
        del cap.graph.nodes[n:], cap.grad_modes[n:]
        del cap.breaks[mark[1]:], cap.problems[mark[2]:], cap.input_writes[mark[4]:]
        cap.grad_writes = mark[3]
        cap.effects = {i for i in cap.effects if i < n}
        cap.checks = {i: v for i, v in cap.checks.items() if i < n}
        self.record(opdef, args, kwargs, out)
        if parts_effect:
            cap.effects.add(n)
        if parts_write_input and n not in cap.input_writes:
            cap.input_writes.append(n)

    def _same_grad(self, out):
        """Whether the results require grad as the recorded ops made them."""
        if isinstance(out, _TensorBase):
            return bool(out.requires_grad) == (self.env[id(out)][1] in self.cap.requires_grad)
        if isinstance(out, (tuple, list)):
            return all(self._same_grad(a) for a in out)
        return True

    def _known(self, out):
        if isinstance(out, _TensorBase):
            return self.knows(out)
        if isinstance(out, (tuple, list)):
            return all(self._known(a) for a in out)
        return True

    # -- the result --------------------------------------------------------
    def encode_output(self, out, depth=0):
        """The program's result as ``("v", vid)``, ``("c", constant)``,
        ``("seq", type, items)``, ``("dict", type, keys, items)``,
        ``("nt", type, items)`` (a named tuple), ``("tree", node, context,
        items)`` (a type registered with ``utils._pytree``), ``("dc", type,
        field names, items)`` (a dataclass) or ``("obj", type, attribute names,
        items)`` (another object the program made)."""
        if isinstance(out, _TensorBase):
            hit = self.env.get(id(out))
            if hit is not None and hit[0] is out:
                return ("v", hit[1])
            if self.external.get(id(out)) is out:
                return ("v", self._free(out, "the result"))
            self.problem("the program returns a tensor computed outside the operator table")
            return ("c", out)
        if depth > 8:
            self.problem("the program's result is nested too deeply")
            return ("c", None)
        t = type(out)
        if t in (tuple, list) or t is ptcore.Size:
            return ("seq", t, [self.encode_output(a, depth + 1) for a in out])
        if isinstance(out, tuple) and hasattr(t, "_fields"):
            return ("nt", t, [self.encode_output(a, depth + 1) for a in out])
        if t is dict or (isinstance(out, dict) and t.__module__ == "collections"):
            return ("dict", t, list(out.keys()), [self.encode_output(a, depth + 1)
                                                  for a in out.values()])
        if out is None or t in (bool, int, float, complex, str) or isinstance(
                out, (ptcore.dtype, ptcore.device)):
            return ("c", out)
        node = _pytree.SUPPORTED_NODES.get(t)
        if node is not None:
            # a registered pytree node (Hugging Face's ModelOutput ...): its children,
            # rebuilt by its unflatten function with the context of this call
            children, context = node.flatten_fn(out)
            return ("tree", node, context, [self.encode_output(a, depth + 1)
                                            for a in children])
        if dataclasses.is_dataclass(out) and not isinstance(out, type) and \
                all(f.init for f in dataclasses.fields(out)):
            names = [f.name for f in dataclasses.fields(out)]
            return ("dc", t, names, [self.encode_output(getattr(out, n), depth + 1)
                                     for n in names])
        if isinstance(out, type):
            return ("c", out)
        d = getattr(out, "__dict__", None)
        if type(d) is dict and not isinstance(out, ptcore.nn.Module) and \
                not callable(out) and id(out) not in self._pre_existing():
            # an object the program made (Hugging Face's DynamicCache ...): a new one of
            # its type each call, its attributes rebuilt (one the program received or
            # could reach before is not: its changes are effects the graph cannot replay)
            return ("obj", t, list(d), [self.encode_output(a, depth + 1) for a in d.values()])
        self.problem(f"the program returns a {t.__name__}, which a graph cannot rebuild")

    def _pre_existing(self):
        """The ids of the objects the program could reach before it ran: in its
        arguments and its modules' attributes (a few levels deep)."""
        if self._reach is None:
            self._reach = _reachable_ids(self._roots)
        return self._reach
        return ("c", out)


def _memory(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:       # (a tensor without storage: sparse, nested)
        return id(t)


def _flat(x):
    for a in x:
        if isinstance(a, list):
            yield tuple(_flat(a))
        else:
            yield a


# ---------------------------------------------------------------------------
# calls the graph cannot replay (a profile hook while capturing)
# ---------------------------------------------------------------------------

_EFFECT_BUILTINS = frozenset({"print", "input", "open", "breakpoint", "exec", "eval"})
_EFFECT_MODULES = frozenset({"time", "random", "logging", "tqdm", "pdb", "datetime", "secrets",
                             "uuid", "socket", "subprocess", "shutil"})
_QUIET_CALLERS = frozenset({"warnings", "linecache", "traceback", "tokenize"})


def _c_effect(fn):
    """Why calling the C function ``fn`` cannot be replayed, or None."""
    name = getattr(fn, "__name__", "")
    mod = getattr(fn, "__module__", None)
    owner = getattr(fn, "__self__", None)
    if mod == "builtins" and name in _EFFECT_BUILTINS:
        return f"call to {name}()"
    if mod is not None and mod.split(".")[0] in _EFFECT_MODULES:
        return f"call to {mod}.{name}()"
    if owner is not None and not isinstance(owner, type):
        tm = type(owner).__module__ or ""
        if isinstance(owner, io.IOBase) or tm in ("_io", "io"):
            return f"call to {type(owner).__name__}.{name}() (I/O)"
        if tm.split(".")[0] in _EFFECT_MODULES or tm.startswith("numpy.random") or \
                tm == "_random":
            return f"call to {type(owner).__name__}.{name}() (random numbers)"
    return None


# Logger methods and the level each logs at (``log`` takes its level)
_LOG_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40,
               "exception": 40, "critical": 50, "fatal": 50, "log": None}


def _silent_log_call(mod, frame):
    """Whether ``frame`` is a call of a ``logging.Logger`` method whose logger
    is not enabled for the call's level: it does nothing (a library's
    ``logger.warning`` under ``set_verbosity_error()``), so the graph can
    leave it out."""
    if mod != "logging":
        return False
    code = frame.f_code
    if code.co_name not in _LOG_LEVELS or code.co_argcount < 2:
        return False
    local = frame.f_locals
    log = local.get(code.co_varnames[0])
    if not isinstance(log, logging.Logger):
        return False
    level = _LOG_LEVELS[code.co_name]
    if level is None:
        level = local.get("level")
        if type(level) is not int:
            return False
    try:
        return not log.isEnabledFor(level)
    except Exception:
        return False


def _profile_hook(tracer, watch):
    tls = _tracing._tls

    def hook(frame, event, arg):
        if tls.depth:
            return                              # inside an op's implementation
        if event == "call":
            watch.enter(frame)
        if event == "c_call":
            why = _c_effect(arg)
            if why is not None and frame.f_globals.get("__name__", "") not in _QUIET_CALLERS:
                tracer.problem(f"{why}: its effect or result differs from call to call, so the "
                               "graph cannot replay it")
        elif event == "call":
            code = frame.f_code
            if code in _DISABLED:
                tracer.problem(f"call to {code.co_name}, marked ptcore.compiler.disable")
                return
            mod = frame.f_globals.get("__name__", "")
            if mod.split(".")[0] in _EFFECT_MODULES and frame.f_back is not None and \
                    frame.f_back.f_globals.get("__name__", "").split(".")[0] not in \
                    _EFFECT_MODULES and not _silent_log_call(mod, frame):
                tracer.problem(f"call to {mod}.{code.co_name}(): its effect or result differs "
                               "from call to call, so the graph cannot replay it")
    return hook


# ---------------------------------------------------------------------------
# module state (what an assignment in forward would change)
# ---------------------------------------------------------------------------

def _module_state(modules):
    snap = []
    for m in modules:
        for sub in m.modules():
            snap.append((sub, dict(sub.__dict__), dict(sub._parameters), dict(sub._buffers),
                         dict(sub._modules)))
    return snap


def _changed(snap):
    for sub, d, p, b, ch in snap:
        for name, old, now in (("attribute", d, sub.__dict__), ("parameter", p, sub._parameters),
                               ("buffer", b, sub._buffers), ("submodule", ch, sub._modules)):
            if len(old) != len(now):
                new = [k for k in now if k not in old] or [k for k in old if k not in now]
                return f"{type(sub).__name__}: forward adds or removes {name} {new[0]!r}"
            for k, v in now.items():
                o = old.get(k, _MISSING)
                if o is v:
                    continue
                if type(o) is type(v) and type(v) in (bool, int, float, str) and o == v:
                    continue
                return f"{type(sub).__name__}: forward assigns {name} {k!r}"
    return None


_MISSING = object()


# ---------------------------------------------------------------------------
# one capture run
# ---------------------------------------------------------------------------

def _training(args, kwargs, external):
    """Whether a call may record autograd (grad mode on and a tensor it can
    read requires grad): its capture then decomposes the composites."""
    if not is_grad_enabled():
        return False
    found = {}
    _tensors_in(tuple(args), (0,), found)
    _tensors_in(dict(kwargs), (1,), found)
    return any(t.requires_grad for t, _ in found.values()) or \
        any(t.requires_grad for t in external.values())


def _reachable_ids(root, depth=5, out=None):
    """The ids of the objects reachable from ``root`` through sequences, dicts
    and instance dicts, ``depth`` levels deep (tensors and modules' tensors
    excluded: not what the result's objects are compared with)."""
    if out is None:
        out = set()
    if depth < 0 or isinstance(root, _TensorBase) or id(root) in out or \
            root is None or type(root) in (bool, int, float, complex, str, bytes):
        return out
    out.add(id(root))
    if isinstance(root, (list, tuple, set, frozenset)):
        for a in root:
            _reachable_ids(a, depth - 1, out)
    elif isinstance(root, dict):
        for a in root.values():
            _reachable_ids(a, depth - 1, out)
    else:
        d = getattr(root, "__dict__", None)
        if type(d) is dict and not isinstance(root, type):
            for a in d.values():
                _reachable_ids(a, depth - 1, out)
    return out


def capture(fn, args, kwargs, modules):
    """Run ``fn(*args, **kwargs)`` eagerly while recording it; returns
    ``(capture, result)``.  An exception of the program propagates (after
    the tracing and the profile hook are switched off)."""
    external = external_tensors(fn, modules)
    tracer = CaptureTracer(external, composites() if _training(args, kwargs, external)
                           else frozenset())
    arg_tensors = {}
    _tensors_in(tuple(args), (0,), arg_tensors)
    _tensors_in(dict(kwargs), (1,), arg_tensors)
    # inputs in the order of the arguments
    for t, path in arg_tensors.values():
        tracer.add_arg(t, path)
    snap = _module_state(modules)
    watch = StateWatch()
    watch.note_arguments(args, kwargs)
    watch.note_modules(modules)
    old_profile = sys.getprofile()
    _tls.tracer = tracer
    try:
        with _tracing.tracing(tracer):
            sys.setprofile(_profile_hook(tracer, watch))
            try:
                out = fn(*args, **kwargs)
            finally:
                sys.setprofile(old_profile)
    finally:
        _tls.tracer = None
    why = _changed(snap) or watch.changed()
    cap = tracer.cap
    if why is not None:
        clean = not cap.problems
        tracer.problem(why + " (a side effect the graph cannot replay)")
        cap.state_writes = clean
    tracer._roots = (args, kwargs, list(modules), getattr(fn, "__self__", None))
    cap.out_spec = tracer.encode_output(out)
    tracer.env.clear()
    return cap, out
