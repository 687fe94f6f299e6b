"""Operator schemas (``torch.FunctionSchema``): parsing and argument binding.

A schema is the signature of one overload of an op, in the notation of
PyTorch's ``native_functions.yaml``::

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor

:func:`parse` reads one into a :class:`FunctionSchema` (``name``,
``overload_name``, ``arguments``, ``returns``, printed as torch prints it).
:func:`bind` matches a call's ``(args, kwargs)`` against a schema, checking
each value's type as torch's operator call does, so that an op's overload can
be chosen from the arguments (:func:`select`).
"""
import ast
import re
from numbers import Number

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase, device as _device, dtype as _dtype

__all__ = ["Argument", "FunctionSchema", "SchemaMismatch", "parse", "bind", "select",
           "normalize", "is_tensor"]


class SchemaMismatch(RuntimeError):
    """The arguments of a call do not match a schema (torch raises RuntimeError)."""


# ---------------------------------------------------------------------------
# types
# ---------------------------------------------------------------------------

_BASE_STR = {"SymInt": "int", "Scalar": "number", "ScalarType": "int", "Layout": "int",
             "MemoryFormat": "int"}
_REAL_STR = {"SymInt": "int", "Scalar": "number"}


class _Type:
    """A schema type: ``base`` (``Tensor``, ``int`` ...), ``optional``, and for
    lists ``elem`` (the element type) and ``size`` (``int[2]``: 2)."""
    __slots__ = ("base", "optional", "elem", "size")

    def __init__(self, base, optional=False, elem=None, size=None):
        self.base, self.optional, self.elem, self.size = base, optional, elem, size

    def _str(self, names):
        if self.elem is not None:
            s = f"List[{self.elem._str(names)}]"
        else:
            s = names.get(self.base, self.base)
        return f"Optional[{s}]" if self.optional else s

    def __str__(self):
        return self._str(_BASE_STR)

    def __repr__(self):
        return str(self)


def _parse_type(text):
    """(``_Type``, alias annotation or None) of ``Tensor(a!)``, ``int[2]?``, ``Tensor?[]`` ..."""
    alias = None
    m = re.search(r"\(([^)]*)\)", text)
    if m is not None:
        alias = m.group(1)
        text = text[:m.start()] + text[m.end():]
    text = text.strip()
    optional = text.endswith("?")
    if optional:
        text = text[:-1]
    m = re.match(r"^(.*)\[(\d*)\]$", text)
    if m is not None:
        elem, _ = _parse_type(m.group(1))
        return _Type("List", optional, elem, int(m.group(2)) if m.group(2) else None), alias
    if not re.match(r"^[A-Za-z_][\w.]*$", text):      # (dotted: a script class)
        raise ValueError(f"cannot read the type {text!r}")
    return _Type(text, optional), alias


class _AliasInfo:
    """``Tensor(a!)``: the alias set ``a``, written (``!``) or not."""
    __slots__ = ("before_set", "is_write")

    def __init__(self, text):
        self.is_write = text.endswith("!")
        self.before_set = {s.strip() for s in text.rstrip("!").split("->")[0].split("|")}

    def __repr__(self):
        return f"_AliasInfo({sorted(self.before_set)}, is_write={self.is_write})"


class Argument:
    """One argument (or return) of a schema (``torch.Argument``)."""
    __slots__ = ("name", "_type", "_text", "default_value", "_default_text", "kwarg_only",
                 "alias_info")

    def __init__(self, name, type_text, default=None, kwarg_only=False):
        self.name = name
        self._text = type_text
        self._type, alias = _parse_type(type_text)
        self.alias_info = _AliasInfo(alias) if alias else None
        self._default_text = None if default is None else default.strip()
        self.default_value = _parse_default(default, self._type) if default is not None else None
        if self._default_text is not None and self._default_text != "None":
            # torch's printer: a dtype default as its ScalarType number, a device unquoted
            if self._type.base == "ScalarType":
                self._default_text = str(self.default_value)
            elif self._type.base == "Device":
                self._default_text = str(self.default_value)
        self.kwarg_only = kwarg_only

    @property
    def type(self):
        return self._type

    @property
    def real_type(self):
        return self._type._str(_REAL_STR)

    @property
    def N(self):
        return self._type.size

    @property
    def is_out(self):
        return self.kwarg_only and self.alias_info is not None and self.alias_info.is_write

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    def has_default_value(self):
        return self._default_text is not None

    def __str__(self):
        s = f"{self._text} {self.name}" if self.name else self._text
        if self._default_text is not None:
            s += "=" + self._default_text
        return s

    def __repr__(self):
        return f"Argument({str(self)!r})"


