"""The result of an export (``torch.export.ExportedProgram``): the traced
graph with its parameters, buffers and constants lifted to inputs, its
signature, its state, and :meth:`ExportedProgram.module`, the graph as a
module that takes the original module's inputs."""
import dataclasses
import functools

from ptcore._tensor import _TensorBase
from ptcore.fx.graph import CodeGen, Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.interpreter import Interpreter
from ptcore.nn import Module, Parameter
from ptcore.utils import _pytree
import ptcore.export.graph_signature as gs
from ptcore.export.dynamic_shapes import DimSpec, ValueRanges
from ptcore.export._trace import trace_program

__all__ = ["ExportedProgram", "ModuleCallEntry", "ModuleCallSignature", "default_decompositions"]


@dataclasses.dataclass
class ModuleCallSignature:
    """How a module of the program is called: its inputs' and outputs' structure."""
    inputs: list
    outputs: list
    in_spec: object
    out_spec: object
    forward_arg_names: list = None


@dataclasses.dataclass
class ModuleCallEntry:
    """A module of the exported program by qualified name (``""``: the root)."""
    fqn: str
    signature: object = None


class _InputInfo:
    """What ``ExportedProgram.module()`` checks its inputs against."""

    def __init__(self, in_spec, out_spec, input_shapes, arg_names, kw_names):
        self.in_spec, self.out_spec = in_spec, out_spec
        # per flat input leaf: (placeholder name, dtype, [int | DimSpec]) for a
        # tensor, (path, None, value) for a constant
        self.input_shapes = input_shapes
        self.arg_names, self.kw_names = arg_names, kw_names


def _guard_failed(msg):
    raise AssertionError(f"Guard failed: {msg}")


def check_inputs(info, args, kwargs):
    """The tensor leaves of ``(args, kwargs)`` in placeholder order, after checking
    that they have the exported structure and sizes (as torch's input guards:
    AssertionError for a size outside the exported ones)."""
    kwargs = {**{k: kwargs[k] for k in info.kw_names if k in kwargs},
              **{k: v for k, v in kwargs.items() if k not in info.kw_names}}
    flat, spec = _pytree.tree_flatten((tuple(args), kwargs))
    if spec != info.in_spec:
        raise ValueError("Trying to flatten user inputs with exported input tree spec: \n"
                         f"{info.in_spec}\nbut actually got inputs with tree spec of: \n{spec}.\n"
                         "Please check that the inputs have the same number and type of args "
                         "and kwargs as the ones you used when tracing.")
    out = []
    sizes = {}
    for value, (name, dtype, shape) in zip(flat, info.input_shapes):
        if dtype is None:
            if not (type(value) is type(shape) and (value == shape or value != value and
                                                     shape != shape)):
                _guard_failed(f"{name} == {shape!r}")
            continue
        if not isinstance(value, _TensorBase):
            raise TypeError(f"Expected input {name} to be a Tensor, but got "
                            f"{type(value).__name__}")
        got = _TensorBase.size(value)
        if len(got) != len(shape):
            _guard_failed(f"{name}.dim() == {len(shape)}")
        for i, (g, want) in enumerate(zip(got, shape)):
            where = f"{name}.size()[{i}]"
            if isinstance(want, DimSpec):
                if g < want.lo:
                    _guard_failed(f"{where} >= {want.lo}")
                if g > want.hi:
                    _guard_failed(f"{where} <= {want.hi}")
                first = sizes.setdefault(want.name, (where, g))
                if first[1] != g:
                    _guard_failed(f"{where} == {first[0]}")
            elif g != want:
                _guard_failed(f"{where} == {want}")
        out.append(value)
    return out


