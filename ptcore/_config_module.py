"""Settings modules in the manner of torch's ``_config_module``: a module whose attributes
are a fixed set of settings (``torch._dynamo.config``, ``torch._inductor.config``), possibly
grouped in dotted namespaces (``config.triton.cudagraphs``).  Reading or setting a name that
is not a setting raises ``AttributeError``, as in torch; ``get_config_copy()`` and
``patch(...)`` work as torch's."""
import contextlib
import sys
import types

__all__ = ["install_config_module"]


def _lookup(values, aliases, full, modname):
    full = aliases.get(full, full)
    if full in values:
        return full, True
    if any(k.startswith(full + ".") for k in values):
        return full, False
    raise AttributeError(f"{modname}.{full} does not exist")


class _Namespace:
    """A dotted group of settings (``config.triton``)."""

    def __init__(self, module, prefix):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return self._module._get(self._prefix + "." + name)

    def __setattr__(self, name, value):
        self._module._set(self._prefix + "." + name, value)

    def __dir__(self):
        n = len(self._prefix) + 1
        return sorted({k[n:].split(".")[0] for k in self._module._values
                       if k.startswith(self._prefix + ".")})


class _ConfigModule(types.ModuleType):
    def _get(self, full):
        d = self.__dict__
        key, leaf = _lookup(d["_values"], d["_aliases"], full, self.__name__)
        return d["_values"][key] if leaf else _Namespace(self, key)

    def _set(self, full, value):
        d = self.__dict__
        key, leaf = _lookup(d["_values"], d["_aliases"], full, self.__name__)
        if not leaf:
            raise AttributeError(f"{self.__name__}.{key} is a group of settings, not a setting")
        d["_values"][key] = value

    def __getattr__(self, name):
        return self._get(name)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            return super().__setattr__(name, value)
        self._set(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) |
                      {k.split(".")[0] for k in self.__dict__["_values"]} |
                      set(self.__dict__["_aliases"]))

    def get_config_copy(self):
        """A dict of the current settings (dotted names for grouped ones)."""
        return dict(self.__dict__["_values"])

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Context manager / decorator setting some values for its duration
        (``config.patch(name=value)``, ``config.patch("name", value)`` or a dict)."""
        if isinstance(arg1, str):
            kwargs[arg1] = arg2
        elif isinstance(arg1, dict):
            kwargs.update(arg1)
        for k in kwargs:
            self._set(k, self._get(k))          # AttributeError for an unknown name
        mod = self

        class _Patch(contextlib.ContextDecorator):
            def __enter__(self):
                self._saved = {k: mod._get(k) for k in kwargs}
                for k, v in kwargs.items():
                    mod._set(k, v)
                return self

            def __exit__(self, *exc):
                for k, v in self._saved.items():
                    mod._set(k, v)
                return False
        return _Patch()


def install_config_module(module_name, defaults, aliases=None):
    """Make module ``module_name`` a settings module holding ``defaults`` (a dict of
    setting -> default value; dotted names form namespaces) and ``aliases`` (old name ->
    setting)."""
    mod = sys.modules[module_name]
    mod.__class__ = _ConfigModule
    mod.__dict__["_values"] = {k: (set(v) if isinstance(v, set) else v)
                               for k, v in defaults.items()}
    mod.__dict__["_aliases"] = dict(aliases or {})
