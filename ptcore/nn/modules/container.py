"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (``torch.nn``)."""
import operator
from collections import OrderedDict, abc as container_abcs
from itertools import chain, islice

from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import is_accelerator as _is_accelerator
from ptcore.nn.parameter import Parameter
from ptcore.nn.modules.module import Module, _typename

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


def _addindent(s_, numSpaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(numSpaces * " ") + line for line in s]
    s = "\n".join(s)
    return first + "\n" + s


class Container(Module):
    """Deprecated: subclass :class:`Module` instead."""

    def __init__(self, **kwargs):
        import warnings
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """A sequential container: ``forward`` chains the modules in order.

    ``Sequential(m1, m2, ...)`` or ``Sequential(OrderedDict([(name, module), ...]))``.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx, module):
        key = self._get_item_by_idx(self._modules.keys(), idx)
        return setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            key = self._get_item_by_idx(self._modules.keys(), idx)
            delattr(self, key)
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __add__(self, other):
        if isinstance(other, Sequential):
            ret = Sequential()
            for layer in self:
                ret.append(layer)
            for layer in other:
                ret.append(layer)
            return ret
        raise ValueError("add operator supports only objects "
                         f"of Sequential class, but {str(type(other))} is given.")

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, other):
        if isinstance(other, Sequential):
            offset = len(self)
            for i, module in enumerate(other):
                self.add_module(str(i + offset), module)
            return self
        raise ValueError("add operator supports only objects "
                         f"of Sequential class, but {str(type(other))} is given.")

    def __mul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        elif other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        elif other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        len_original = len(self)
        offset = len(self)
        for _ in range(other - 1):
            for i in range(len_original):
                self.add_module(str(i + offset), self._modules[str(i)])
            offset += len_original
        return self

    def __dir__(self):
        keys = super().__dir__()
        return [key for key in keys if not key.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module):
        """Append a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """Append every module of an iterable; returns self."""
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """Holds submodules in a list (registered, visible to all Module methods)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx):
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module):
        idx = self._get_abs_string_index(idx)
        return setattr(self, str(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self):
        list_of_reprs = [repr(item) for item in self]
        if len(list_of_reprs) == 0:
            return self._get_name() + "()"
        start_end_indices = [[0, 0]]
        repeated_blocks = [list_of_reprs[0]]
        for i, r in enumerate(list_of_reprs[1:], 1):
            if r == repeated_blocks[-1]:
                start_end_indices[-1][1] += 1
                continue
            start_end_indices.append([i, i])
            repeated_blocks.append(r)
        lines = []
        main_str = self._get_name() + "("
        for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
            local_repr = f"({start_id}): {b}"
            if start_id != end_id:
                n = end_id - start_id + 1
                local_repr = f"({start_id}-{end_id}): {n} x {b}"
            local_repr = _addindent(local_repr, 2)
            lines.append(local_repr)
        main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str

    def __dir__(self):
        keys = super().__dir__()
        return [key for key in keys if not key.isdigit()]

    def insert(self, index, module):
        """Insert ``module`` before ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """Append a module; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Append the modules of an iterable; returns self."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an "
                            "iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """Holds submodules in an ordered dictionary."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove all items."""
        self._modules.clear()

    def pop(self, key):
        """Remove ``key`` and return its module."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys."""
        return self._modules.keys()

    def items(self):
        """The ``(key, module)`` pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def update(self, modules):
        """Update from a mapping or an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an "
                            "iterable of key/value pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if not isinstance(m, container_abcs.Iterable):
                    raise TypeError("ModuleDict update sequence element "
                                    "#" + str(j) + " should be Iterable; is" + type(m).__name__)
                if not len(m) == 2:
                    raise ValueError("ModuleDict update sequence element "
                                     "#" + str(j) + " has length " + str(len(m)) + "; 2 is required")
                self[m[0]] = m[1]


def _param_line(k, p):
    if isinstance(p, _TensorBase):
        size_str = "x".join(str(size) for size in p.size())
        device_str = f" ({p.device})" if _is_accelerator(p.device) else ""
        return "  ({}): {} containing: [{} of size {}{}]".format(
            k, "Parameter" if isinstance(p, Parameter) else "Tensor", _typename(p), size_str,
            device_str)
    return "  (" + str(k) + "): Object of type: " + type(p).__name__


class ParameterList(Module):
    """Holds parameters in a list; plain tensors are turned into Parameters."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            out = self.__class__()
            for i in range(start, stop, step):
                out.append(self[i])
            return out
        idx = self._get_abs_string_index(idx)
        return getattr(self, str(idx))

    def __setitem__(self, idx, param):
        idx = self._get_abs_string_index(idx)
        if isinstance(param, _TensorBase) and not isinstance(param, Parameter):
            param = Parameter(param)
        return setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        keys = super().__dir__()
        return [key for key in keys if not key.isdigit()]

    def append(self, value):
        """Append a value (tensors become Parameters); returns self."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """Append the values of an iterable; returns self."""
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, _TensorBase):
            raise TypeError("ParameterList.extend should be called with an "
                            "iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        child_lines = []
        for k, p in enumerate(self):
            if isinstance(p, _TensorBase):
                size_str = "x".join(str(size) for size in p.size())
                device_str = f" ({p.device})" if _is_accelerator(p.device) else ""
                child_lines.append("  ({}): {} containing: [{} of size {}{}]".format(
                    k, "Parameter" if isinstance(p, Parameter) else "Tensor", p.dtype, size_str,
                    device_str))
            else:
                child_lines.append("  (" + str(k) + "): Object of type: " + type(p).__name__)
        return "\n".join(child_lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Holds parameters in an ordered dictionary; plain tensors become Parameters."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key):
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        attr = self._key_to_attr(key)
        return getattr(self, attr)

    def __setitem__(self, key, value):
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, _TensorBase) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        attr = self._key_to_attr(key)
        delattr(self, attr)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def copy(self):
        """A shallow copy."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key):
        return key in self._keys

    def setdefault(self, key, default=None):
        """The value of ``key``, inserting ``default`` if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """Remove all items."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key):
        """Remove ``key`` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Remove and return the last inserted ``(key, value)``."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key, default=None):
        """The value of ``key`` or ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with ``keys`` mapped to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys."""
        return self._keys.keys()

    def items(self):
        """The ``(key, value)`` pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values."""
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Update from a mapping (plain dicts in sorted key order) or ``(key, value)`` pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an "
                            "iterable of key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError("ParameterDict update sequence element "
                                    "#" + str(j) + " should be Iterable; is" + type(p).__name__)
                if not len(p) == 2:
                    raise ValueError("ParameterDict update sequence element "
                                     "#" + str(j) + " has length " + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self):
        return "\n".join(_param_line(k, p) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other):
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other):
        self.update(other)
        return self
