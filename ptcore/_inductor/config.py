"""``ptcore._inductor.config``: torch's Inductor settings most scripts touch, with torch's
defaults (grouped ones under ``triton.``, ``cpp.``, ``trace.``).  They change nothing in
ptcore; reading or setting a name that is not a setting raises ``AttributeError`` as in
torch."""
from ptcore._config_module import install_config_module

_DEFAULTS = {
    "coordinate_descent_tuning": False, "coordinate_descent_check_all_directions": False,
    "max_autotune": False, "max_autotune_gemm": False, "max_autotune_pointwise": False,
    "freezing": False, "fx_graph_cache": True, "fx_graph_remote_cache": None,
    "autotune_local_cache": True, "epilogue_fusion": True, "conv_1x1_as_mm": False,
    "aggressive_fusion": False, "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True,
    "debug": False, "verbose_progress": False, "benchmark_kernel": False,
    "layout_optimization": True, "keep_output_stride": True, "split_reductions": True,
    "allow_buffer_reuse": True, "fallback_random": False, "implicit_fallbacks": True,
    "compile_threads": 2, "shape_padding": True, "comprehensive_padding": True,
    "cpp_wrapper": False, "emulate_precision_casts": False, "unroll_reductions_threshold": 8,
    "size_asserts": True, "nan_asserts": False, "reorder_for_compute_comm_overlap": False,
    "group_fusion": False, "pattern_matcher": True, "b2b_gemm_pass": False,
    "max_fusion_size": 64, "realize_opcount_threshold": None,
    "optimize_scatter_upon_const_tensor": True, "online_softmax": True,
    "score_fusion_memory_threshold": 10, "benchmark_fusion": False, "combo_kernels": False,
    "dce": False, "use_fast_math": False,
    "triton.cudagraphs": False, "triton.cudagraph_trees": True,
    "triton.unique_kernel_names": True, "triton.cudagraph_skip_dynamic_graphs": False,
    "triton.autotune_pointwise": True, "triton.descriptive_names": "original_aten",
    "triton.store_cubin": False, "triton.enable_persistent_tma_matmul": False,
    "triton.max_tiles": None,
    "cpp.threads": -1, "cpp.simdlen": None, "cpp.enable_kernel_profile": False,
    "cpp.dynamic_threads": False,
    "trace.enabled": False,
}

install_config_module(__name__, _DEFAULTS)