#: c10's ScalarType numbering: a ``ScalarType d=float32`` default reads as torch's int
_SCALAR_TYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                 "float32": 6, "float64": 7, "complex32": 8, "complex64": 9, "complex128": 10,
                 "bool": 11, "bfloat16": 15, "uint16": 27, "uint32": 28, "uint64": 29}


def _parse_default(text, typ):
    text = text.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if typ.base == "ScalarType" and text in _SCALAR_TYPES:
        return _SCALAR_TYPES[text]
    if typ.base == "Device" and text[:1] in "\"'":
        return _device(ast.literal_eval(text))
    if text.endswith(".") and text[:-1].lstrip("-").isdigit():
        text += "0"
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"cannot read the default value {text!r}") from None
    if typ.elem is not None and typ.size and isinstance(v, (int, float)):
        v = [v] * typ.size          # int[2] stride=1 is [1, 1]
    return v


def _split_top(text):
    """``text`` split at the commas outside brackets and parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

_HEAD = re.compile(r"^\s*(?:(?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)?)(?:\.(?P<ov>\w+))?)?"
                   r"\s*\((?P<args>.*)\)\s*->\s*(?P<ret>.+?)\s*$")
_ARG = re.compile(r"^(?P<type>.+?)\s+(?P<name>[A-Za-z_]\w*)(?:\s*=\s*(?P<default>.+))?$")


class FunctionSchema:
    """The signature of one op overload (``torch.FunctionSchema``): ``name``
    (``"aten::add"``), ``overload_name`` (``"Tensor"``, ``""`` for the default
    overload), ``arguments`` and ``returns`` (lists of :class:`Argument`)."""

    __slots__ = ("name", "overload_name", "arguments", "returns", "_positional", "_by_name",
                 "_tuple_return")

    def __init__(self, name, overload_name, arguments, returns, tuple_return=False):
        self.name = name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns
        # ``-> ((Tensor))``: one return that is a tuple (a Python function returning
        # ``tuple[Tensor]``), as torch's schema writes it
        self._tuple_return = tuple_return
        self._positional = [a for a in arguments if not a.kwarg_only]
        self._by_name = {a.name: a for a in arguments}

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def __str__(self):
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        rets = [str(r) for r in self.returns]
        ret = rets[0] if len(rets) == 1 and not self.returns[0].name else \
            "(" + ", ".join(rets) + ")"
        if self._tuple_return:
            ret = "((" + ", ".join(rets) + "))"
        ov = "." + self.overload_name if self.overload_name else ""
        return f"{self.name}{ov}({', '.join(parts)}) -> {ret}"

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(other) == str(self)

    def __hash__(self):
        return hash(str(self))


def parse(text, namespace=None, name=None):
    """The :class:`FunctionSchema` of ``text`` (``"add.Tensor(Tensor self, ...) -> Tensor"``).

    ``namespace`` is prefixed to a name without one; ``name`` names a schema
    written without a name (``"(Tensor x) -> Tensor"``).

    Raises
    ------
    ValueError
        The text is not a schema.
    """
    if not isinstance(text, str):
        raise TypeError(f"schema must be a string, not {type(text).__name__}")
    m = _HEAD.match(text)
    if m is None:
        raise ValueError(f"cannot parse the schema {text!r}: expected "
                         "'name(Tensor x, float a=1.0) -> Tensor'")
    opname = m.group("name") or name
    if opname is None:
        raise ValueError(f"the schema {text!r} has no op name")
    if namespace and "::" not in opname:
        opname = f"{namespace}::{opname}"
    args, kw_only = [], False
    try:
        for a in _split_top(m.group("args")):
            if a == "*":
                kw_only = True
                continue
            am = _ARG.match(a)
            if am is None:
                raise ValueError(f"cannot read the argument {a!r}")
            args.append(Argument(am.group("name"), am.group("type"), am.group("default"),
                                 kw_only))
        ret = m.group("ret").strip()
        items = _split_top(ret[1:-1]) if ret.startswith("(") else [ret]
        tuple_return = len(items) == 1 and items[0].startswith("(") and items[0].endswith(")")
        if tuple_return:
            items = _split_top(items[0][1:-1])
        returns = []
        for r in items:
            rm = _ARG.match(r)
            returns.append(Argument(rm.group("name"), rm.group("type")) if rm is not None
                           and not r.endswith(")") else Argument("", r))
    except ValueError as e:
        raise ValueError(f"schema {text!r}: {e}") from None
    names = [a.name for a in args]
    if len(set(names)) != len(names):
        raise ValueError(f"schema {text!r}: duplicate argument names")
    return FunctionSchema(opname, m.group("ov") or "", args, returns, tuple_return)


# ---------------------------------------------------------------------------
# binding a call
# ---------------------------------------------------------------------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) or \
        type(v).__module__ == "numpy" and hasattr(v, "__index__") and not isinstance(v, bool)


def _is_float(v):
    return _is_int(v) or isinstance(v, float)


def _is_number(v):
    return isinstance(v, Number)


def is_tensor(v):
    """Whether ``v`` is a Tensor for a schema: a dense tensor, or an object whose class
    says it stands for one (``_schema_tensor``: the sparse layouts' tensors, which
    torch's operators take as ``Tensor`` arguments)."""
    return isinstance(v, _TensorBase) or getattr(type(v), "_schema_tensor", False) is True


def _is_other(v):
    # Layout, MemoryFormat, Generator: ptcore's own objects
    return v is not None and not isinstance(v, (_TensorBase, Number, str, list, tuple)) and \
        not is_tensor(v)


_CHECKS = {
    "int": _is_int, "SymInt": _is_int, "float": _is_float, "bool": lambda v: isinstance(v, bool),
    "complex": _is_number, "Scalar": _is_number, "str": lambda v: isinstance(v, str),
    "ScalarType": lambda v: isinstance(v, _dtype),
    "Device": lambda v: isinstance(v, (_device, str)) or _is_int(v),
    "Layout": _is_other, "MemoryFormat": _is_other, "Generator": _is_other,
}


def _matches(t, v, numbers_as_tensors):
    if v is None:
        return t.optional
    if t.elem is not None:
        if t.size and t.elem.base in ("int", "SymInt", "bool", "float") and \
                _matches(t.elem, v, False):
            return True             # int[2] accepts one int
        if is_tensor(v) or not isinstance(v, (list, tuple)):
            return False
        return all(_matches(t.elem, e, numbers_as_tensors) for e in v)
    if t.base == "Tensor":
        return is_tensor(v) or numbers_as_tensors and _is_number(v)
    check = _CHECKS.get(t.base)
    if check is None and "." in t.base:
        # a script class (``__torch__.torch.classes.profiler._RecordFunction``): an object
        # whose class names it as its ``_script_class``
        return getattr(type(v), "_script_class", None) == t.base
    return check is not None and check(v)


def _type_name(v):
    return "Tensor" if is_tensor(v) else type(v).__name__


def bind(schema, args, kwargs, numbers_as_tensors=True):
    """Match ``(args, kwargs)`` with ``schema``: the dict argument name -> value
    (defaults filled in) and the set of names the call gave.

    ``numbers_as_tensors`` lets a Python number stand for a ``Tensor`` argument.

    Raises
    ------
    SchemaMismatch
        Too many arguments, an unknown or repeated keyword, a missing argument,
        or a value of the wrong type (the message names the argument).
    """
    decl = f"Declaration: {schema}"
    pos = schema._positional
    if len(args) > len(pos):
        raise SchemaMismatch(f"{schema.name}() expected at most {len(pos)} argument(s) but "
                             f"received {len(args)} argument(s). {decl}")
    values = {}
    for k, (a, v) in enumerate(zip(pos, args)):
        if not _matches(a._type, v, numbers_as_tensors):
            raise SchemaMismatch(f"{schema.name}() Expected a value of type '{a._type}' for "
                                 f"argument '{a.name}' but instead found type "
                                 f"'{_type_name(v)}'.\nPosition: {k}\nValue: {v!r}\n{decl}")
        values[a.name] = v
    for name, v in kwargs.items():
        a = schema._by_name.get(name)
        if a is None:
            raise SchemaMismatch(f"Unknown keyword argument '{name}' for operator "
                                 f"'{schema.name}'. {decl}")
        if name in values:
            raise SchemaMismatch(f"{schema.name}() got multiple values for argument '{name}'. "
                                 f"{decl}")
        if not _matches(a._type, v, numbers_as_tensors):
            raise SchemaMismatch(f"{schema.name}() Expected a value of type '{a._type}' for "
                                 f"argument '{name}' but instead found type "
                                 f"'{_type_name(v)}'.\nValue: {v!r}\n{decl}")
        values[name] = v
    given = set(values)
    for a in schema.arguments:
        if a.name not in values:
            if a._default_text is None:
                raise SchemaMismatch(f"{schema.name}() is missing value for argument "
                                     f"'{a.name}'. {decl}")
            values[a.name] = _call_default(a)
    return values, given


def _call_default(a):
    """The value a call gets for an argument it leaves out: a ``ScalarType`` default
    (torch's ScalarType number in ``default_value``) is the dtype itself."""
    d = a.default_value
    if a._type.base == "ScalarType" and type(d) is int:
        return getattr(_C, next(k for k, v in _SCALAR_TYPES.items() if v == d))
    return d


def select(schemas, args, kwargs):
    """The first of ``schemas`` the call matches, as torch's overload resolution:
    first with exact types, then letting numbers stand for tensors; with the
    dict of bound values.  Raises :class:`SchemaMismatch` naming every failure."""
    errors = []
    for numbers_as_tensors in (False, True):
        for s in schemas:
            try:
                return s, bind(s, args, kwargs, numbers_as_tensors)[0]
            except SchemaMismatch as e:
                if numbers_as_tensors:
                    errors.append(str(e))
    raise SchemaMismatch("Overloaded torch operator invoked from Python failed to match any "
                         "schema:\n" + "\n\n".join(errors))


def _is_default(v, a):
    if a._default_text is None:
        return False
    d = _call_default(a)
    if v is None or d is None:
        return v is d
    if isinstance(d, _dtype):
        return v is d
    if isinstance(v, _TensorBase):
        return False
    if isinstance(v, (list, tuple)):
        return isinstance(d, list) and list(v) == d
    return type(v) is type(d) and v == d


def _as_listed(a, v):
    """``v`` as torch hands a list argument to a dispatch mode (one int to ``int[2]``
    is ``[v, v]``, tuples are lists)."""
    t = a._type
    if t.elem is None or v is None:
        return v
    if _is_int(v) or isinstance(v, (float, bool)):
        return [v] * (t.size or 1)
    return list(v) if isinstance(v, tuple) else v


def normalize(schema, args, kwargs):
    """``(args, kwargs)`` of a call of ``schema`` in the form torch's dispatcher gives
    a dispatch mode: the arguments before ``*`` positional, the others by keyword,
    lists as lists, and the arguments equal to their defaults left out (the
    positional ones from the end).  Raises :class:`SchemaMismatch` as :func:`bind`."""
    values, _ = bind(schema, args, kwargs)
    pos = [_as_listed(a, values[a.name]) for a in schema._positional]
    while pos and _is_default(pos[-1], schema._positional[len(pos) - 1]):
        pos.pop()
    kw = {a.name: _as_listed(a, values[a.name]) for a in schema.arguments
          if a.kwarg_only and not _is_default(values[a.name], a)}
    return tuple(pos), kw
