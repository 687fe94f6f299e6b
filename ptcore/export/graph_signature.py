"""The signature of an exported graph (``torch.export.graph_signature``):
what each placeholder of the graph is (a parameter, a buffer, a lifted
constant tensor or a user input) and what each output is."""
import dataclasses
import enum

__all__ = ["ConstantArgument", "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind",
           "OutputSpec", "SymIntArgument", "TensorArgument"]


@dataclasses.dataclass
class TensorArgument:
    """A tensor value of the graph, by node name."""
    name: str


@dataclasses.dataclass
class SymIntArgument:
    """A size value of the graph, by node name."""
    name: str


@dataclasses.dataclass
class ConstantArgument:
    """A Python constant among the inputs or outputs (an int, a float, None ...)."""
    name: str
    value: object


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    PARAMETER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclasses.dataclass
class InputSpec:
    """One placeholder: its kind, its argument, the state name it reads
    (``target``: ``"fc.weight"``; None for user inputs) and, for buffers,
    whether the buffer is in the state dict."""
    kind: InputKind
    arg: object
    target: object = None
    persistent: object = None

    def __post_init__(self):
        if self.kind is InputKind.BUFFER and self.persistent is None:
            raise ValueError("InputSpec: a BUFFER input needs persistent=True or False")


@dataclasses.dataclass
class OutputSpec:
    """One output of the graph: its kind, its argument and target."""
    kind: OutputKind
    arg: object
    target: object = None


def _arg_repr(arg):
    return arg.name if hasattr(arg, "name") else repr(arg)


@dataclasses.dataclass
class ExportGraphSignature:
    """The inputs and outputs of an exported graph, in order.

    Attributes
    ----------
    input_specs, output_specs : list
        :class:`InputSpec` / :class:`OutputSpec`, one per placeholder / output.

    Examples
    --------
    >>> ep = ptcore.export.export(ptcore.nn.Linear(2, 1), (ptcore.ones(3, 2),))
    >>> ep.graph_signature.parameters, ep.graph_signature.user_inputs
    (('weight', 'bias'), ('input',))
    """
    input_specs: list
    output_specs: list

    def _inputs(self, kind):
        return tuple(s.target for s in self.input_specs if s.kind is kind)

    @property
    def parameters(self):
        """The state names of the parameters read, in placeholder order."""
        return self._inputs(InputKind.PARAMETER)

    @property
    def buffers(self):
        """The state names of the buffers read, in placeholder order."""
        return self._inputs(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind is InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return self._inputs(InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self):
        return self._inputs(InputKind.CUSTOM_OBJ)

    @property
    def user_inputs(self):
        """The user inputs' names (or constant values), in order."""
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        """The user outputs' node names (or constant values), in order."""
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    def _placeholders(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is kind}

    @property
    def inputs_to_parameters(self):
        """Placeholder name -> parameter name."""
        return self._placeholders(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        """Placeholder name -> buffer name."""
        return self._placeholders(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        return self._placeholders(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind is OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind is OutputKind.USER_INPUT_MUTATION}

    @property
    def backward_signature(self):
        return None

    @property
    def assertion_dep_token(self):
        return None

    @property
    def input_tokens(self):
        return ()

    @property
    def output_tokens(self):
        return ()

    def __str__(self):
        lines = ["# inputs"]
        for s in self.input_specs:
            extra = "" if s.target is None else f" target={s.target!r}"
            if s.kind is InputKind.BUFFER:
                extra += f" persistent={s.persistent}"
            lines.append(f"{_arg_repr(s.arg)}: {s.kind.name}{extra}")
        lines += ["", "# outputs"]
        for s in self.output_specs:
            extra = "" if s.target is None else f" target={s.target!r}"
            lines.append(f"{_arg_repr(s.arg)}: {s.kind.name}{extra}")
        return "\n".join(lines) + "\n"