class _ExportCodeGen(CodeGen):
    """The code of ``ExportedProgram.module()``'s forward: the original
    arguments in, flattened and checked; the outputs rebuilt in the original
    structure."""

    def __init__(self, info):
        super().__init__()
        self.info = info

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        # (any arguments: a call that does not match the exported inputs is
        # refused by the check, with a ValueError, as torch's module does)
        names = "".join(f"{v.split(':')[0].strip()}, " for v in free_vars if v != "self")
        lhs = f"{names}= " if names else ""
        return (f"def {self._func_name}(self, *args, **kwargs){maybe_return_annotation}:\n"
                f"    {lhs}_export_inputs(args, kwargs)")

    def generate_output(self, output_args, *, repr_fn=repr):
        return f"return _export_outputs({repr_fn(output_args)})"

    def additional_globals(self):
        info = self.info
        return [("_export_inputs", functools.partial(check_inputs, info)),
                ("_export_outputs", functools.partial(_unflatten_outputs, info))]


def _unflatten_outputs(info, outs):
    return _pytree.tree_unflatten(list(outs), info.out_spec)


def _split_name(s):
    return s.split(".")


class ExportedProgram:
    """An exported program (``torch.export.ExportedProgram``).

    Attributes
    ----------
    graph_module : ptcore.fx.GraphModule
        The graph, with parameters, buffers and constants as inputs
        (placeholders ``p_<name>``, ``b_<name>``, ``c_<name>``) before the user inputs.
    graph_signature : ExportGraphSignature
        What each placeholder and output is.
    state_dict : dict
        The parameters and persistent buffers by name.
    constants : dict
        The lifted constant tensors and non-persistent buffers by name.
    range_constraints : dict
        The range of each dynamic size.
    example_inputs : tuple
        ``(args, kwargs)`` of the export.
    """

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints,
                 module_call_graph, example_inputs=None, constants=None, *, verifiers=None,
                 _info=None):
        self._graph_module = GraphModule(root if isinstance(root, (Module, dict)) else {},
                                         graph)
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._module_call_graph = module_call_graph
        self._example_inputs = example_inputs
        self._constants = constants or {}
        self._info = _info
        self.verifiers = verifiers or []

    # -- torch's attributes ---------------------------------------------------
    graph_module = property(lambda self: self._graph_module)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    range_constraints = property(lambda self: self._range_constraints)
    module_call_graph = property(lambda self: self._module_call_graph)
    example_inputs = property(lambda self: self._example_inputs)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    dialect = "TRAINING"

    @property
    def graph(self):
        return self._graph_module.graph

    @property
    def call_spec(self):
        return (self._info.in_spec, self._info.out_spec)

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        nonpersist = set(self._graph_signature.non_persistent_buffers)
        for name in self._graph_signature.buffers:
            yield name, (self._constants if name in nonpersist else self._state_dict)[name]

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def _state_of(self, spec):
        if spec.kind is gs.InputKind.PARAMETER:
            return self._state_dict[spec.target]
        if spec.kind is gs.InputKind.BUFFER and spec.persistent:
            return self._state_dict[spec.target]
        return self._constants[spec.target]

    # -- the module -------------------------------------------------------------
    def module(self):
        """The program as a module (a ``GraphModule``) taking the original
        module's inputs: parameters and buffers are its attributes under their
        original names (its state dict has the original keys), its inputs are
        checked against the exported sizes.

        Returns
        -------
        ptcore.fx.GraphModule
        """
        graph = Graph()
        env = {}
        specs = {s.arg.name: s for s in self._graph_signature.input_specs
                 if isinstance(s.arg, gs.TensorArgument)}
        for node in self.graph.nodes:
            spec = specs.get(node.name) if node.op == "placeholder" else None
            if spec is not None and spec.kind is not gs.InputKind.USER_INPUT:
                new = graph.get_attr(spec.target)
                new.name = node.name
            else:
                new = graph.node_copy(node, lambda n: env[n])
            new.meta = dict(node.meta)
            env[node] = new
        info = self._info
        graph.set_codegen(_ExportCodeGen(info))
        root = Module()
        for spec in self._graph_signature.input_specs:
            if spec.kind is gs.InputKind.USER_INPUT:
                continue
            *path, field = _split_name(spec.target)
            owner = root
            for p in path:
                sub = owner._modules.get(p)
                if sub is None:
                    sub = Module()
                    owner.add_module(p, sub)
                owner = sub
            value = self._state_of(spec)
            if spec.kind is gs.InputKind.PARAMETER:
                owner.register_parameter(field, value if isinstance(value, Parameter)
                                         else Parameter(value))
            elif spec.kind is gs.InputKind.BUFFER:
                owner.register_buffer(field, value, persistent=bool(spec.persistent))
            else:
                owner.__dict__[field] = value
        gm = GraphModule(root, graph)
        # (GraphModule registers each tensor attribute as a buffer: put back
        # persistence and plain constants)
        for spec in self._graph_signature.input_specs:
            if spec.kind in (gs.InputKind.BUFFER, gs.InputKind.CONSTANT_TENSOR):
                *path, field = _split_name(spec.target)
                owner = gm
                for p in path:
                    owner = getattr(owner, p)
                if spec.kind is gs.InputKind.CONSTANT_TENSOR:
                    t = owner._buffers.pop(field, None)
                    if t is not None:
                        owner.__dict__[field] = t
                elif not spec.persistent:
                    owner._non_persistent_buffers_set.add(field)
        gm.meta = {}
        return gm

    # -- decompositions ---------------------------------------------------------
    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """A new program whose ops of ``decomp_table`` (``{aten overload:
        function}``; default :func:`default_decompositions`) are replaced by the
        ops their functions call."""
        table = default_decompositions() if decomp_table is None else dict(decomp_table)
        mod = self.module()
        info = self._info

        def call(*args, **kwargs):
            flat = check_inputs(info, args, kwargs)
            outs = _Decomposer(mod, table).run(*flat)
            return _unflatten_outputs(info, outs)
        args, kwargs = self._example_inputs
        parts = trace_program(mod, args, kwargs, None, call=call, dims=info.dims,
                              input_names=info.arg_names)
        return from_trace(parts)

    # -- printing ----------------------------------------------------------------
    def __str__(self):
        code = self._graph_module.print_readable(print_output=False)
        code = "\n".join("    " + line for line in code.split("\n"))
        sig = "\n".join("    " + line for line in str(self._graph_signature).split("\n"))
        return (f"ExportedProgram:\n{code}\nGraph signature: \n{sig}\n"
                f"Range constraints: {self._range_constraints!r}\n")

    def __repr__(self):
        return self.__str__()


