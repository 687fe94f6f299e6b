"""The schemas of PyTorch's ATen operators that ``ptcore.ops.aten`` exposes.

One line per overload, in the order torch lists an op's overloads (its
overload resolution tries them in that order).  The set is ATen's core
operators, the ops named like one of ptcore's public functions (``ptcore.X``,
``Tensor.X``, ``nn.functional.X``, ``linalg_X``, ``special_X``, ``fft_X``) and
the decomposed forms that torch's dispatch modes and FX graphs show
(``_softmax``, ``native_layer_norm``, ``convolution``, ``_to_copy`` ...) and the ones
libraries' tensor subclasses register handlers for (PyG's ``_pin_memory``,
``_sparse_addmm``, ``_sparse_mm_reduce_impl``), with
the overloads whose types ptcore has (no ``Dimname``, ``Storage``, ``Stream``
or TorchScript list ops).  The text is torch 2.13's
``str(torch.ops.aten.<op>.<overload>._schema)`` without the ``aten::`` prefix.
"""

__all__ = ["overload_lines"]

_TEXT = """\
__and__.Scalar(Tensor self, Scalar other) -> Tensor
__and__.Tensor(Tensor self, Tensor other) -> Tensor
__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
__iand__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
__ilshift__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
__ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
__ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
__ior__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
__irshift__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
__irshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
__ixor__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
__ixor__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
__lshift__.Tensor(Tensor self, Tensor other) -> Tensor
__lshift__.Scalar(Tensor self, Scalar other) -> Tensor
__lshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
__lshift__.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
__or__.Tensor(Tensor self, Tensor other) -> Tensor
__or__.Scalar(Tensor self, Scalar other) -> Tensor
__rshift__.Tensor(Tensor self, Tensor other) -> Tensor
__rshift__.Scalar(Tensor self, Scalar other) -> Tensor
__rshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
__rshift__.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
__xor__.Tensor(Tensor self, Tensor other) -> Tensor
__xor__.Scalar(Tensor self, Scalar other) -> Tensor
_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)
_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor
_adaptive_avg_pool2d_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) out) -> Tensor(a!)
_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
_adaptive_avg_pool3d.out(Tensor self, SymInt[3] output_size, *, Tensor(a!) out) -> Tensor(a!)
_assert_async(Tensor self) -> ()
_assert_async.msg(Tensor self, str assert_msg) -> ()
_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor
_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *, Tensor(a!) out) -> Tensor(a!)
_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, int[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled) -> Tensor
_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor
_convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32, *, Tensor(a!) out) -> Tensor(a!)
_efficient_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, SymInt? max_seqlen_q, SymInt? max_seqlen_k, float dropout_p, int custom_mask_type, bool compute_log_sumexp=False, *, float? scale=None, Tensor? seqlen_k=None, int? window_size=None) -> (Tensor output, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, SymInt max_seqlen_batch_q, SymInt max_seqlen_batch_k)
_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)
_embedding_bag.out(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2, Tensor(d!) out3) -> (Tensor(a!), Tensor(b!), Tensor(c!), Tensor(d!))
_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
_fft_c2r.out(Tensor self, int[] dim, int normalization, SymInt last_dim_size, *, Tensor(a!) out) -> Tensor(a!)
_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor
_fft_r2c.out(Tensor self, int[] dim, int normalization, bool onesided, *, Tensor(a!) out) -> Tensor(a!)
_fused_sdp_choice(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> int
_indices(Tensor(a) self) -> Tensor(a)
_local_scalar_dense(Tensor self) -> Scalar
_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)
_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, Tensor(a!) out) -> Tensor(a!)
_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), Tensor(e!), Tensor(f!))
_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))
_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)
_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
_nnz(Tensor self) -> int
_pdist_forward(Tensor self, float p=2.) -> Tensor
_pdist_forward.out(Tensor self, float p=2., *, Tensor(a!) out) -> Tensor(a!)
_pin_memory(Tensor self, Device? device=None) -> Tensor
_pin_memory.out(Tensor self, Device? device=None, *, Tensor(a!) out) -> Tensor(a!)
_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)
_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)
_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)
_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
_sparse_addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
_sparse_mm(Tensor sparse, Tensor dense) -> Tensor
_sparse_mm_reduce_impl(Tensor self, Tensor other, str reduce) -> (Tensor, Tensor)
_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor
_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
_to_dense(Tensor self, ScalarType? dtype=None, bool? masked_grad=None) -> Tensor
_unsafe_index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
_unsafe_index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor
_unsafe_index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
_unsafe_index_put.hacked_twin(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor
_unsafe_view(Tensor self, SymInt[] size) -> Tensor
_unsafe_view.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
_values(Tensor(a) self) -> Tensor(a)
abs(Tensor self) -> Tensor
abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
abs_(Tensor(a!) self) -> Tensor(a!)
absolute(Tensor self) -> Tensor
absolute.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
absolute_(Tensor(a!) self) -> Tensor(a!)
acos(Tensor self) -> Tensor
acos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
acos_(Tensor(a!) self) -> Tensor(a!)
acosh(Tensor self) -> Tensor
acosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
acosh_(Tensor(a!) self) -> Tensor(a!)
adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor
adaptive_avg_pool1d.out(Tensor self, int[1] output_size, *, Tensor(a!) out) -> Tensor(a!)
adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)
adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
adaptive_avg_pool3d.out(Tensor self, SymInt[3] output_size, *, Tensor(a!) out) -> Tensor(a!)
adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)
adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)
add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)
addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)
addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
addmm.dtype_out(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
addmm.dtype(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addr.out(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
adjoint(Tensor(a) self) -> Tensor(a)
alias(Tensor(a) self) -> Tensor(a)
alias_copy(Tensor self) -> Tensor
alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
all(Tensor self) -> Tensor
all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor
all.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
all.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False) -> bool
alpha_dropout(Tensor input, float p, bool train) -> Tensor
alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)
amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)
angle(Tensor self) -> Tensor
angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
any(Tensor self) -> Tensor
any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor
any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)
arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)
arccos(Tensor self) -> Tensor
arccos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arccos_(Tensor(a!) self) -> Tensor(a!)
arccosh(Tensor self) -> Tensor
arccosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arccosh_(Tensor(a!) self) -> Tensor(a!)
arcsin(Tensor self) -> Tensor
arcsin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arcsin_(Tensor(a!) self) -> Tensor(a!)
arcsinh(Tensor self) -> Tensor
arcsinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arcsinh_(Tensor(a!) self) -> Tensor(a!)
arctan(Tensor self) -> Tensor
arctan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arctan2(Tensor self, Tensor other) -> Tensor
arctan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
arctan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)
arctan_(Tensor(a!) self) -> Tensor(a!)
arctanh(Tensor self) -> Tensor
arctanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
arctanh_(Tensor(a!) self) -> Tensor(a!)
argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor
argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor
argsort.stable_out(Tensor self, *, bool stable, int dim=-1, bool descending=False, Tensor(a!) out) -> Tensor(a!)
argwhere(Tensor self) -> Tensor
as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)
as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor
as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, *, Tensor(a!) out) -> Tensor(a!)
as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor
as_strided_scatter.out(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, *, Tensor(a!) out) -> Tensor(a!)
as_tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None) -> Tensor
as_tensor.float(float t, *, ScalarType? dtype=None, Device? device=None) -> Tensor
as_tensor.int(int t, *, ScalarType? dtype=None, Device? device=None) -> Tensor
as_tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None) -> Tensor
as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)
asin(Tensor self) -> Tensor
asin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
asin_(Tensor(a!) self) -> Tensor(a!)
asinh(Tensor self) -> Tensor
asinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
asinh_(Tensor(a!) self) -> Tensor(a!)
atan(Tensor self) -> Tensor
atan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
atan2(Tensor self, Tensor other) -> Tensor
atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)
atan_(Tensor(a!) self) -> Tensor(a!)
atanh(Tensor self) -> Tensor
atanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
atanh_(Tensor(a!) self) -> Tensor(a!)
atleast_1d(Tensor self) -> Tensor
atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]
atleast_2d(Tensor self) -> Tensor
atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]
atleast_3d(Tensor self) -> Tensor
atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]
avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor
avg_pool1d.out(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True, *, Tensor(a!) out) -> Tensor(a!)
avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)
avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
backward(Tensor self, Tensor? gradient=None, bool? retain_graph=None, bool create_graph=False) -> ()
backward.TensorList(Tensor[] tensors, Tensor?[]? grad_tensors=None, bool? retain_graph=None, bool create_graph=False) -> ()
baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
baddbmm.dtype_out(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
baddbmm.dtype(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor
baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
bartlett_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
bartlett_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
bartlett_window.out(int window_length, *, Tensor(a!) out) -> Tensor(a!)
bartlett_window.periodic_out(int window_length, bool periodic, *, Tensor(a!) out) -> Tensor(a!)
batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor
bernoulli(Tensor self, *, Generator? generator=None) -> Tensor
bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor
bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor
bernoulli.Tensor_out(Tensor self, Tensor p, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
bernoulli.float_out(Tensor self, float p=0.5, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)
bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
binary_cross_entropy.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor
binary_cross_entropy_with_logits.out(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor
bincount.out(Tensor self, Tensor? weights=None, SymInt minlength=0, *, Tensor(a!) out) -> Tensor(a!)
binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor
binomial.out(Tensor count, Tensor prob, Generator? generator=None, *, Tensor(a!) out) -> Tensor(a!)
bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor
bitwise_and.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_and.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_and.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_and_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_and_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor
bitwise_left_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
bitwise_left_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_left_shift.Tensor_Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_left_shift.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_left_shift_.Tensor_Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
bitwise_left_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_not(Tensor self) -> Tensor
bitwise_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
bitwise_not_(Tensor(a!) self) -> Tensor(a!)
bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor
bitwise_or.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_or.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_or.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_or_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_or_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor
bitwise_right_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
bitwise_right_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_right_shift.Tensor_Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_right_shift.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_right_shift_.Tensor_Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
bitwise_right_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor
bitwise_xor.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_xor.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_xor.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
bitwise_xor_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_xor_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
blackman_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
blackman_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
blackman_window.out(int window_length, *, Tensor(a!) out) -> Tensor(a!)
blackman_window.periodic_out(int window_length, bool periodic, *, Tensor(a!) out) -> Tensor(a!)
block_diag(Tensor[] tensors) -> Tensor
block_diag.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
bmm(Tensor self, Tensor mat2) -> Tensor
bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
bmm.dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)
bmm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor
broadcast_tensors(Tensor[] tensors) -> Tensor[]
broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)
bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
bucketize.Tensor_out(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor(a!) out) -> Tensor(a!)
bucketize.Scalar_out(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor(a!) out) -> Tensor(a!)
cartesian_prod(Tensor[] tensors) -> Tensor
cat(Tensor[] tensors, int dim=0) -> Tensor
cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
cauchy_(Tensor(a!) self, float median=0., float sigma=1., *, Generator? generator=None) -> Tensor(a!)
ccol_indices(Tensor(a) self) -> Tensor(a)
cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor
ceil(Tensor self) -> Tensor
ceil.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
ceil_(Tensor(a!) self) -> Tensor(a!)
celu(Tensor self, Scalar alpha=1.) -> Tensor
celu.out(Tensor self, Scalar alpha=1., *, Tensor(a!) out) -> Tensor(a!)
celu_(Tensor(a!) self, Scalar alpha=1.) -> Tensor(a!)
chain_matmul(Tensor[] matrices) -> Tensor
chain_matmul.out(Tensor[] matrices, *, Tensor(a!) out) -> Tensor(a!)
chalf(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
channel_shuffle(Tensor self, SymInt groups) -> Tensor
channel_shuffle.out(Tensor self, SymInt groups, *, Tensor(a!) out) -> Tensor(a!)
cholesky(Tensor self, bool upper=False) -> Tensor
cholesky.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
cholesky_inverse(Tensor self, bool upper=False) -> Tensor
cholesky_inverse.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor
cholesky_solve.out(Tensor self, Tensor input2, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)
clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)
clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)
clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)
clamp_max(Tensor self, Scalar max) -> Tensor
clamp_max.Tensor(Tensor self, Tensor max) -> Tensor
clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)
clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)
clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)
clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)
clamp_min(Tensor self, Scalar min) -> Tensor
clamp_min.Tensor(Tensor self, Tensor min) -> Tensor
clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)
clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)
clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)
clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)
clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
clip.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)
clip.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)
clip_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)
clip_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)
clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
coalesce(Tensor(a) self) -> Tensor(a)
col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)
col_indices(Tensor(a) self) -> Tensor(a)
column_stack(Tensor[] tensors) -> Tensor
column_stack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor
complex(Tensor real, Tensor imag) -> Tensor
complex.out(Tensor real, Tensor imag, *, Tensor(a!) out) -> Tensor(a!)
concat(Tensor[] tensors, int dim=0) -> Tensor
concat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
concatenate(Tensor[] tensors, int dim=0) -> Tensor
concatenate.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
conj(Tensor(a) self) -> Tensor(a)
conj_physical(Tensor self) -> Tensor
conj_physical.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
conj_physical_(Tensor(a!) self) -> Tensor(a!)
constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) -> Tensor(a!)
contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)
conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor
conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], str padding="valid", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor
conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding="valid", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor
conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], str padding="valid", SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor
conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor
conv_tbc.out(Tensor self, Tensor weight, Tensor bias, int pad=0, *, Tensor(a!) out) -> Tensor(a!)
conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor
conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor
conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor
convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, *, Tensor(a!) out) -> Tensor(a!)
convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) -> Tensor(a!)
copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
copy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
copy_.int(Tensor(a!) self, int other) -> Tensor(a!)
copy_.float(Tensor(a!) self, float other) -> Tensor(a!)
copysign.Tensor(Tensor self, Tensor other) -> Tensor
copysign.Scalar(Tensor self, Scalar other) -> Tensor
copysign.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
corrcoef(Tensor self) -> Tensor
cos(Tensor self) -> Tensor
cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
cos_(Tensor(a!) self) -> Tensor(a!)
cosh(Tensor self) -> Tensor
cosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
cosh_(Tensor(a!) self) -> Tensor(a!)
cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
count_nonzero(Tensor self, int? dim=None) -> Tensor
count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor
count_nonzero.dim_IntList_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)
count_nonzero.out(Tensor self, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)
cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor
cpu(Tensor(a) self) -> Tensor(b|a)
cross(Tensor self, Tensor other, int? dim=None) -> Tensor
cross.out(Tensor self, Tensor other, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)
cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor
crow_indices(Tensor(a) self) -> Tensor(a)
ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor
ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor
cuda(Tensor(a) self) -> Tensor(b|a)
cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
cummax.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
cummin.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)
cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)
cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor
deg2rad(Tensor self) -> Tensor
deg2rad.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
deg2rad_(Tensor(a!) self) -> Tensor(a!)
dense_dim(Tensor self) -> int
det(Tensor self) -> Tensor
detach(Tensor(a) self) -> Tensor(a)
detach_(Tensor(a!) self) -> Tensor(a!)
detach_copy(Tensor self) -> Tensor
detach_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
diag(Tensor self, int diagonal=0) -> Tensor
diag.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor
diag_embed.out(Tensor self, int offset=0, int dim1=-2, int dim2=-1, *, Tensor(a!) out) -> Tensor(a!)
diagflat(Tensor self, int offset=0) -> Tensor
diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor
diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) -> Tensor(a!)
diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor
diagonal_scatter.out(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) -> Tensor(a!)
diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor
diff.out(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor(a!) out) -> Tensor(a!)
digamma(Tensor self) -> Tensor
digamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
digamma_(Tensor(a!) self) -> Tensor(a!)
dim(Tensor self) -> int
dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
dist.out(Tensor self, Tensor other, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)
div.Tensor(Tensor self, Tensor other) -> Tensor
div.Scalar(Tensor self, Scalar other) -> Tensor
div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor
div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)
div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)
div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)
div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)
divide.Tensor(Tensor self, Tensor other) -> Tensor
divide.Scalar(Tensor self, Scalar other) -> Tensor
divide.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
divide.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor
divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
divide.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)
divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
divide_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)
divide_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)
divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
dot(Tensor self, Tensor tensor) -> Tensor
dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)
dropout(Tensor input, float p, bool train) -> Tensor
dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)
dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
dsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]
dstack(Tensor[] tensors) -> Tensor
dstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
element_size(Tensor self) -> int
elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor(a!) out) -> Tensor(a!)
elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)
embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out) -> Tensor(a!)
embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)
embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)
embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor
embedding_dense_backward.out(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq, *, Tensor(a!) out) -> Tensor(a!)
embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)
empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
empty_permuted.out(SymInt[] size, int[] physical_layout, *, Tensor(a!) out) -> Tensor(a!)
empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
empty_strided.out(SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)
eq.Tensor(Tensor self, Tensor other) -> Tensor
eq.Scalar(Tensor self, Scalar other) -> Tensor
eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
eq.Tensor_list(Tensor[] a, Tensor[] b) -> bool
eq_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
eq_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
equal(Tensor self, Tensor other) -> bool
erf(Tensor self) -> Tensor
erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
erf_(Tensor(a!) self) -> Tensor(a!)
erfc(Tensor self) -> Tensor
erfc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
erfc_(Tensor(a!) self) -> Tensor(a!)
erfinv(Tensor self) -> Tensor
erfinv.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
erfinv_(Tensor(a!) self) -> Tensor(a!)
exp(Tensor self) -> Tensor
exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
exp2(Tensor self) -> Tensor
exp2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
exp2_(Tensor(a!) self) -> Tensor(a!)
exp_(Tensor(a!) self) -> Tensor(a!)
expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
expand_as(Tensor(a) self, Tensor other) -> Tensor(a)
expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor
expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) -> Tensor(a!)
expm1(Tensor self) -> Tensor
expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
expm1_(Tensor(a!) self) -> Tensor(a!)
exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)
eye(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
eye.m(SymInt n, SymInt m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)
eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)
feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor
feature_alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)
feature_dropout(Tensor input, float p, bool train) -> Tensor
feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)
fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_fft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_fft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_fftfreq(int n, float d=1., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
fft_fftfreq.out(int n, float d=1., *, Tensor(a!) out) -> Tensor(a!)
fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_fftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor
fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_hfft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_hfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_hfft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_hfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_hfftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_ifft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_ifft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_ifftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor
fft_ihfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_ihfft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ihfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_ihfft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_ihfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_ihfftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_irfft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_irfft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_irfftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_rfft.out(Tensor self, SymInt? n=None, int dim=-1, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_rfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
fft_rfft2.out(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fft_rfftfreq(int n, float d=1., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
fft_rfftfreq.out(int n, float d=1., *, Tensor(a!) out) -> Tensor(a!)
fft_rfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_rfftn.out(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor(a!) out) -> Tensor(a!)
fill.Scalar(Tensor self, Scalar value) -> Tensor
fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
fill.Tensor(Tensor self, Tensor value) -> Tensor
fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out) -> Tensor(a!)
fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)
fix(Tensor self) -> Tensor
fix.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
fix_(Tensor(a!) self) -> Tensor(a!)
flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
flip(Tensor self, int[] dims) -> Tensor
flip.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)
fliplr(Tensor self) -> Tensor
flipud(Tensor self) -> Tensor
float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
float_power.Scalar(Scalar self, Tensor exponent) -> Tensor
float_power.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
float_power.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
float_power.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)
float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)
float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)
floor(Tensor self) -> Tensor
floor.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
floor_(Tensor(a!) self) -> Tensor(a!)
floor_divide(Tensor self, Tensor other) -> Tensor
floor_divide.Scalar(Tensor self, Scalar other) -> Tensor
floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
floor_divide.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
fmax(Tensor self, Tensor other) -> Tensor
fmax.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
fmin(Tensor self, Tensor other) -> Tensor
fmin.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
fmod.Tensor(Tensor self, Tensor other) -> Tensor
fmod.Scalar(Tensor self, Scalar other) -> Tensor
fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
fmod_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
frac(Tensor self) -> Tensor
frac.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
frac_(Tensor(a!) self) -> Tensor(a!)
fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> (Tensor, Tensor)
fractional_max_pool2d.output(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> (Tensor, Tensor)
fractional_max_pool3d.output(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) -> (Tensor(a!) mantissa, Tensor(b!) exponent)
frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
frobenius_norm.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)
full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)
gcd(Tensor self, Tensor other) -> Tensor
gcd.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
gcd_(Tensor(a!) self, Tensor other) -> Tensor(a!)
ge.Tensor(Tensor self, Tensor other) -> Tensor
ge.Scalar(Tensor self, Scalar other) -> Tensor
ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
ge_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
ge_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
gelu(Tensor self, *, str approximate="none") -> Tensor
gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out) -> Tensor(a!)
gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor
gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate="none", Tensor(a!) grad_input) -> Tensor(a!)
geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)
geqrf(Tensor self) -> (Tensor a, Tensor tau)
geqrf.a(Tensor self, *, Tensor(a!) a, Tensor(b!) tau) -> (Tensor(a!) a, Tensor(b!) tau)
ger(Tensor self, Tensor vec2) -> Tensor
ger.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)
get_device(Tensor self) -> int
glu(Tensor self, int dim=-1) -> Tensor
glu.out(Tensor self, int dim=-1, *, Tensor(a!) out) -> Tensor(a!)
gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, int edge_order=1) -> Tensor[]
gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, int edge_order=1) -> Tensor[]
gradient.array(Tensor self, *, int[] dim, int edge_order=1) -> Tensor[]
gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, int edge_order=1) -> Tensor[]
gradient.scalarrayarray(Tensor self, *, Scalar[] spacing, int[] dim, int edge_order=1) -> Tensor[]
gradient.tensorarrayint(Tensor self, *, Tensor[] spacing, int? dim=None, int edge_order=1) -> Tensor[]
gradient.tensorarray(Tensor self, *, Tensor[] spacing, int[] dim, int edge_order=1) -> Tensor[]
greater.Tensor(Tensor self, Tensor other) -> Tensor
greater.Scalar(Tensor self, Scalar other) -> Tensor
greater.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
greater.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
greater_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
greater_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
greater_equal.Tensor(Tensor self, Tensor other) -> Tensor
greater_equal.Scalar(Tensor self, Scalar other) -> Tensor
greater_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
greater_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
greater_equal_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
greater_equal_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, *, Tensor(a!) out) -> Tensor(a!)
group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor
gt.Tensor(Tensor self, Tensor other) -> Tensor
gt.Scalar(Tensor self, Scalar other) -> Tensor
gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
gt_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
gt_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
hamming_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hamming_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hamming_window.periodic_alpha(int window_length, bool periodic, float alpha, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hamming_window.periodic_alpha_beta(int window_length, bool periodic, float alpha, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hamming_window.out(int window_length, *, Tensor(a!) out) -> Tensor(a!)
hamming_window.periodic_out(int window_length, bool periodic, *, Tensor(a!) out) -> Tensor(a!)
hamming_window.periodic_alpha_out(int window_length, bool periodic, float alpha, *, Tensor(a!) out) -> Tensor(a!)
hamming_window.periodic_alpha_beta_out(int window_length, bool periodic, float alpha, float beta, *, Tensor(a!) out) -> Tensor(a!)
hann_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hann_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
hann_window.out(int window_length, *, Tensor(a!) out) -> Tensor(a!)
hann_window.periodic_out(int window_length, bool periodic, *, Tensor(a!) out) -> Tensor(a!)
hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor
hardshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)
hardsigmoid(Tensor self) -> Tensor
hardsigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
hardswish(Tensor self) -> Tensor
hardswish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> Tensor(a!)
hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
heaviside(Tensor self, Tensor values) -> Tensor
heaviside.out(Tensor self, Tensor values, *, Tensor(a!) out) -> Tensor(a!)
heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)
hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor
histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor
histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) -> Tensor(a!)
histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)
histogram.bins_tensor_out(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False, Tensor(a!) hist, Tensor(b!) bin_edges) -> (Tensor(a!) hist, Tensor(b!) bin_edges)
histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)
histogram.bin_ct_out(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False, Tensor(a!) hist, Tensor(b!) bin_edges) -> (Tensor(a!) hist, Tensor(b!) bin_edges)
histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)
histogramdd.int_bins(Tensor self, int bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)
histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)
hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
hsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]
hstack(Tensor[] tensors) -> Tensor
hstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor
huber_loss.out(Tensor self, Tensor target, int reduction=1, float delta=1., *, Tensor(a!) out) -> Tensor(a!)
hypot(Tensor self, Tensor other) -> Tensor
hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
hypot_(Tensor(a!) self, Tensor other) -> Tensor(a!)
i0(Tensor self) -> Tensor
i0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
i0_(Tensor(a!) self) -> Tensor(a!)
igamma(Tensor self, Tensor other) -> Tensor
igamma.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
igamma_(Tensor(a!) self, Tensor other) -> Tensor(a!)
igammac(Tensor self, Tensor other) -> Tensor
igammac.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
igammac_(Tensor(a!) self, Tensor other) -> Tensor(a!)
imag(Tensor(a) self) -> Tensor(a)
index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)
index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor
index.list_Tensor(Tensor[] self, Tensor el) -> int
index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor
index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)
index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) -> Tensor(a!)
index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)
index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor
index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
index_fill.int_Scalar_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
index_fill.int_Tensor_out(Tensor self, int dim, Tensor index, Tensor value, *, Tensor(a!) out) -> Tensor(a!)
index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)
index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)
index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, *, Tensor(a!) out) -> Tensor(a!)
index_put.hacked_twin(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor
index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
index_put_.hacked_twin(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor
index_reduce.out(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True, Tensor(a!) out) -> Tensor(a!)
index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor(a!)
index_select(Tensor self, int dim, Tensor index) -> Tensor
index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)
indices(Tensor(a) self) -> Tensor(a)
inner(Tensor self, Tensor other) -> Tensor
inner.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor
inverse(Tensor self) -> Tensor
inverse.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
is_coalesced(Tensor self) -> bool
is_complex(Tensor self) -> bool
is_conj(Tensor self) -> bool
is_contiguous(Tensor self) -> bool
is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) -> bool
is_distributed(Tensor self) -> bool
is_floating_point(Tensor self) -> bool
is_inference(Tensor self) -> bool
is_neg(Tensor self) -> bool
is_non_overlapping_and_dense(Tensor self) -> bool
is_nonzero(Tensor self) -> bool
is_pinned(Tensor self, Device? device=None) -> bool
is_same_size(Tensor self, Tensor other) -> bool
is_set_to(Tensor self, Tensor tensor) -> bool
is_signed(Tensor self) -> bool
isclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False) -> Tensor
isfinite(Tensor self) -> Tensor
isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor
isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) -> Tensor
isin.Tensor_Scalar_out(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor
isin.Scalar_Tensor_out(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
isinf(Tensor self) -> Tensor
isinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
isnan(Tensor self) -> Tensor
isnan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
isneginf(Tensor self) -> Tensor
isneginf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
isposinf(Tensor self) -> Tensor
isposinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
isreal(Tensor self) -> Tensor
istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor
item(Tensor self) -> Scalar
kaiser_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
kaiser_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
kaiser_window.beta(int window_length, bool periodic, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
kaiser_window.out(int window_length, *, Tensor(a!) out) -> Tensor(a!)
kaiser_window.periodic_out(int window_length, bool periodic, *, Tensor(a!) out) -> Tensor(a!)
kaiser_window.beta_out(int window_length, bool periodic, float beta, *, Tensor(a!) out) -> Tensor(a!)
kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor
kron(Tensor self, Tensor other) -> Tensor
kron.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
kthvalue.values(Tensor self, SymInt k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor
lcm(Tensor self, Tensor other) -> Tensor
lcm.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
lcm_(Tensor(a!) self, Tensor other) -> Tensor(a!)
ldexp.Tensor(Tensor self, Tensor other) -> Tensor
ldexp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)
le.Tensor(Tensor self, Tensor other) -> Tensor
le.Scalar(Tensor self, Scalar other) -> Tensor
le.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
le.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
le_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
le_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> Tensor(a!)
leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)
lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor
lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor
lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)
lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)
lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)
lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)
less.Tensor(Tensor self, Tensor other) -> Tensor
less.Scalar(Tensor self, Scalar other) -> Tensor
less.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
less.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
less_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
less_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
less_equal.Tensor(Tensor self, Tensor other) -> Tensor
less_equal.Scalar(Tensor self, Scalar other) -> Tensor
less_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
less_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
less_equal_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
less_equal_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
lgamma(Tensor self) -> Tensor
lgamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
lgamma_(Tensor(a!) self) -> Tensor(a!)
lift(Tensor self) -> Tensor
lift.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
lift_fresh(Tensor(a) self) -> Tensor(a)
lift_fresh_copy(Tensor self) -> Tensor
lift_fresh_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor
linalg_cholesky.out(Tensor self, *, bool upper=False, Tensor(a!) out) -> Tensor(a!)
linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)
linalg_cholesky_ex.L(Tensor self, *, bool upper=False, bool check_errors=False, Tensor(a!) L, Tensor(b!) info) -> (Tensor(a!) L, Tensor(b!) info)
linalg_cond(Tensor self, Scalar? p=None) -> Tensor
linalg_cond.p_str(Tensor self, str p) -> Tensor
linalg_cond.out(Tensor self, Scalar? p=None, *, Tensor(a!) out) -> Tensor(a!)
linalg_cond.p_str_out(Tensor self, str p, *, Tensor(a!) out) -> Tensor(a!)
linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
linalg_cross.out(Tensor self, Tensor other, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)
linalg_det(Tensor A) -> Tensor
linalg_det.out(Tensor A, *, Tensor(a!) out) -> Tensor(a!)
linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)
linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)
linalg_eig.out(Tensor self, *, Tensor(a!) eigenvalues, Tensor(b!) eigenvectors) -> (Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)
linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)
linalg_eigh.eigvals(Tensor self, str UPLO="L", *, Tensor(a!) eigvals, Tensor(b!) eigvecs) -> (Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)
linalg_eigvals(Tensor self) -> Tensor
linalg_eigvals.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor
linalg_eigvalsh.out(Tensor self, str UPLO="L", *, Tensor(a!) out) -> Tensor(a!)
linalg_householder_product(Tensor input, Tensor tau) -> Tensor
linalg_householder_product.out(Tensor input, Tensor tau, *, Tensor(a!) out) -> Tensor(a!)
linalg_inv(Tensor A) -> Tensor
linalg_inv.out(Tensor A, *, Tensor(a!) out) -> Tensor(a!)
linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)
linalg_inv_ex.inverse(Tensor A, *, bool check_errors=False, Tensor(a!) inverse, Tensor(b!) info) -> (Tensor(a!) inverse, Tensor(b!) info)
linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)
linalg_ldl_factor.out(Tensor self, *, bool hermitian=False, Tensor(a!) LD, Tensor(b!) pivots) -> (Tensor(a!) LD, Tensor(b!) pivots)
linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, Tensor pivots, Tensor info)
linalg_ldl_factor_ex.out(Tensor self, *, bool hermitian=False, bool check_errors=False, Tensor(a!) LD, Tensor(b!) pivots, Tensor(c!) info) -> (Tensor(a!) LD, Tensor(b!) pivots, Tensor(c!) info)
linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor
linalg_ldl_solve.out(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)
linalg_lstsq.out(Tensor self, Tensor b, float? rcond=None, *, str? driver=None, Tensor(a!) solution, Tensor(b!) residuals, Tensor(c!) rank, Tensor(d!) singular_values) -> (Tensor(a!) solution, Tensor(b!) residuals, Tensor(c!) rank, Tensor(d!) singular_values)
linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)
linalg_lu.out(Tensor A, *, bool pivot=True, Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) P, Tensor(b!) L, Tensor(c!) U)
linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)
linalg_lu_factor.out(Tensor A, *, bool pivot=True, Tensor(a!) LU, Tensor(b!) pivots) -> (Tensor(a!) LU, Tensor(b!) pivots)
linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots, Tensor info)
linalg_lu_factor_ex.out(Tensor A, *, bool pivot=True, bool check_errors=False, Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info) -> (Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info)
linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor
linalg_lu_solve.out(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_exp(Tensor self) -> Tensor
linalg_matrix_exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
linalg_matrix_norm.str_ord(Tensor self, str ord="fro", int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
linalg_matrix_norm.out(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_norm.str_ord_out(Tensor self, str ord="fro", int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_power(Tensor self, int n) -> Tensor
linalg_matrix_power.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor
linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor
linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor
linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor
linalg_matrix_rank.atol_rtol_tensor_out(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_rank.atol_rtol_float_out(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_rank.out(Tensor self, float tol, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)
linalg_matrix_rank.out_tol_tensor(Tensor input, Tensor tol, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)
linalg_multi_dot(Tensor[] tensors) -> Tensor
linalg_multi_dot.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
linalg_norm.out(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
linalg_norm.ord_str_out(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor
linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor
linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor
linalg_pinv.atol_rtol_tensor_out(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
linalg_pinv.atol_rtol_float_out(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
linalg_pinv.out(Tensor self, float rcond, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)
linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor
linalg_pinv.out_rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)
linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
linalg_qr.out(Tensor A, str mode="reduced", *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, Tensor(b!) R)
linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)
linalg_slogdet.out(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet) -> (Tensor(a!) sign, Tensor(b!) logabsdet)
linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor
linalg_solve.out(Tensor A, Tensor B, *, bool left=True, Tensor(a!) out) -> Tensor(a!)
linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)
linalg_solve_ex.out(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, Tensor(a!) result, Tensor(b!) info) -> (Tensor(a!) result, Tensor(b!) info)
linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> Tensor
linalg_solve_triangular.out(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False, Tensor(a!) out) -> Tensor(a!)
linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)
linalg_svd.U(Tensor A, bool full_matrices=True, *, str? driver=None, Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh)
linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor
linalg_svdvals.out(Tensor A, *, str? driver=None, Tensor(a!) out) -> Tensor(a!)
linalg_tensorinv(Tensor self, int ind=2) -> Tensor
linalg_tensorinv.out(Tensor self, int ind=2, *, Tensor(a!) out) -> Tensor(a!)
linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor
linalg_tensorsolve.out(Tensor self, Tensor other, int[]? dims=None, *, Tensor(a!) out) -> Tensor(a!)
linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor
linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor
linalg_vecdot.out(Tensor x, Tensor y, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)
linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)
linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
linspace.Tensor_Scalar(Tensor start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
linspace.Scalar_Tensor(Scalar start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)
linspace.Tensor_Tensor_out(Tensor start, Tensor end, int steps, *, Tensor(a!) out) -> Tensor(a!)
linspace.Tensor_Scalar_out(Tensor start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)
linspace.Scalar_Tensor_out(Scalar start, Tensor end, int steps, *, Tensor(a!) out) -> Tensor(a!)
log(Tensor self) -> Tensor
log.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
log10(Tensor self) -> Tensor
log10.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
log10_(Tensor(a!) self) -> Tensor(a!)
log1p(Tensor self) -> Tensor
log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
log1p_(Tensor(a!) self) -> Tensor(a!)
log2(Tensor self) -> Tensor
log2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
log2_(Tensor(a!) self) -> Tensor(a!)
log_(Tensor(a!) self) -> Tensor(a!)
log_normal_(Tensor(a!) self, float mean=1., float std=2., *, Generator? generator=None) -> Tensor(a!)
log_sigmoid(Tensor self) -> Tensor
log_sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor
log_sigmoid_backward.grad_input(Tensor grad_output, Tensor self, Tensor buffer, *, Tensor(a!) grad_input) -> Tensor(a!)
log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)
log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> (Tensor(a!), Tensor(b!))
log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
log_softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)
logaddexp(Tensor self, Tensor other) -> Tensor
logaddexp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
logaddexp2(Tensor self, Tensor other) -> Tensor
logaddexp2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
logcumsumexp(Tensor self, int dim) -> Tensor
logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
logdet(Tensor self) -> Tensor
logical_and(Tensor self, Tensor other) -> Tensor
logical_and.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
logical_and_(Tensor(a!) self, Tensor other) -> Tensor(a!)
logical_not(Tensor self) -> Tensor
logical_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
logical_not_(Tensor(a!) self) -> Tensor(a!)
logical_or(Tensor self, Tensor other) -> Tensor
logical_or.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)
logical_xor(Tensor self, Tensor other) -> Tensor
logical_xor.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
logical_xor_(Tensor(a!) self, Tensor other) -> Tensor(a!)
logit(Tensor self, float? eps=None) -> Tensor
logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)
logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)
logspace.Tensor_Tensor(Tensor start, Tensor end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
logspace.Tensor_Scalar(Tensor start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
logspace.Scalar_Tensor(Scalar start, Tensor end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) -> Tensor(a!)
logspace.Tensor_Tensor_out(Tensor start, Tensor end, int steps, float base=10., *, Tensor(a!) out) -> Tensor(a!)
logspace.Tensor_Scalar_out(Tensor start, Scalar end, int steps, float base=10., *, Tensor(a!) out) -> Tensor(a!)
logspace.Scalar_Tensor_out(Scalar start, Tensor end, int steps, float base=10., *, Tensor(a!) out) -> Tensor(a!)
logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
lt.Tensor(Tensor self, Tensor other) -> Tensor
lt.Scalar(Tensor self, Scalar other) -> Tensor
lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
lt_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
lt_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor
lu_solve.out(Tensor self, Tensor LU_data, Tensor LU_pivots, *, Tensor(a!) out) -> Tensor(a!)
lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)
lu_unpack.out(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) P, Tensor(b!) L, Tensor(c!) U)
margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor
masked_fill.Tensor_out(Tensor self, Tensor mask, Tensor value, *, Tensor(a!) out) -> Tensor(a!)
masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)
masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out) -> Tensor(a!)
masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)
masked_select(Tensor self, Tensor mask) -> Tensor
masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)
matmul(Tensor self, Tensor other) -> Tensor
matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
matrix_exp(Tensor self) -> Tensor
matrix_power(Tensor self, int n) -> Tensor
matrix_power.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)
max.other(Tensor self, Tensor other) -> Tensor
max(Tensor self) -> Tensor
max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
max.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor
max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)
max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor
max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor
max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor
max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor
max_unpool2d.out(Tensor self, Tensor indices, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)
max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor
max_unpool3d.out(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding, *, Tensor(a!) out) -> Tensor(a!)
maximum(Tensor self, Tensor other) -> Tensor
maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
median(Tensor self) -> Tensor
median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
median.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
meshgrid(Tensor[] tensors) -> Tensor[]
meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]
min.other(Tensor self, Tensor other) -> Tensor
min(Tensor self) -> Tensor
min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)
min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
min.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
minimum(Tensor self, Tensor other) -> Tensor
minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
mish(Tensor self) -> Tensor
mish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
mm(Tensor self, Tensor mat2) -> Tensor
mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
mm.dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)
mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor
mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)
moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)
movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)
movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)
mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
msort(Tensor self) -> Tensor
msort.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
mul.Tensor(Tensor self, Tensor other) -> Tensor
mul.Scalar(Tensor self, Scalar other) -> Tensor
mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1) -> Tensor
multi_margin_loss.out(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
multilabel_margin_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor
multinomial.out(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
multiply.Tensor(Tensor self, Tensor other) -> Tensor
multiply.Scalar(Tensor self, Scalar other) -> Tensor
multiply.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
multiply_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
multiply_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
mv(Tensor self, Tensor vec) -> Tensor
mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)
mvlgamma(Tensor self, int p) -> Tensor
mvlgamma.out(Tensor self, int p, *, Tensor(a!) out) -> Tensor(a!)
mvlgamma_(Tensor(a!) self, int p) -> Tensor(a!)
nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor
nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, Tensor(a!) out) -> Tensor(a!)
nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)
nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
nanmean.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
nanmedian(Tensor self) -> Tensor
nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
nanmedian.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation="linear") -> Tensor
nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation="linear") -> Tensor
nanquantile.out(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation="linear", Tensor(a!) out) -> Tensor(a!)
nanquantile.scalar_out(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation="linear", Tensor(a!) out) -> Tensor(a!)
nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
nansum.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)
narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)
narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor
narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *, Tensor(a!) out) -> Tensor(a!)
native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
native_batch_norm.out(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))
native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_batch_norm_backward.out(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
native_channel_shuffle(Tensor self, SymInt groups) -> Tensor
native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
native_dropout_backward.out(Tensor grad_output, Tensor mask, float scale, *, Tensor(a!) out) -> Tensor(a!)
native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_group_norm_backward.out(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_layer_norm_backward.out(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
ne.Tensor(Tensor self, Tensor other) -> Tensor
ne.Scalar(Tensor self, Scalar other) -> Tensor
ne.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
ne.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
ne.Tensor_list(Tensor[] a, Tensor[] b) -> bool
ne_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
ne_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
neg(Tensor self) -> Tensor
neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
neg_(Tensor(a!) self) -> Tensor(a!)
negative(Tensor self) -> Tensor
negative.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
negative_(Tensor(a!) self) -> Tensor(a!)
new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_empty.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_empty_strided.out(Tensor self, SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)
new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_full.out(Tensor self, SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)
new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_ones.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_zeros.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
nextafter(Tensor self, Tensor other) -> Tensor
nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)
nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor
nll_loss.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)
nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)
nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))
nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor
nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)
nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)
nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))
nonzero(Tensor self) -> Tensor
nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor
nonzero_static.out(Tensor self, *, SymInt size, int fill_value=-1, Tensor(a!) out) -> Tensor(a!)
norm.Scalar(Tensor self, Scalar p=2) -> Tensor
norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor
norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor
norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)
norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor
norm.ScalarOpt_dtype_out(Tensor self, Scalar? p, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)
norm.Scalar_out(Tensor self, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)
norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor
normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor
normal.Tensor_float_out(Tensor mean, float std=1., *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
normal.float_Tensor_out(float mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor
normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor
normal.Tensor_Tensor_out(Tensor mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
normal.float_float_out(float mean, float std, SymInt[] size, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
normal.out(Tensor self, float mean=0., float std=1., *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)
not_equal.Tensor(Tensor self, Tensor other) -> Tensor
not_equal.Scalar(Tensor self, Scalar other) -> Tensor
not_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
not_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
not_equal_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
not_equal_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
nuclear_norm(Tensor self, bool keepdim=False) -> Tensor
nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor
nuclear_norm.out(Tensor self, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
nuclear_norm.dim_out(Tensor self, int[2] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
numel(Tensor self) -> int
one_hot(Tensor self, int num_classes=-1) -> Tensor
ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
ones_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
orgqr(Tensor self, Tensor input2) -> Tensor
orgqr.out(Tensor self, Tensor input2, *, Tensor(a!) out) -> Tensor(a!)
ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor
ormqr.out(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor(a!) out) -> Tensor(a!)
outer(Tensor self, Tensor vec2) -> Tensor
outer.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)
pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor
pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False) -> Tensor
pdist(Tensor self, float p=2.) -> Tensor
permute(Tensor(a) self, int[] dims) -> Tensor(a)
permute_copy(Tensor self, int[] dims) -> Tensor
permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)
pin_memory(Tensor(a) self, Device? device=None) -> Tensor(a)
pinverse(Tensor self, float rcond=1.0000000000000001e-15) -> Tensor
pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) -> Tensor(a!)
pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> Tensor(a!)
poisson(Tensor self, Generator? generator=None) -> Tensor
poisson.out(Tensor self, Generator? generator=None, *, Tensor(a!) out) -> Tensor(a!)
poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor
polar(Tensor abs, Tensor angle) -> Tensor
polar.out(Tensor abs, Tensor angle, *, Tensor(a!) out) -> Tensor(a!)
polygamma(int n, Tensor self) -> Tensor
polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)
polygamma_(Tensor(a!) self, int n) -> Tensor(a!)
positive(Tensor(a) self) -> Tensor(a)
pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
pow.Scalar(Scalar self, Tensor exponent) -> Tensor
pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)
pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)
pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)
prelu(Tensor self, Tensor weight) -> Tensor
prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor
put.out(Tensor self, Tensor index, Tensor source, bool accumulate=False, *, Tensor(a!) out) -> Tensor(a!)
put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)
qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)
qr.Q(Tensor self, bool some=True, *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, Tensor(b!) R)
quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation="linear") -> Tensor
quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation="linear") -> Tensor
quantile.out(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation="linear", Tensor(a!) out) -> Tensor(a!)
quantile.scalar_out(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation="linear", Tensor(a!) out) -> Tensor(a!)
rad2deg(Tensor self) -> Tensor
rad2deg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
rad2deg_(Tensor(a!) self) -> Tensor(a!)
rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
rand.generator(SymInt[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
rand.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
rand.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
rand_like.generator(Tensor self, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
rand_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
rand_like.generator_out(Tensor self, *, Generator? generator, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randint.generator(SymInt high, SymInt[] size, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randint.out(SymInt high, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
randint.generator_out(SymInt high, SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
randint.low_out(SymInt low, SymInt high, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
randint.low_generator_out(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
randint_like(Tensor self, SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.Tensor(Tensor self, Tensor high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.generator(Tensor self, SymInt high, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.Tensor_generator(Tensor self, Tensor high, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.low_generator_dtype(Tensor self, SymInt low, SymInt high, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.out(Tensor self, SymInt high, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint_like.generator_out(Tensor self, SymInt high, *, Generator? generator, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint_like.Tensor_out(Tensor self, Tensor high, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint_like.Tensor_generator_out(Tensor self, Tensor high, *, Generator? generator, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint_like.low_dtype_out(Tensor self, SymInt low, SymInt high, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randint_like.low_generator_dtype_out(Tensor self, SymInt low, SymInt high, *, Generator? generator, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randn.generator(SymInt[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randn.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
randn.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randn_like.generator(Tensor self, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randn_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
randn_like.generator_out(Tensor self, *, Generator? generator, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)
random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)
random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)
randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randperm.generator(SymInt n, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
randperm.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)
randperm.generator_out(SymInt n, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
range.step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
range(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
range.out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)
range.out_(Scalar start, Scalar end, *, Tensor(a!) out) -> Tensor(a!)
ravel(Tensor(a) self) -> Tensor(a)
real(Tensor(a) self) -> Tensor(a)
reciprocal(Tensor self) -> Tensor
reciprocal.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
reciprocal_(Tensor(a!) self) -> Tensor(a!)
reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> Tensor(a!)
reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor
reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor
reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
relu(Tensor self) -> Tensor
relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
relu6(Tensor self) -> Tensor
relu_(Tensor(a!) self) -> Tensor(a!)
remainder.Tensor(Tensor self, Tensor other) -> Tensor
remainder.Scalar(Tensor self, Scalar other) -> Tensor
remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
remainder.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
remainder_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor
renorm.out(Tensor self, Scalar p, int dim, Scalar maxnorm, *, Tensor(a!) out) -> Tensor(a!)
renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)
repeat(Tensor self, SymInt[] repeats) -> Tensor
repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) -> Tensor(a!)
repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor
repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None, Tensor(a!) out) -> Tensor(a!)
replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor
replication_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor
replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
requires_grad_(Tensor(a!) self, bool requires_grad=True) -> Tensor(a!)
reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)
resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor
resize.out(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)
resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor
resize_as.out(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)
resolve_conj(Tensor(a) self) -> Tensor(a)
resolve_neg(Tensor(a) self) -> Tensor(a)
retain_grad(Tensor(a!) self) -> ()
rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out) -> Tensor(a!)
rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor
rot90.out(Tensor self, int k=1, int[] dims=[0, 1], *, Tensor(a!) out) -> Tensor(a!)
round(Tensor self) -> Tensor
round.decimals(Tensor self, *, int decimals) -> Tensor
round.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)
round_(Tensor(a!) self) -> Tensor(a!)
round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)
row_indices(Tensor(a) self) -> Tensor(a)
row_stack(Tensor[] tensors) -> Tensor
row_stack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor
rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor(a!)
rsqrt(Tensor self) -> Tensor
rsqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
rsqrt_(Tensor(a!) self) -> Tensor(a!)
rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
rsub.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)
scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)
scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor
scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor
scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)
scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
scatter.reduce_out(Tensor self, int dim, Tensor index, Tensor src, *, str reduce, Tensor(a!) out) -> Tensor(a!)
scatter.value_reduce_out(Tensor self, int dim, Tensor index, Scalar value, *, str reduce, Tensor(a!) out) -> Tensor(a!)
scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)
scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)
scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor(a!)
scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor(a!)
scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)
scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)
scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor
scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True, Tensor(a!) out) -> Tensor(a!)
scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor(a!)
searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor
searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) out) -> Tensor(a!)
searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor
searchsorted.Scalar_out(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) out) -> Tensor(a!)
segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor
segment_reduce.out(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None, Tensor(a!) out) -> Tensor(a!)
select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
select_copy.int(Tensor self, int dim, SymInt index) -> Tensor
select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out) -> Tensor(a!)
select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor
select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *, Tensor(a!) out) -> Tensor(a!)
selu(Tensor self) -> Tensor
selu_(Tensor(a!) self) -> Tensor(a!)
set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)
set_(Tensor(a!) self) -> Tensor(a!)
set_.source_Tensor_storage_offset(Tensor(a!) self, Tensor source, SymInt storage_offset, SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)
sgn(Tensor self) -> Tensor
sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sgn_(Tensor(a!) self) -> Tensor(a!)
sigmoid(Tensor self) -> Tensor
sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sigmoid_(Tensor(a!) self) -> Tensor(a!)
sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) -> Tensor(a!)
sign(Tensor self) -> Tensor
sign.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sign_(Tensor(a!) self) -> Tensor(a!)
signbit(Tensor self) -> Tensor
signbit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
silu(Tensor self) -> Tensor
silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
silu_backward(Tensor grad_output, Tensor self) -> Tensor
silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input) -> Tensor(a!)
sin(Tensor self) -> Tensor
sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sin_(Tensor(a!) self) -> Tensor(a!)
sinc(Tensor self) -> Tensor
sinc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sinc_(Tensor(a!) self) -> Tensor(a!)
sinh(Tensor self) -> Tensor
sinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sinh_(Tensor(a!) self) -> Tensor(a!)
size.int(Tensor self, int dim) -> int
size(Tensor self) -> int[]
slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)
slice_inverse(Tensor(a) self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)
slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)
slogdet.out(Tensor self, *, Tensor(a!) sign, Tensor(b!) logabsdet) -> (Tensor(a!) sign, Tensor(b!) logabsdet)
smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor
smooth_l1_loss.out(Tensor self, Tensor target, int reduction=1, float beta=1., *, Tensor(a!) out) -> Tensor(a!)
soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
soft_margin_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)
softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)
softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> Tensor(a!)
softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
softshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)
sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
sort.Tensor(Tensor[](a!) self, bool reverse=False) -> ()
sparse_dim(Tensor self) -> int
sparse_mask.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)
sparse_mask(Tensor self, Tensor mask) -> Tensor
special_airy_ai(Tensor x) -> Tensor
special_airy_ai.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
special_bessel_j0(Tensor self) -> Tensor
special_bessel_j0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_bessel_j1(Tensor self) -> Tensor
special_bessel_j1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_bessel_y0(Tensor self) -> Tensor
special_bessel_y0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_bessel_y1(Tensor self) -> Tensor
special_bessel_y1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_t(Tensor x, Tensor n) -> Tensor
special_chebyshev_polynomial_t.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_t.x_scalar(Scalar x, Tensor n) -> Tensor
special_chebyshev_polynomial_t.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_t.n_scalar(Tensor x, Scalar n) -> Tensor
special_chebyshev_polynomial_t.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_u(Tensor x, Tensor n) -> Tensor
special_chebyshev_polynomial_u.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_u.x_scalar(Scalar x, Tensor n) -> Tensor
special_chebyshev_polynomial_u.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_u.n_scalar(Tensor x, Scalar n) -> Tensor
special_chebyshev_polynomial_u.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_v(Tensor x, Tensor n) -> Tensor
special_chebyshev_polynomial_v.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_v.x_scalar(Scalar x, Tensor n) -> Tensor
special_chebyshev_polynomial_v.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_v.n_scalar(Tensor x, Scalar n) -> Tensor
special_chebyshev_polynomial_v.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_w(Tensor x, Tensor n) -> Tensor
special_chebyshev_polynomial_w.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_w.x_scalar(Scalar x, Tensor n) -> Tensor
special_chebyshev_polynomial_w.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_chebyshev_polynomial_w.n_scalar(Tensor x, Scalar n) -> Tensor
special_chebyshev_polynomial_w.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_digamma(Tensor self) -> Tensor
special_digamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_entr(Tensor self) -> Tensor
special_entr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_erf(Tensor self) -> Tensor
special_erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_erfc(Tensor self) -> Tensor
special_erfc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_erfcx(Tensor self) -> Tensor
special_erfcx.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_erfinv(Tensor self) -> Tensor
special_erfinv.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_exp2(Tensor self) -> Tensor
special_exp2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_expit(Tensor self) -> Tensor
special_expit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_expm1(Tensor self) -> Tensor
special_expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_gammainc(Tensor self, Tensor other) -> Tensor
special_gammainc.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_gammaincc(Tensor self, Tensor other) -> Tensor
special_gammaincc.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_gammaln(Tensor self) -> Tensor
special_gammaln.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_h(Tensor x, Tensor n) -> Tensor
special_hermite_polynomial_h.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_h.x_scalar(Scalar x, Tensor n) -> Tensor
special_hermite_polynomial_h.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_h.n_scalar(Tensor x, Scalar n) -> Tensor
special_hermite_polynomial_h.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_he(Tensor x, Tensor n) -> Tensor
special_hermite_polynomial_he.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_he.x_scalar(Scalar x, Tensor n) -> Tensor
special_hermite_polynomial_he.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_hermite_polynomial_he.n_scalar(Tensor x, Scalar n) -> Tensor
special_hermite_polynomial_he.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_i0(Tensor self) -> Tensor
special_i0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_i0e(Tensor self) -> Tensor
special_i0e.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_i1(Tensor self) -> Tensor
special_i1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_i1e(Tensor self) -> Tensor
special_i1e.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_laguerre_polynomial_l(Tensor x, Tensor n) -> Tensor
special_laguerre_polynomial_l.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_laguerre_polynomial_l.x_scalar(Scalar x, Tensor n) -> Tensor
special_laguerre_polynomial_l.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_laguerre_polynomial_l.n_scalar(Tensor x, Scalar n) -> Tensor
special_laguerre_polynomial_l.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_legendre_polynomial_p(Tensor x, Tensor n) -> Tensor
special_legendre_polynomial_p.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_legendre_polynomial_p.x_scalar(Scalar x, Tensor n) -> Tensor
special_legendre_polynomial_p.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_legendre_polynomial_p.n_scalar(Tensor x, Scalar n) -> Tensor
special_legendre_polynomial_p.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_log1p(Tensor self) -> Tensor
special_log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_log_ndtr(Tensor self) -> Tensor
special_log_ndtr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
special_logit(Tensor self, float? eps=None) -> Tensor
special_logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)
special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
special_logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
special_modified_bessel_i0(Tensor self) -> Tensor
special_modified_bessel_i0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_modified_bessel_i1(Tensor self) -> Tensor
special_modified_bessel_i1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_modified_bessel_k0(Tensor self) -> Tensor
special_modified_bessel_k0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_modified_bessel_k1(Tensor self) -> Tensor
special_modified_bessel_k1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_multigammaln(Tensor self, int p) -> Tensor
special_multigammaln.out(Tensor self, int p, *, Tensor(a!) out) -> Tensor(a!)
special_ndtr(Tensor self) -> Tensor
special_ndtr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_ndtri(Tensor self) -> Tensor
special_ndtri.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_polygamma(int n, Tensor self) -> Tensor
special_polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_psi(Tensor self) -> Tensor
special_psi.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_round(Tensor self, *, int decimals=0) -> Tensor
special_round.out(Tensor self, *, int decimals=0, Tensor(a!) out) -> Tensor(a!)
special_scaled_modified_bessel_k0(Tensor x) -> Tensor
special_scaled_modified_bessel_k0.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
special_scaled_modified_bessel_k1(Tensor x) -> Tensor
special_scaled_modified_bessel_k1.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_t(Tensor x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_t.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_t.x_scalar(Scalar x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_t.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_t.n_scalar(Tensor x, Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_t.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_u(Tensor x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_u.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_u.x_scalar(Scalar x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_u.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_u.n_scalar(Tensor x, Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_u.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_v(Tensor x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_v.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_v.x_scalar(Scalar x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_v.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_v.n_scalar(Tensor x, Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_v.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_w(Tensor x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_w.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_w.x_scalar(Scalar x, Tensor n) -> Tensor
special_shifted_chebyshev_polynomial_w.x_scalar_out(Scalar x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
special_shifted_chebyshev_polynomial_w.n_scalar(Tensor x, Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_w.n_scalar_out(Tensor x, Scalar n, *, Tensor(a!) out) -> Tensor(a!)
special_sinc(Tensor self) -> Tensor
special_sinc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
special_spherical_bessel_j0(Tensor x) -> Tensor
special_spherical_bessel_j0.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
special_xlog1py(Tensor self, Tensor other) -> Tensor
special_xlog1py.other_scalar(Tensor self, Scalar other) -> Tensor
special_xlog1py.self_scalar(Scalar self, Tensor other) -> Tensor
special_xlog1py.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_xlog1py.self_scalar_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_xlog1py.other_scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
special_xlogy(Tensor self, Tensor other) -> Tensor
special_xlogy.other_scalar(Tensor self, Scalar other) -> Tensor
special_xlogy.self_scalar(Scalar self, Tensor other) -> Tensor
special_xlogy.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_xlogy.self_scalar_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_xlogy.other_scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
special_zeta(Tensor self, Tensor other) -> Tensor
special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor
special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor
special_zeta.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_zeta.self_scalar_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
special_zeta.other_scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]
split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]
split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()
sqrt(Tensor self) -> Tensor
sqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
sqrt_(Tensor(a!) self) -> Tensor(a!)
square(Tensor self) -> Tensor
square.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
square_(Tensor(a!) self) -> Tensor(a!)
squeeze(Tensor(a) self) -> Tensor(a)
squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
squeeze_(Tensor(a!) self) -> Tensor(a!)
squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)
squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)
squeeze_copy(Tensor self) -> Tensor
squeeze_copy.dim(Tensor self, int dim) -> Tensor
squeeze_copy.dims(Tensor self, int[] dim) -> Tensor
squeeze_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)
stack(Tensor[] tensors, int dim=0) -> Tensor
stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
std(Tensor self, bool unbiased=True) -> Tensor
std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
std.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)
std.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)
std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)
std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
std_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor
stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, str pad_mode="reflect", bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor
storage_offset(Tensor self) -> int
stride.int(Tensor self, int dim) -> int
stride(Tensor self) -> int[]
sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)
sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
subtract.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
subtract.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
subtract_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
subtract_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
sum.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
sum_to_size(Tensor self, SymInt[] size) -> Tensor
svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)
svd.U(Tensor self, bool some=True, bool compute_uv=True, *, Tensor(a!) U, Tensor(b!) S, Tensor(c!) V) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) V)
swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)
swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)
swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)
sym_numel(Tensor self) -> SymInt
sym_size.int(Tensor self, int dim) -> SymInt
sym_size(Tensor self) -> SymInt[]
sym_storage_offset(Tensor self) -> SymInt
sym_stride.int(Tensor self, int dim) -> SymInt
sym_stride(Tensor self) -> SymInt[]
t(Tensor(a) self) -> Tensor(a)
t_(Tensor(a!) self) -> Tensor(a!)
t_copy(Tensor self) -> Tensor
t_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
take(Tensor self, Tensor index) -> Tensor
take.out(Tensor self, Tensor index, *, Tensor(a!) out) -> Tensor(a!)
take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor
take_along_dim.out(Tensor self, Tensor indices, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)
tan(Tensor self) -> Tensor
tan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
tan_(Tensor(a!) self) -> Tensor(a!)
tanh(Tensor self) -> Tensor
tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
tanh_(Tensor(a!) self) -> Tensor(a!)
tanh_backward(Tensor grad_output, Tensor output) -> Tensor
tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) -> Tensor(a!)
tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]
tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]
tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, int dim=0) -> Tensor(a)[]
tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
tensordot.out(Tensor self, Tensor other, int[] dims_self, int[] dims_other, *, Tensor(a!) out) -> Tensor(a!)
threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
threshold.out(Tensor self, Scalar threshold, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)
threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor
threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, Tensor(a!) grad_input) -> Tensor(a!)
tile(Tensor self, SymInt[] dims) -> Tensor
to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)
to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)
to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)
to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor
to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor
to_sparse(Tensor self, *, Layout? layout=None, int[2]? blocksize=None, int? dense_dim=None) -> Tensor
to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor
to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor
topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
trace(Tensor self) -> Tensor
trace.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)
transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor
transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)
trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor
trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
trapz.dx(Tensor y, *, float dx=1., int dim=-1) -> Tensor
triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)
triangular_solve.X(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *, Tensor(a!) X, Tensor(b!) M) -> (Tensor(a!) solution, Tensor(b!) cloned_coefficient)
tril(Tensor self, SymInt diagonal=0) -> Tensor
tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
tril_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)
tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)
triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., float eps=9.9999999999999995e-07, bool swap=False, int reduction=1) -> Tensor
triu(Tensor self, SymInt diagonal=0) -> Tensor
triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
triu_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)
triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
triu_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)
true_divide.Tensor(Tensor self, Tensor other) -> Tensor
true_divide.Scalar(Tensor self, Scalar other) -> Tensor
true_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
true_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
true_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
trunc(Tensor self) -> Tensor
trunc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
trunc_(Tensor(a!) self) -> Tensor(a!)
type_as(Tensor self, Tensor other) -> Tensor
unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
unbind_copy.int(Tensor self, int dim=0) -> Tensor[]
unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()
unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)
unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor
unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out) -> Tensor(a!)
uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)
unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)
unique_consecutive.out(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]
unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
unsafe_split.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
unsafe_split_with_sizes.out(Tensor self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()
unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)
unsqueeze_copy(Tensor self, int dim) -> Tensor
unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor
upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor
upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)
upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor
upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor
upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)
values(Tensor(a) self) -> Tensor(a)
vander(Tensor x, int? N=None, bool increasing=False) -> Tensor
var(Tensor self, bool unbiased=True) -> Tensor
var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)
var.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)
var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)
var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
vdot(Tensor self, Tensor other) -> Tensor
vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
view(Tensor(a) self, SymInt[] size) -> Tensor(a)
view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)
view_as(Tensor(a) self, Tensor other) -> Tensor(a)
view_as_complex(Tensor(a) self) -> Tensor(a)
view_as_complex_copy(Tensor self) -> Tensor
view_as_complex_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
view_as_real(Tensor(a) self) -> Tensor(a)
view_as_real_copy(Tensor self) -> Tensor
view_as_real_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
view_copy(Tensor self, SymInt[] size) -> Tensor
view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor
view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
view_copy.dtype_out(Tensor self, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)
vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
vsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]
vstack(Tensor[] tensors) -> Tensor
vstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)
where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor
where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor
where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor
where(Tensor condition) -> Tensor[]
where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
xlogy.Tensor(Tensor self, Tensor other) -> Tensor
xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor
xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor
xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
xlogy.OutScalar_Self(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
xlogy.OutScalar_Other(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)
zero_(Tensor(a!) self) -> Tensor(a!)
zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
zeros_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
"""

_BY_OP = None


def overload_lines():
    """op name -> its overloads' schema lines, in torch's order."""
    global _BY_OP
    if _BY_OP is None:
        by_op = {}
        for line in _TEXT.splitlines():
            head = line[:line.index("(")]
            by_op.setdefault(head.split(".")[0], []).append(line)
        _BY_OP = by_op
    return _BY_OP
