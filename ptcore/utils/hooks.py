"""Hook handles and module backward hooks (``torch.utils.hooks``): the
:class:`BackwardHook` behind ``nn.Module.register_full_backward_hook`` and
``register_full_backward_pre_hook``, with the identity Function it routes
tensors through (``BackwardHookFunction``, torch's ``nn.modules._functions``
name, where ptcore.nn re-exports it)."""
import warnings

import ptcore
from ptcore._hooks import RemovableHandle
from ptcore._tensor import _TensorBase
from ptcore._warn import warn_at_caller
from ptcore.autograd import Function

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Mark a function as an unserializable hook (suppresses serialization warnings)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each backward hook on ``tensor`` that serialization drops
    (those not marked with :func:`unserializable_hook`)."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks:
        for hook in hooks.values():
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                              "is expected, you can decorate the function with "
                              "@ptcore.utils.hooks.unserializable_hook to suppress this warning",
                              stacklevel=2)


class BackwardHookFunction(Function):
    """Identity on any number of tensors; its backward node is where module
    backward hooks are attached."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        # outputs that receive no gradient show as None in the hooks
        ctx.set_materialize_grads(False)
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class BackwardHook:
    """Run a module's full backward (pre-)hooks.

    ``setup_input_hook`` passes the tensors among the module's positional
    inputs through :class:`BackwardHookFunction` (its node's input gradients
    are the module's ``grad_input``); ``setup_output_hook`` does the same
    for the outputs (its node's output gradients are ``grad_output``).
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _pack_with_none(self, indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _unpack_none(self, indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the
                # outputs (e.g. double backward): nothing to report
                return None
            # as PyTorch (whose Function materializes them): inputs that
            # received no gradient (or do not require grad) show zeros
            meta = grad_fn._out_meta or ()
            grad_input = tuple(
                ptcore.zeros(meta[k][0], dtype=meta[k][1], device=meta[k][2])
                if g is None and k < len(meta) and meta[k] is not None else g
                for k, g in enumerate(grad_input))
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if not isinstance(out, (tuple, list)):
                    out = (out,)
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = tuple(out)
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, _TensorBase):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and ptcore.is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with "
                               "a code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        if type(args) is tuple:
            out = tuple(arg_list)
        else:
            out = type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        """Route the tensors of ``args`` through the hook Function."""
        def fn(grad_fn):
            self._set_user_hook(grad_fn)
        res, input_idx = self._apply_on_tensors(fn, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        """Route the module's output tensor(s) through the hook Function."""
        def fn(grad_fn):
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        if not isinstance(hook_grad_outputs, (tuple, list)):
                            hook_grad_outputs = (hook_grad_outputs,)
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError("Backward pre hook returned an invalid number of "
                                               f"grad_output, got {actual_len}, but expected "
                                               f"{expected_len}")
                        self.grad_outputs = tuple(hook_grad_outputs)
                local_grad_outputs = self.grad_outputs
                # no input requires grad: call the user hooks here
                if self.input_tensors_index is None:
                    # torch warns from C++: at the user's backward() line
                    warn_at_caller("Full backward hook is firing when gradients are computed "
                                   "with respect to module outputs since no inputs require "
                                   "gradients. See https://docs.pytorch.org/docs/main/generated/"
                                   "torch.nn.Module.html#torch.nn.Module."
                                   "register_full_backward_hook for more details.")
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and
                                                    all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires "
                                               "gradient should always return None or None for "
                                               "all gradients.")
                    self.grad_outputs = None
                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None
            grad_fn.register_hook(hook)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        if not is_tuple:
            res = res[0]
        return res


BackwardHookFunction.__module__ = "ptcore.nn.modules._functions"