class _Decomposer(Interpreter):
    """Runs a graph with the ops of ``table`` replaced by their decompositions."""

    def __init__(self, module, table):
        super().__init__(module)
        self.table = table

    def call_function(self, target, args, kwargs):
        fn = self.table.get(target)
        if fn is not None:
            return fn(*args, **kwargs)
        return super().call_function(target, args, kwargs)


def _linear(input, weight, bias=None):
    import ptcore
    w = ptcore.ops.aten.permute.default(weight, [1, 0])
    if input.dim() == 2 and bias is not None:
        return ptcore.ops.aten.addmm.default(bias, input, w)
    out = ptcore.ops.aten.matmul.default(input, w)
    return out if bias is None else ptcore.ops.aten.add.Tensor(out, bias)


def default_decompositions():
    """The decompositions ``run_decompositions()`` applies by default
    (``torch.export.default_decompositions``): a dict ``{overload: function}``."""
    import ptcore
    return {ptcore.ops.aten.linear.default: _linear}


def from_trace(parts, example_inputs=None):
    """An ExportedProgram from :func:`~ptcore.export._trace.trace_program`'s pieces."""
    info = _InputInfo(parts["in_spec"], parts["out_spec"], parts["input_shapes"],
                      [n for n in parts["forward_arg_names"]
                       if n not in parts["example_inputs"][1]],
                      list(parts["example_inputs"][1]))
    info.dims = parts["dims"]
    ranges = {}
    for leaf in parts["dims"]:
        for spec in leaf.values():
            ranges.setdefault(spec.name, ValueRanges(spec.lo, spec.hi))
    call_graph = [ModuleCallEntry("", ModuleCallSignature(
        [], [], parts["in_spec"], parts["out_spec"], parts["forward_arg_names"]))]
    call_graph += [ModuleCallEntry(n) for n in parts["submodules"]]
    return ExportedProgram({}, parts["graph"], parts["signature"], parts["state_dict"], ranges,
                           call_graph, parts["example_inputs"], parts["constants"], _info=info)

