"""``ptcore._dynamo.config``: the settings of torch's graph capture (``torch._dynamo.config``).

ptcore runs programs eagerly, so these settings change nothing; they exist, with torch's
defaults, so that scripts setting them (``config.suppress_errors = True``,
``config.cache_size_limit = 64``) run unchanged.  As in torch, reading or setting a name
that is not a setting raises ``AttributeError``.
"""
from ptcore._config_module import install_config_module

_DEFAULTS = {
    "verbose": False, "verify_correctness": False, "minimum_call_count": 1,
    "recompile_limit": 8, "accumulated_recompile_limit": 256,
    "skip_code_recursive_on_recompile_limit_hit": True, "fail_on_recompile_limit_hit": False,
    "specialize_int": False, "specialize_float": False, "dynamic_shapes": True,
    "assume_static_by_default": True, "automatic_dynamic_shapes": True,
    "force_parameter_static_shapes": True, "force_nn_module_property_static_shapes": True,
    "allow_ignore_mark_dynamic": False, "guard_nn_modules": True, "suppress_errors": False,
    "replay_record_enabled": False, "rewrite_assert_with_torch_assert": True, "disable": False,
    "cprofile": False, "repro_after": None, "repro_level": 2, "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False, "prefer_deferred_runtime_asserts_over_guards": False,
    "allow_unspec_int_on_nn_module": False, "optimize_ddp": True, "skip_fsdp_guards": True,
    "skip_nnmodule_hook_guards": True, "raise_on_ctx_manager_usage": True, "allow_rnn": False,
    "error_on_recompile": False, "report_guard_failures": True, "trace_numpy": True,
    "inline_inbuilt_nn_modules": True, "log_compilation_metrics": True,
    "capture_autograd_function": True, "capture_func_transforms": True,
    "compiled_autograd": False, "enable_compiler_collectives": False,
    "traceable_tensor_subclasses": set(), "debug_dir_root": "/tmp/torch_compile_debug",
}
# torch's deprecated names of two settings
_ALIASES = {"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"}


install_config_module(__name__, _DEFAULTS, _ALIASES)
