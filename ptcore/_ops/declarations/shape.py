"""Declarations of the shape ops: views, joins and splits, copies in a new layout.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("shape", grad="formula")

op("adjoint", "function method", device="through", grad="inside", jvp="same")
op("alias_copy", "function out", grad="inside", copy_of="alias")
op("argwhere", "function method", grad="none", device="frontend", data_dependent="output")
op("as_strided", "function method inplace", device="through", grad="inside", method_fn=True,
    layout_bound=True, jvp_inplace="same", core_entry="method")
op("as_strided_copy", "function out", grad="inside", copy_of="as_strided")
op("atleast_1d", "function", device="through", grad="inside")
op("atleast_2d", "function", device="through", grad="inside")
op("atleast_3d", "function", device="through", grad="inside")
op("broadcast_shapes", "function", device="through", grad="none")
op("broadcast_tensors", "function", device="through", grad="inside")
op("broadcast_to", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("cat", "function out", autocast="promote", device="frontend")
op("cdist", "function", autocast="fp32", device="through", grad="inside")
op("chunk", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("clone", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", script_tensor=True)
op("column_stack", "function out", grad="inside", device="frontend")
op("concat", "function out", device="frontend")
op("concatenate", "function out", device="frontend")
op("constant_pad_nd", "function", device="through")
op("detach_copy", "function out", grad="inside", copy_of="detach", grad_fallback=True)
op("diag", "function method out", jvp="same", device="frontend")
op("diag_embed", "function method", jvp="same", device="frontend")
op("diagflat", "function method", device="through", jvp="same")
op("diagonal", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("diagonal_copy", "function out", grad="inside", copy_of="diagonal")
op("diagonal_scatter", "function method", device="frontend")
op("dsplit", "function method", device="through", grad="inside", jvp="same")
op("dstack", "function out", grad="inside", device="frontend")
op("expand_copy", "function out", grad="inside", copy_of="expand")
op("flatten", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", script_tensor=True)
op("flip", "function method", jvp="same", device="frontend")
op("fliplr", "function method", jvp="same", device="frontend")
op("flipud", "function method", jvp="same", device="frontend")
op("from_dlpack", "function", device="through", grad="inside")
op("from_numpy", "function", tags="factory", grad="inside")
op("gather", "function method out", jvp="same", device="frontend")
op("geqrf", "function method out", autocast="fp32", grad="inside", device="frontend",
    core_entry="method")
op("hsplit", "function method", device="through", grad="inside", jvp="same")
op("hstack", "function out", grad="inside", device="frontend")
op("index_add", "function method inplace out", tags="nondeterministic", device="frontend",
    jvp_inplace="linear")
op("index_copy", "function method inplace out", tags="nondeterministic", autocast="promote",
   device="frontend", jvp_inplace="linear")
op("index_fill", "function method inplace", device="frontend", jvp_inplace="linear")
op("index_put", "function method inplace", tags="nondeterministic", device="frontend",
    jvp_inplace="linear", core_entry="inplace")
op("index_select", "function method out", jvp="same", device="frontend")
op("is_complex", "function method", tags="metadata", device="through", grad="inside")
op("is_floating_point", "function method", tags="metadata", device="through",
   grad="inside")
op("istft", "function method", device="through", grad="inside", core_entry="method")
op("masked_fill", "function method inplace", device="frontend", jvp_inplace="linear",
    script_tensor=True)
op("masked_scatter", "function method inplace", device="frontend")
op("masked_select", "function method out", jvp="same", device="frontend", data_dependent="output")
op("meshgrid", "function", device="through", grad="inside")
op("moveaxis", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("movedim", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("narrow", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", pure_view=True)
op("narrow_copy", "function method out", device="through", jvp="same")
op("nonzero", "function method out",
   grad="none", jvp="none", device="frontend", data_dependent="output")
op("numel", "function method", tags="metadata", device="through", grad="inside",
   jvp="none")
op("orgqr", "function method out", autocast="fp32", grad="inside", device="frontend",
    core_entry="method")
op("ormqr", "function method out", autocast="fp32", grad="inside", device="frontend",
    core_entry="method")
op("permute", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", script_tensor=True, pure_view=True)
op("permute_copy", "function out", grad="inside", copy_of="permute")
op("put", "function method inplace", tags="nondeterministic", device="frontend")
op("ravel", "function method", device="through", grad="inside", jvp="same")
op("repeat", "method", jvp="same", device="frontend", script_tensor=True)
op("repeat_interleave", "function method", jvp="same", device="frontend")
op("reshape", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", script_tensor=True, pure_view=True)
op("roll", "function method", jvp="same", device="frontend")
op("rot90", "function method", jvp="same", device="frontend")
op("row_stack", "function out", device="through", grad="inside")
op("scatter", "function method inplace out", device="frontend")
op("scatter_add", "function method inplace out", tags="nondeterministic", device="frontend",
    jvp_inplace="linear")
op("scatter_reduce", "function method inplace out", tags="nondeterministic", device="frontend")
op("select", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method", pure_view=True)
op("select_copy", "function out", grad="inside", copy_of="select")
op("select_scatter", "function method", device="frontend")
op("slice_copy", "function out", grad="inside")
op("slice_inverse", "function", grad="inside")
op("slice_scatter", "function method out", device="frontend")
op("split", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("split_copy", "function out", grad="inside", copy_of="split")
op("split_with_sizes", "function method", device="through", grad="inside", jvp="same",
    core_entry="method")
op("split_with_sizes_copy", "function out", grad="inside", copy_of="split")
op("squeeze", "function method inplace", device="through", grad="inside", jvp="same",
    method_fn=True, jvp_inplace="same", core_entry="method", script_tensor=True, pure_view=True)
op("squeeze_copy", "function out", device="through", grad="inside", jvp="same", copy_of="squeeze")
op("stack", "function out", autocast="promote", device="frontend")
op("stft", "function method", autocast="fp32", device="through", grad="inside", core_entry="method")
op("swapaxes", "function method inplace", device="through", grad="inside", jvp="same",
    method_fn=True, jvp_inplace="same", core_entry="method")
op("swapdims", "function method inplace", device="through", grad="inside", jvp="same",
    method_fn=True, jvp_inplace="same", core_entry="method")
op("t", "function method inplace", device="through", grad="inside", jvp="same", method_fn=True,
    jvp_inplace="same", core_entry="method", script_tensor=True, pure_view=True)
op("t_copy", "function out", grad="inside", copy_of="t")
op("take", "function method out", jvp="same", device="frontend")
op("take_along_dim", "function method out", jvp="same", device="frontend")
op("tensor_split", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("tile", "function method", jvp="same", device="frontend")
op("trace", "function method", autocast="fp32", jvp="same", device="frontend")
op("transpose", "function method inplace", device="through", grad="inside", jvp="same",
    method_fn=True, jvp_inplace="same", core_entry="method", script_tensor=True, pure_view=True)
op("transpose_copy", "function out", grad="inside", copy_of="transpose")
op("tril", "function method inplace out", jvp="same", device="frontend")
op("tril_indices", "function", tags="factory", grad="none", default_device=True)
op("triu", "function method inplace out", jvp="same", device="frontend")
op("triu_indices", "function", tags="factory", grad="none", default_device=True)
op("unbind", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("unbind_copy", "function out", grad="inside", copy_of="unbind")
op("unflatten", "function method", device="through", grad="inside", jvp="same", method_fn=True,
    core_entry="method")
op("unfold_copy", "function out", grad="inside", copy_of="unfold")
op("unsafe_chunk", "function method")
op("unsafe_split", "function method")
op("unsafe_split_with_sizes", "function method")
op("unsqueeze", "function method inplace", device="through", grad="inside", jvp="same",
    method_fn=True, jvp_inplace="same", core_entry="method", script_tensor=True, pure_view=True)
op("unsqueeze_copy", "function out", grad="inside", jvp="same", copy_of="unsqueeze")
op("view_as_complex_copy", "function out", grad="inside")
op("view_as_real_copy", "function out", grad="inside")
op("view_copy", "function out", grad="inside", copy_of="view")
op("vsplit", "function method", device="through", grad="inside", jvp="same")
op("vstack", "function out", grad="inside", device="frontend")
