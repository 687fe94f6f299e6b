"""``ptcore.utils.module_tracker`` (``torch.utils.module_tracker``): which
``nn.Module`` is running, forward and backward, by its qualified name."""
import weakref

import ptcore
from ptcore.autograd.graph import _current_graph_task_id, queue_callback, register_multi_grad_hook
from ptcore.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from ptcore.utils._pytree import tree_flatten

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """Context manager tracking the module hierarchy during execution.

    ``parents`` is the set of qualified names of the modules whose forward (or
    backward) is running, always with ``"Global"``; a module first seen as a
    root is named by its class (``"Linear"``), its children
    ``"<parent>.<attribute>"`` (``"Sequential.0"``), as torch's.  Backward
    entry and exit follow gradient hooks on the modules' outputs and inputs.

    Examples
    --------
    >>> m = ptcore.nn.Sequential(ptcore.nn.Linear(2, 2))
    >>> seen = []
    >>> with ModuleTracker() as tracker:
    ...     h = m[0].register_forward_pre_hook(lambda *a: seen.append(sorted(tracker.parents)))
    ...     _ = m(ptcore.ones(1, 2))
    >>> seen
    [['Global', 'Sequential', 'Sequential.0']]
    """

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._hooks = []

    @property
    def is_bw(self):
        """True while a backward pass runs on this thread."""
        return _current_graph_task_id() != -1

    def _maybe_set_engine_callback(self):
        if self._has_callback:
            return

        def callback():
            self.parents = {"Global"}
            self._has_callback = False
        queue_callback(callback)
        self._has_callback = True

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._maybe_set_engine_callback()
            self.parents.add(name)
        return fn

    def _get_pop_fn(self, name, is_bw):
        def fn(*args):
            self.parents.discard(name)
        return fn

    def _grad_tensors(self, tree):
        leaves, _ = tree_flatten(tree)
        return [a for a in leaves if isinstance(a, ptcore.Tensor) and a.requires_grad]

    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = self._grad_tensors(input)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = self._grad_tensors(output)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors,
                                                        self._get_append_fn(name, True)))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
