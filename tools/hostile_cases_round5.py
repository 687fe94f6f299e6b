"""Hostile and odd inputs of hardening round 5, for tools/hostile_probe.py: quantized
tensors (quantize_per_tensor/per_channel/fake_quantize arguments, views, in-place views,
copies, scalars and the ops they have no kernel for) and nested tensors (construction,
jagged offsets, to_padded_tensor, views, pickling); outer products, sizes, strides and
offsets past int64, frombuffer, sparse constructors with bad indices, complex32 and float8
(part C); ops on empty tensors with a huge (expanded) dim, which must not loop over it
(part D); results whose size overflows or cannot be allocated (part E); the one-call fast
paths on huge expanded and empty operands (part F).  Run::

    PYTHONPATH=$PWD python tools/hostile_probe.py tools/hostile_cases_round5.py
"""
CASES = []
def add(c, code): CASES.append((c, code))
Q = "x = m.linspace(-1, 1, 12).reshape(3, 4)\nq = m.quantize_per_tensor(x, 0.1, 3, m.quint8)\n"
QC = "x = m.linspace(-1, 1, 12).reshape(3, 4)\nq = m.quantize_per_channel(x, m.tensor([0.1, 0.2, 0.3], dtype=m.float64), m.tensor([0, 1, 2]), 0, m.quint8)\n"
add("qpt_scale0", "m.quantize_per_tensor(m.ones(3), 0.0, 0, m.quint8).int_repr()")
add("qpt_scale_neg", "m.quantize_per_tensor(m.ones(3), -1.0, 0, m.quint8).int_repr()")
add("qpt_scale_nan", "m.quantize_per_tensor(m.ones(3), float('nan'), 0, m.quint8).int_repr()")
add("qpt_scale_inf", "m.quantize_per_tensor(m.ones(3), float('inf'), 0, m.quint8).int_repr()")
add("qpt_scale_tiny", "m.quantize_per_tensor(m.ones(3), 1e-45, 0, m.quint8).int_repr()")
add("qpt_scale_huge", "m.quantize_per_tensor(m.ones(3), 1e300, 0, m.quint8).int_repr()")
add("qpt_zp_big", "m.quantize_per_tensor(m.ones(3), 0.1, 256, m.quint8)")
add("qpt_zp_huge", "m.quantize_per_tensor(m.ones(3), 0.1, 2**70, m.quint8)")
add("qpt_zp_float", "m.quantize_per_tensor(m.ones(3), 0.1, 1.5, m.quint8).int_repr()")
add("qpt_scale_str", "m.quantize_per_tensor(m.ones(3), '0.1', 1, m.quint8)")
add("qpt_dtype_float", "m.quantize_per_tensor(m.ones(3), 0.1, 1, m.float32)")
add("qpt_dtype_none", "m.quantize_per_tensor(m.ones(3), 0.1, 1, None)")
add("qpt_input_double", "m.quantize_per_tensor(m.ones(3, dtype=m.float64), 0.1, 1, m.quint8)")
add("qpt_input_int", "m.quantize_per_tensor(m.ones(3, dtype=m.int64), 0.1, 1, m.quint8)")
add("qpt_input_list", "m.quantize_per_tensor([m.ones(3)], m.tensor([0.1]), m.tensor([1]), m.quint8)[0].int_repr()")
add("qpt_input_list_mismatch", "m.quantize_per_tensor([m.ones(3), m.ones(2)], m.tensor([0.1]), m.tensor([1]), m.quint8)")
add("qpt_input_nonc", "m.quantize_per_tensor(m.arange(12.).reshape(3,4).t(), 0.5, 1, m.quint8).stride()")
add("qpt_input_expand", "m.quantize_per_tensor(m.ones(1).expand(5), 0.5, 1, m.quint8).stride()")
add("qpt_input_0d", "m.quantize_per_tensor(m.tensor(1.), 0.5, 1, m.quint8).int_repr()")
add("qpt_input_empty", "m.quantize_per_tensor(m.ones(0, 3), 0.5, 1, m.quint8).int_repr()")
add("qpt_input_grad", "m.quantize_per_tensor(m.ones(3, requires_grad=True), 0.5, 1, m.quint8).int_repr()")
add("qpt_scale_tensor_2", "m.quantize_per_tensor(m.ones(3), m.tensor([0.1, 0.2]), 1, m.quint8)")
add("qpt_qint32_zp", "m.quantize_per_tensor(m.ones(3), 0.1, 2**31, m.qint32)")
add("qpt_qint32_big", "m.quantize_per_tensor(m.tensor([1e30, -1e30, float('nan')]), 1.0, 0, m.qint32).int_repr()")
add("qpc_axis_neg", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1, 0.2]), m.tensor([0, 0]), -1, m.quint8)")
add("qpc_axis_big", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1, 0.2]), m.tensor([0, 0]), 2, m.quint8)")
add("qpc_axis_huge", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1, 0.2]), m.tensor([0, 0]), 2**70, m.quint8)")
add("qpc_scales_len", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1]), m.tensor([0]), 0, m.quint8)")
add("qpc_scales_2d", "m.quantize_per_channel(m.ones(2,3), m.tensor([[0.1, 0.2]]), m.tensor([0, 0]), 0, m.quint8)")
add("qpc_zp_float", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1, 0.2]), m.tensor([0., 0.]), 0, m.quint8)")
add("qpc_zp_oob", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.1, 0.2]), m.tensor([0, 300]), 0, m.quint8)")
add("qpc_scale_zero", "m.quantize_per_channel(m.ones(2,3), m.tensor([0.0, 0.2]), m.tensor([0, 0]), 0, m.quint8).int_repr()")
add("qpc_scale_neg", "m.quantize_per_channel(m.ones(2,3), m.tensor([-1.0, 0.2]), m.tensor([0, 0]), 0, m.quint8).int_repr()")
add("qpc_scale_list", "m.quantize_per_channel(m.ones(2,3), [0.1, 0.2], m.tensor([0, 0]), 0, m.quint8)")
add("qpc_0d", "m.quantize_per_channel(m.tensor(1.), m.tensor([0.1]), m.tensor([0]), 0, m.quint8)")
add("qpc_empty", "m.quantize_per_channel(m.ones(0,3), m.tensor([]), m.tensor([], dtype=m.int64), 0, m.quint8).int_repr()")
add("qpc_scales_int", "m.quantize_per_channel(m.ones(2,3), m.tensor([1, 2]), m.tensor([0, 0]), 0, m.quint8).int_repr()")
add("qpc_scales_shrunk", "s = m.tensor([0.1, 0.2], dtype=m.float64)\ns.untyped_storage().resize_(0)\nm.quantize_per_channel(m.ones(2,3), s, m.tensor([0, 0]), 0, m.quint8).int_repr()")
add("q_add", Q + "q + 1")
add("q_add_q", Q + "q + q")
add("q_sum", Q + "q.sum()")
add("q_cat", Q + "m.cat([q, q]).int_repr()")
add("q_stack", Q + "m.stack([q, q]).int_repr()")
add("q_setitem", Q + "q[0] = 1.0\nq.int_repr()")
add("q_setitem_q", Q + "q[0] = q[1]\nq.int_repr()")
add("q_copy_from_float", Q + "q.copy_(m.zeros(3, 4))\nq.int_repr()")
add("q_copy_to_float", Q + "y = m.zeros(3, 4)\ny.copy_(q)\ny")
add("q_copy_q", Q + "q2 = m.quantize_per_tensor(m.zeros(3,4), 0.5, 1, m.quint8)\nq2.copy_(q)\nq2.int_repr()")
add("q_copy_shape", Q + "q2 = m.quantize_per_tensor(m.zeros(4), 0.5, 1, m.quint8)\nq2.copy_(q)\nq2.int_repr()")
add("q_view_dtype", Q + "q.view(m.uint8)")
add("q_view_neg", Q + "q.view(-1).int_repr()")
add("q_view_bad", Q + "q.view(5)")
add("q_reshape_bad", Q + "q.reshape(5)")
add("q_expand", Q + "q[0].expand(2**40, 4).shape")
add("q_expand_bad", Q + "q.expand(5, 4)")
add("q_as_strided", Q + "q.as_strided((2,), (1,)).int_repr()")
add("q_as_strided_oob", Q + "m.as_strided(q, (100,), (1,)).int_repr()")
add("q_select_oob", Q + "q.select(0, 5)")
add("q_narrow_oob", Q + "q.narrow(0, 2, 5)")
add("q_getitem_oob", Q + "q[7]")
add("q_getitem_tensor", Q + "q[m.tensor([0, 2])].int_repr()")
add("q_getitem_tensor_oob", Q + "q[m.tensor([0, 9])]")
add("q_getitem_bool", Q + "q[m.tensor([True, False, True])].int_repr()")
add("q_getitem_step", Q + "q[:, ::2].int_repr()")
add("q_getitem_none", Q + "q[None].shape")
add("q_getitem_ellipsis", Q + "q[..., 1].int_repr()")
add("q_shrunk_dequant", Q + "q.untyped_storage().resize_(0)\nq.dequantize()")
add("q_shrunk_int_repr", Q + "q.untyped_storage().resize_(0)\nq.int_repr()")
add("q_shrunk_repr", Q + "q.untyped_storage().resize_(0)\nrepr(q)")
add("q_shrunk_clone", Q + "q.untyped_storage().resize_(0)\nq.clone().int_repr()")
add("q_resize_", Q + "q.resize_(5)\nq.shape")
add("q_resize_big", Q + "q.resize_(100)\nq.shape")
add("q_set_", Q + "q.set_(m.zeros(3))")
add("q_set_storage", Q + "q.set_(m.zeros(3).untyped_storage())")
add("q_pickle", Q + "import pickle\npickle.loads(pickle.dumps(q)).int_repr()")
add("q_pickle_pc", QC + "import pickle\npickle.loads(pickle.dumps(q)).int_repr()")
add("q_save_load", Q + "b = io.BytesIO(); m.save(q, b); b.seek(0); m.load(b).int_repr()")
add("q_save_load_pc", QC + "b = io.BytesIO(); m.save(q, b); b.seek(0); r = m.load(b); (r.int_repr(), r.q_per_channel_scales(), r.q_per_channel_axis())")
add("q_save_load_view", Q + "b = io.BytesIO(); m.save(q[1:], b); b.seek(0); m.load(b).int_repr()")
add("q_save_load_t", Q + "b = io.BytesIO(); m.save(q.t(), b); b.seek(0); m.load(b).int_repr()")
add("q_save_load_wo_false", Q + "b = io.BytesIO(); m.save(q, b); b.seek(0); m.load(b, weights_only=False).int_repr()")
add("q_numpy", Q + "q.numpy()")
add("q_item", Q + "q[0, 0].item()")
add("q_tolist", Q + "q.tolist()")
add("q_dlpack", Q + "q.__dlpack__()")
add("q_from_dlpack", Q + "m.from_dlpack(q)")
add("q_float", Q + "float(q[0,0])")
add("q_bool", Q + "bool(q[0,0])")
add("q_int", Q + "int(q[0,0])")
add("q_index_int", Q + "[1,2,3][q[0,0]]")
add("q_len0d", Q + "len(q[0,0])")
add("q_iter", Q + "[t.int_repr() for t in q]")
add("q_eq", Q + "(q == q)")
add("q_eq_float", Q + "(q == x)")
add("q_equal", Q + "m.equal(q, q)")
add("q_to_float", Q + "q.to(m.float32)")
add("q_float_method", Q + "q.float()")
add("q_contig_t", Q + "q.t().contiguous().int_repr()")
add("q_contig_pc", QC + "q.t().contiguous().int_repr()")
add("q_pc_view", QC + "q.view(-1)")
add("q_pc_t", QC + "q.t()")
add("q_pc_select", QC + "q[0]")
add("q_pc_transpose", QC + "q.transpose(0, 1).q_per_channel_axis()")
add("q_pc_clone", QC + "q.clone().int_repr()")
add("q_pc_dequant", QC + "q.dequantize()")
add("q_pc_scales_mutate", QC + "s = q.q_per_channel_scales(); s.zero_(); q.dequantize()")
add("q_requires_grad", Q + "q.requires_grad_()")
add("q_deepcopy", Q + "import copy\ncopy.deepcopy(q).int_repr()")
add("q_empty_quantized", "m._empty_affine_quantized([2, 3], scale=0.1, zero_point=1, dtype=m.quint8).shape")
add("q_empty_quantized_neg", "m._empty_affine_quantized([-2, 3], scale=0.1, zero_point=1, dtype=m.quint8)")
add("q_empty_quantized_huge", "m._empty_affine_quantized([2**62, 4], scale=0.1, zero_point=1, dtype=m.quint8)")
add("q_empty_qint8", "m.empty(3, dtype=m.qint8)")
add("q_zeros_qint8", "m.zeros(3, dtype=m.qint8)")
add("q_tensor_qint8", "m.tensor([1, 2], dtype=m.qint8)")
add("q_ones_like", Q + "m.ones_like(q)")
add("q_empty_like", Q + "m.empty_like(q).shape")
add("q_new_empty", Q + "q.new_empty((2,)).shape")
add("q_mul_scalar", Q + "q * 2")
add("q_matmul", Q + "q @ q.t()")
add("q_relu", Q + "m.relu(q).int_repr()")
add("q_F_relu", Q + "m.nn.functional.relu(q).int_repr()")
add("q_linear", Q + "m.nn.functional.linear(q, q)")
add("q_dequantize_list", Q + "[t.shape for t in m.dequantize([q, q])]")
add("q_dequantize_float", "m.dequantize(m.ones(3))")
add("q_int_repr_float", "m.ones(3).int_repr()")
add("q_q_scale_float", "m.ones(3).q_scale()")
add("q_q_scale_pc", QC + "q.q_scale()")
add("q_fake_scale0", "m.fake_quantize_per_tensor_affine(m.ones(3), 0.0, 0, 0, 255)")
add("q_fake_qmin_gt_qmax", "m.fake_quantize_per_tensor_affine(m.ones(3), 0.1, 0, 255, 0)")
add("q_fake_zp_oob", "m.fake_quantize_per_tensor_affine(m.ones(3), 0.1, 300, 0, 255)")
add("q_fake_scale_neg", "m.fake_quantize_per_tensor_affine(m.ones(3), -0.1, 0, 0, 255)")
add("q_fake_scale_nan", "m.fake_quantize_per_tensor_affine(m.ones(3), float('nan'), 0, 0, 255)")
add("q_fake_qmax_huge", "m.fake_quantize_per_tensor_affine(m.ones(3), 0.1, 0, 0, 2**40)")
add("q_fake_double", "m.fake_quantize_per_tensor_affine(m.ones(3, dtype=m.float64), 0.1, 0, 0, 255)")
add("q_fake_int", "m.fake_quantize_per_tensor_affine(m.ones(3, dtype=m.int64), 0.1, 0, 0, 255)")
add("q_fake_tensor_args", "m.fake_quantize_per_tensor_affine(m.ones(3), m.tensor(0.1), m.tensor(0), 0, 255)")
add("q_fake_tensor_args_zp_float", "m.fake_quantize_per_tensor_affine(m.ones(3), m.tensor(0.1), m.tensor(0.), 0, 255)")
add("q_fakepc_axis", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0,0]), 5, 0, 255)")
add("q_fakepc_axis_neg", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0,0]), -1, 0, 255)")
add("q_fakepc_len", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1]), m.tensor([0]), 0, 0, 255)")
add("q_fakepc_zp_float", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0.,0.]), 0, 0, 255)")
add("q_fakepc_zp_int32", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0,0], dtype=m.int32), 0, 0, 255)")
add("q_fakepc_scale_int", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([1,1]), m.tensor([0,0], dtype=m.int32), 0, 0, 255)")
add("q_fakepc_qmin_gt", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0,0], dtype=m.int32), 0, 255, 0)")
add("q_fakepc_zp_oob", "m.fake_quantize_per_channel_affine(m.ones(2,3), m.tensor([0.1,0.1]), m.tensor([0,999], dtype=m.int32), 0, 0, 255)")
add("q_choose_qparams_empty", "m._choose_qparams_per_tensor(m.ones(0))")
add("q_choose_qparams_nan", "m._choose_qparams_per_tensor(m.tensor([float('nan'), 1.]))")
add("q_choose_qparams_inf", "m._choose_qparams_per_tensor(m.tensor([float('inf'), 1.]))")
add("q_dynamic", "m.quantize_per_tensor_dynamic(m.ones(3), m.quint8, False).int_repr()")
add("q_dynamic_nan", "m.quantize_per_tensor_dynamic(m.tensor([float('nan'), 1.]), m.quint8, False).int_repr()")
add("q_dynamic_inf", "m.quantize_per_tensor_dynamic(m.tensor([float('inf'), 1.]), m.quint8, False).int_repr()")
add("q_dynamic_empty", "m.quantize_per_tensor_dynamic(m.ones(0), m.quint8, False).int_repr()")
add("q_dynamic_qint32", "m.quantize_per_tensor_dynamic(m.ones(3), m.qint32, False)")
add("q_dyn_linear_mod", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nql(m.ones(3, 4)).shape")
add("q_dyn_linear_mod_bad_in", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nql(m.ones(3, 5))")
add("q_dyn_linear_mod_double", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nql(m.ones(3, 4, dtype=m.float64))")
add("q_dyn_linear_mod_nan", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nql(m.full((3, 4), float('nan'))).shape")
add("q_dyn_linear_mod_empty", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nql(m.ones(0, 4)).shape")
add("q_dyn_linear_state", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.qint8)\nsorted(ql.state_dict().keys())")
add("q_dyn_linear_fp16", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.float16)\nql(m.ones(3, 4)).shape")
add("q_dyn_linear_bad_dtype", "lin = m.nn.Linear(4, 2)\nql = m.ao.quantization.quantize_dynamic(lin, {m.nn.Linear}, dtype=m.int8)\nql(m.ones(3, 4)).shape")
add("q_hash", Q + "isinstance(hash(q), int)")
add("q_format", Q + "f'{q[0,0]:.2f}'")
add("q_is_nonzero", Q + "q[0,0].is_nonzero()")
add("q_storage_offset_view", Q + "q[1:].storage_offset()")
add("q_storage_nbytes", Q + "q.untyped_storage().nbytes()")
add("q_data_ptr_eq", Q + "q[1:].data_ptr() - q.data_ptr()")
add("q_element_size", "[m.quantize_per_tensor(m.ones(3), 0.1, 0, d).element_size() for d in (m.qint8, m.quint8, m.qint32)]")
add("q_squeeze_", Q + "q2 = q[0:1]\nq2.squeeze_(0)\nq2.shape")
add("q_unsqueeze_", Q + "q.unsqueeze_(0)\nq.shape")
add("q_detach_grad", Q + "q.grad")
add("q_backward", Q + "q.backward()")
add("q_sort", Q + "m.sort(q)")
add("q_where", Q + "m.where(m.ones(3,4, dtype=m.bool), q, q)")
add("q_flip", Q + "m.flip(q, [0])")
add("q_index_select", Q + "m.index_select(q, 0, m.tensor([0]))")
add("q_unbind", Q + "[t.int_repr() for t in q.unbind(0)]")
add("q_split", Q + "[t.int_repr() for t in q.split(2)]")
add("q_chunk", Q + "[t.int_repr() for t in q.chunk(2)]")

N = "nt = m.nested.nested_tensor([m.arange(6.).reshape(2, 3), m.arange(12.).reshape(4, 3)])\n"
add("nt_empty_list", "m.nested.nested_tensor([]).size(0)")
add("nt_mixed_dim", "m.nested.nested_tensor([m.ones(2), m.ones(2, 2)])")
add("nt_mixed_dtype", "m.nested.nested_tensor([m.ones(2), m.ones(2, dtype=m.int64)]).dtype")
add("nt_0d", "m.nested.nested_tensor([m.tensor(1.), m.tensor(2.)])")
add("nt_list_of_lists", "m.nested.nested_tensor([[1., 2.], [3.]]).unbind()[1].tolist()")
add("nt_ragged_inner", "m.nested.nested_tensor([m.ones(2, 3), m.ones(2, 4)]).unbind()[1].shape")
add("nt_to_padded_small", N + "m.nested.to_padded_tensor(nt, 0.0, (2, 2, 3))")
add("nt_to_padded_neg", N + "m.nested.to_padded_tensor(nt, 0.0, (2, -1, 3))")
add("nt_to_padded_huge", N + "m.nested.to_padded_tensor(nt, 0.0, (2, 2**40, 2**40))")
add("nt_to_padded_wrong_len", N + "m.nested.to_padded_tensor(nt, 0.0, (2, 4))")
add("nt_to_padded", N + "m.nested.to_padded_tensor(nt, -1.0).tolist()")
add("nt_to_padded_bigger", N + "m.nested.to_padded_tensor(nt, -1.0, (3, 5, 4)).shape")
add("nt_add_mismatch", N + "nt + m.nested.nested_tensor([m.ones(2, 3)])")
add("nt_add_mismatch_shape", N + "nt + m.nested.nested_tensor([m.ones(2, 3), m.ones(3, 3)])")
add("nt_unbind_dim1", N + "nt.unbind(1)")
add("nt_size_ragged", N + "nt.size(1)")
add("nt_size_oob", N + "nt.size(5)")
add("nt_getitem_oob", N + "nt[5]")
add("nt_getitem_neg", N + "nt[-1].shape")
add("nt_getitem_neg_oob", N + "nt[-3]")
add("nt_view", N + "nt.view(-1)")
add("nt_reshape", N + "nt.reshape(2, -1, 3).size(0)")
add("nt_numpy", N + "nt.numpy()")
add("nt_item", N + "nt.item()")
add("nt_tolist", N + "[len(x) for x in nt.tolist()]")
add("nt_shrink", N + "nt.values().untyped_storage().resize_(0)\nnt.unbind()[0].tolist()")
add("nt_as_nested_offsets_bad", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0, 5, 20])).unbind()")
add("nt_jagged_offsets_dec", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0, 7, 3, 10])).unbind()")
add("nt_jagged_offsets_neg", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([-5, 3, 10])).unbind()")
add("nt_jagged_offsets_float", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0., 3., 10.])).unbind()")
add("nt_jagged_lengths_bad", "[t.tolist() for t in m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0, 3, 10]), lengths=m.tensor([5, 50])).unbind()]")
add("nt_jagged_offsets_huge", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0, 2**62])).unbind()")
add("nt_jagged_ok", "[t.tolist() for t in m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([0, 3, 10])).unbind()]")
add("nt_jagged_offsets_2d", "m.nested.nested_tensor_from_jagged(m.arange(10.), offsets=m.tensor([[0, 3, 10]])).unbind()")
add("nt_narrow_bad", "m.nested.narrow(m.arange(20.).reshape(2, 10), 1, m.tensor([0, 5]), m.tensor([3, 50]), layout=m.jagged).unbind()")
add("nt_narrow_neg", "m.nested.narrow(m.arange(20.).reshape(2, 10), 1, m.tensor([-3, 5]), m.tensor([3, 2]), layout=m.jagged).unbind()")
add("nt_as_nested_tensor_bad", "m.nested.as_nested_tensor([m.ones(2), 3])")
add("nt_as_nested_tensor_int", "m.nested.as_nested_tensor(3)")
add("nt_sdpa_mismatch", N + "m.nn.functional.scaled_dot_product_attention(nt, nt, m.ones(2, 3))")
add("nt_matmul_bad", N + "m.matmul(nt, m.ones(4, 2))")
add("nt_pickle", N + "import pickle\n[t.tolist() for t in pickle.loads(pickle.dumps(nt)).unbind()]")
add("nt_save", N + "b = io.BytesIO(); m.save(nt, b); b.seek(0); [t.tolist() for t in m.load(b).unbind()]")
add("nt_copy_mismatch", N + "nt.copy_(m.nested.nested_tensor([m.ones(2, 3), m.ones(3, 3)]))")
add("nt_fill_", N + "nt.fill_(2.0)\n[t.tolist() for t in nt.unbind()]")
add("nt_requires_grad", N + "nt.requires_grad_()\nnt.sum()")
add("nt_cat", N + "m.cat([nt, nt])")
add("nt_repr", N + "len(repr(nt)) > 0")
add("nt_dlpack", N + "nt.__dlpack__()")

# --- part C: outer products, sizes and sparse constructors ---
B = "e = m.zeros(1).expand(2**40)\n"
add("kron_huge", "a = m.zeros(1).expand(2**32)\nm.kron(a, a).shape")
add("kron_huge2", "a = m.zeros(1, 1).expand(2**32, 2**32)\nm.kron(a, a).shape")
add("cartesian_prod_huge", "a = m.zeros(1).expand(2**32)\nm.cartesian_prod(a, a).shape")
add("cartesian_prod_huge3", "a = m.zeros(1).expand(2**22)\nm.cartesian_prod(a, a, a).shape")
add("meshgrid_huge", "a = m.zeros(1).expand(2**32)\n[t.shape for t in m.meshgrid(a, a, indexing='ij')]")
add("meshgrid_huge3", "a = m.zeros(1).expand(2**32)\n[t.shape for t in m.meshgrid(a, a, a, indexing='ij')]")
add("tile_huge", "m.zeros(2).tile(2**62).shape")
add("tile_huge2", "m.zeros(2, 2).tile(2**40, 2**40).shape")
add("unfold_huge_size", "m.zeros(10).unfold(0, 2**62, 1)")
add("unfold_huge_step", "m.zeros(10).unfold(0, 2, 2**62).shape")
add("unfold_neg_step", "m.zeros(10).unfold(0, 2, -1)")
add("unfold_zero_step", "m.zeros(10).unfold(0, 2, 0)")
add("unfold_expanded", B + "e.unfold(0, 2**39, 2**39).shape")
add("new_empty_strided_huge", "m.zeros(1).new_empty_strided((2**40, 2**40), (2**40, 1))")
add("new_empty_strided_neg", "m.zeros(1).new_empty_strided((2, 2), (-1, 1))")
add("empty_strided_overflow", "m.empty_strided((2**62, 4), (1, 2**62))")
add("empty_strided_0size_huge_stride", "m.empty_strided((0, 4), (2**62, 2**62)).shape")
add("as_strided_neg_offset", "m.zeros(10).as_strided((2,), (1,), -1)")
add("as_strided_huge_offset", "m.zeros(10).as_strided((2,), (1,), 2**62)")
add("as_strided_overflow", "m.zeros(10).as_strided((2**62, 2), (2**62, 1))")
add("as_strided_0size_huge", "m.zeros(10).as_strided((0, 2**62), (2**62, 2**62)).shape")
add("repeat_interleave_huge", "m.zeros(2).repeat_interleave(2**62)")
add("repeat_interleave_neg", "m.zeros(2).repeat_interleave(-1)")
add("repeat_interleave_tensor_neg", "m.zeros(2).repeat_interleave(m.tensor([1, -1]))")
add("repeat_interleave_tensor_huge", "m.zeros(2).repeat_interleave(m.tensor([2**62, 2**62]))")
add("repeat_interleave_output_size_small", "m.arange(2.).repeat_interleave(m.tensor([3, 3]), output_size=2)")
add("repeat_interleave_output_size_big", "m.arange(2.).repeat_interleave(m.tensor([3, 3]), output_size=10).tolist()")
add("expand_as_huge", B + "m.zeros(1, 1).expand(2**40, 2**40).sum()")
add("frombuffer_offset_neg", "m.frombuffer(bytearray(16), dtype=m.float32, offset=-4)")
add("frombuffer_offset_big", "m.frombuffer(bytearray(16), dtype=m.float32, offset=20)")
add("frombuffer_count_big", "m.frombuffer(bytearray(16), dtype=m.float32, count=5)")
add("frombuffer_count_huge", "m.frombuffer(bytearray(16), dtype=m.float32, count=2**62)")
add("frombuffer_misaligned", "m.frombuffer(bytearray(18), dtype=m.float32, offset=2).tolist()")
add("frombuffer_offset_huge", "m.frombuffer(bytearray(16), dtype=m.float32, offset=2**63 - 1)")
add("frombuffer_count_neg2", "m.frombuffer(bytearray(16), dtype=m.float32, count=-2)")
add("sparse_coo_idx_oob", "m.sparse_coo_tensor(m.tensor([[0, 5]]), m.ones(2), (3,)).to_dense()")
add("sparse_coo_idx_neg", "m.sparse_coo_tensor(m.tensor([[0, -1]]), m.ones(2), (3,)).to_dense()")
add("sparse_coo_idx_oob_nocheck", "m.sparse_coo_tensor(m.tensor([[0, 5]]), m.ones(2), (3,), check_invariants=False).coalesce().to_dense()")
add("sparse_coo_idx_float", "m.sparse_coo_tensor(m.tensor([[0., 1.]]), m.ones(2), (3,))")
add("sparse_coo_idx_len", "m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(3), (3,))")
add("sparse_coo_size_neg", "m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2), (-3,))")
add("sparse_coo_size_huge", "m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2), (2**62, 2**62)).shape")
add("sparse_coo_huge_to_dense", "m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2), (2**40,)).to_dense()")
add("sparse_coo_unsafe_oob", "m._sparse_coo_tensor_unsafe(m.tensor([[0, 5]]), m.ones(2), (3,)).to_dense()")
add("sparse_csr_bad_crow", "m.sparse_csr_tensor(m.tensor([0, 5, 2]), m.tensor([0, 1]), m.ones(2), (2, 2)).to_dense()")
add("sparse_csr_bad_col", "m.sparse_csr_tensor(m.tensor([0, 1, 2]), m.tensor([0, 7]), m.ones(2), (2, 2)).to_dense()")
add("sparse_csr_neg_col", "m.sparse_csr_tensor(m.tensor([0, 1, 2]), m.tensor([0, -1]), m.ones(2), (2, 2)).to_dense()")
add("sparse_csr_crow_len", "m.sparse_csr_tensor(m.tensor([0, 2]), m.tensor([0, 1]), m.ones(2), (2, 2)).to_dense()")
add("sparse_csr_nnz_mismatch", "m.sparse_csr_tensor(m.tensor([0, 1, 3]), m.tensor([0, 1]), m.ones(2), (2, 2)).to_dense()")
add("sparse_csr_nocheck_oob", "m.sparse_csr_tensor(m.tensor([0, 1, 2]), m.tensor([0, 7]), m.ones(2), (2, 2), check_invariants=False).to_dense()")
add("sparse_csr_mm_nocheck_oob", "m.sparse_csr_tensor(m.tensor([0, 1, 2]), m.tensor([0, 7]), m.ones(2), (2, 2), check_invariants=False) @ m.ones(2, 2)")
add("sparse_coo_mm_nocheck_oob", "m.sparse_coo_tensor(m.tensor([[0, 5], [0, 0]]), m.ones(2), (3, 3), check_invariants=False) @ m.ones(3, 3)")
add("sparse_coo_add_nocheck_oob", "(m.sparse_coo_tensor(m.tensor([[0, 5]]), m.ones(2), (3,), check_invariants=False) + m.ones(3))")
add("sparse_csc_bad", "m.sparse_csc_tensor(m.tensor([0, 1, 2]), m.tensor([0, 9]), m.ones(2), (2, 2)).to_dense()")
add("sparse_bsr_bad", "m.sparse_bsr_tensor(m.tensor([0, 1]), m.tensor([3]), m.ones(1, 2, 2), (2, 2)).to_dense()")
add("c32_ops", "a = m.ones(3, dtype=m.complex32)\n(a + a).to(m.complex64).tolist()")
add("c32_item", "m.ones(3, dtype=m.complex32)[0].item()")
add("c32_huge", "m.tensor([1e10+1j], dtype=m.complex64).to(m.complex32).to(m.complex64).tolist()")
add("c32_sum", "m.ones(3, dtype=m.complex32).sum()")
add("c32_view_real", "m.view_as_real(m.ones(3, dtype=m.complex32)).tolist()")
add("c32_view_as_complex", "m.view_as_complex(m.ones(3, 2, dtype=m.float16)).dtype")
add("c32_view_as_complex_bad", "m.view_as_complex(m.ones(3, 3, dtype=m.float16))")
add("c32_view_as_complex_stride", "m.view_as_complex(m.ones(2, 3, dtype=m.float16).t())")
add("f8_arith", "(m.ones(3, dtype=m.float8_e4m3fn) + 1)")
add("f8_nan_e4m3", "m.tensor([float('inf'), 1e6, -1e6, float('nan')]).to(m.float8_e4m3fn).to(m.float32).tolist()")
add("f8_e5m2_inf", "m.tensor([float('inf'), 1e6, -1e6]).to(m.float8_e5m2).to(m.float32).tolist()")
add("f8_fnuz_nan", "m.tensor([float('inf'), float('nan'), -0.0]).to(m.float8_e4m3fnuz).to(m.float32).tolist()")
add("f8_view_complex", "m.view_as_complex(m.ones(3, 2).to(m.float8_e4m3fn))")
add("f8_sort", "m.ones(3).to(m.float8_e4m3fn).sort()")
add("f8_index", "m.ones(3).to(m.float8_e4m3fn)[m.tensor([0, 2])].to(m.float32).tolist()")
add("f8_cat", "m.cat([m.ones(3).to(m.float8_e4m3fn)] * 2).to(m.float32).tolist()")
add("f8_where", "m.where(m.tensor([True, False]), m.ones(2).to(m.float8_e4m3fn), m.zeros(2).to(m.float8_e4m3fn)).to(m.float32).tolist()")
add("f8_eq", "(m.ones(3).to(m.float8_e4m3fn) == m.ones(3).to(m.float8_e4m3fn)).tolist()")
add("f8_e8m0", "m.tensor([1., 2., 0.3, 0., -1.]).to(m.float8_e8m0fnu).to(m.float32).tolist()")
add("f4", "m.empty(3, dtype=m.float4_e2m1fn_x2).shape")

# --- part D: empty results of huge (expanded) dims: no loop may run over them ---
Z = "z = m.zeros(1, 0).expand(2**40, 0)\nzt = z.t()\n"
E0 = "e = m.zeros(1, dtype=m.float64).expand(2**40)\nn = m.zeros(0, dtype=m.float64)\n"
for op in ["z.sum()", "z.sum(0).shape", "z.sum(1).shape", "z.mean(0).shape", "z.amax(0).shape", "zt.sum(1).shape",
           "z.cumsum(0).shape", "z.cumsum(1).shape", "z.sort(0)[0].shape", "z.sort(1)[0].shape", "z.clone().shape",
           "z.contiguous().shape", "(z + 1).shape", "(z * z).shape", "z.t().contiguous().shape", "(z @ m.zeros(0, 3)).shape",
           "(zt @ m.zeros(2**40, 3).shape if False else m.zeros(3, 0) @ zt).shape", "z.flip(0).shape", "z.roll(1, 0).shape",
           "z.argmax(1).shape", "z.topk(0, 1)[0].shape", "z.nonzero().shape", "z.unique().shape", "z.norm()", "z.var(0).shape",
           "z.logsumexp(1).shape", "z.softmax(1).shape", "z.softmax(0).shape", "m.nn.functional.layer_norm(z, (0,)).shape",
           "z.repeat(2, 1).shape", "z.tile(2, 3).shape", "z.transpose(0, 1).reshape(-1).shape", "z.masked_fill(m.tensor(True), 1.).shape",
           "z.index_select(1, m.zeros(0, dtype=m.int64)).shape", "z.gather(1, m.zeros(2**40, 0, dtype=m.int64)).shape" if False else "z[:, m.zeros(0, dtype=m.int64)].shape",
           "z.cummax(1)[0].shape", "z.diff(dim=0).shape", "z.diff(dim=1).shape", "m.cat([z, z], 1).shape", "m.stack([z, z]).shape",
           "z.numpy().shape", "z.tolist()[:0]", "z.to(m.float64).shape", "z.half().shape", "z.bool().any()", "z.all()",
           "z.count_nonzero(0).shape", "z.prod(1).shape", "z.std(1).shape", "z.median(1).values.shape", "z.kthvalue(1, 0)",
           "z.max(1).values.shape", "z.min(0).values.shape", "z.nansum(1).shape", "m.trace(z)", "z.diagonal().shape", "z.triu().shape",
           "z.tril().shape", "m.einsum('ij->i', z).shape", "m.einsum('ij,ij->i', z, z).shape", "z.var_mean(1)[0].shape",
           "m.cdist(m.zeros(3, 0), m.zeros(4, 0)).shape", "z.renorm(2, 0, 1.).shape", "z.unfold(0, 2, 1).shape",
           "m.nn.functional.normalize(z, dim=1).shape", "m.nn.functional.linear(z, m.zeros(3, 0)).shape", "z.mm(m.zeros(0, 3)).shape"]:
    add("Z:" + op[:40], Z + op)
for op in ["m.kron(e, n).shape", "m.outer(e, n).shape", "m.outer(n, e).shape", "m.ger(e, n).shape", "(e.unsqueeze(1) * n).shape",
           "m.cartesian_prod(e, n).shape", "[t.shape for t in m.meshgrid(e, n, indexing='ij')]", "m.addr(m.zeros(2**40, 0, dtype=m.float64) if False else m.zeros(1, 0, dtype=m.float64).expand(2**40, 0), e, n).shape",
           "m.einsum('i,j->ij', e, n).shape", "m.tensordot(e, n, dims=0).shape", "m.searchsorted(n, e[:0]).shape", "m.bucketize(e[:0], n).shape",
           "m.cdist(e.view(-1, 1)[:, :0], m.zeros(2, 0, dtype=m.float64)).shape" ]:
    add("E:" + op[:40], E0 + op)

# --- part E: allocations of huge results (overflow-checked sizes) ---
HUGE = "h = m.zeros(1).expand(2**62)\nh2 = m.zeros(1, 1).expand(2**31, 2**31)\nh31 = m.zeros(1).expand(2**31)\n"
ops = ["m.cat([h, h]).shape", "m.stack([h, h]).shape", "m.cat([h2, h2], 1).shape", "m.stack([h31, h31]).shape",
       "m.einsum('i,j->ij', h31, h31).shape", "m.tensordot(h31, h31, dims=0).shape", "m.diag(h31).shape", "m.diag_embed(h31).shape",
       "m.block_diag(h31.view(1, -1), h31.view(-1, 1)).shape", "m.tril_indices(2**32, 2**32).shape", "m.triu_indices(2**32, 2**32).shape",
       "m.tril_indices(2**62, 2**62).shape", "m.vander(h31, N=2**32).shape", "m.combinations(h31, 2).shape", "m.combinations(m.zeros(1).expand(2**22), 3).shape",
       "m.nn.functional.pad(h, (2**62, 2**62)).shape", "m.nn.functional.pad(h31, (2**62, 0)).shape", "m.nn.functional.one_hot(m.zeros(1, dtype=m.int64).expand(2**32), 2**32).shape",
       "h31.repeat(2**32).shape", "h31.repeat_interleave(2**32).shape", "h31.unsqueeze(0).expand(2**33, -1).contiguous().shape",
       "h2.flatten().shape", "h2.reshape(-1).shape", "h2.matmul(h2).shape", "(h2 @ h2[:, :1]).shape", "m.cdist(h2[:, :1], h2[:, :1]).shape",
       "h31.unsqueeze(1).expand(-1, 2**32).clone().shape", "m.polar(h31, h31).shape", "m.view_as_complex(m.zeros(1, 2).expand(2**62, 2)).shape",
       "m.nn.functional.unfold(m.zeros(1, 1, 1, 1).expand(1, 1, 2**31, 2**31), 1).shape", "m.histc(h31, bins=2**62).shape",
       "m.bincount(m.zeros(1, dtype=m.int64), minlength=2**62).shape", "m.bincount(m.tensor([2**62])).shape",
       "m.arange(2**62).shape", "m.linspace(0, 1, 2**62).shape", "m.logspace(0, 1, 2**62).shape", "m.eye(2**32).shape", "m.eye(2**31, 2**33).shape",
       "m.randperm(2**62).shape", "m.full((2**31, 2**31), 1.).shape", "m.zeros(2**31, 2**31, dtype=m.bool).shape",
       "m.nn.functional.interpolate(m.zeros(1, 1, 2), size=2**62).shape", "m.nn.functional.interpolate(m.zeros(1, 1, 2, 2), size=(2**32, 2**32)).shape",
       "m.nn.functional.embedding(m.zeros(1, dtype=m.int64).expand(2**32), m.zeros(1, 2**32)).shape",
       "m.nn.functional.conv1d(m.zeros(1, 1, 1).expand(1, 1, 2**40), m.zeros(1, 1, 1)).shape",
       "m.nn.functional.conv_transpose1d(m.zeros(1, 1, 2), m.zeros(1, 1, 1), stride=2**62).shape",
       "m.nn.functional.conv_transpose1d(m.zeros(1, 1, 2), m.zeros(1, 1, 1), dilation=2**62).shape",
       "m.nn.functional.max_pool1d(m.zeros(1, 1, 2), 1, dilation=2**62).shape",
       "m.nn.functional.fold(m.zeros(1, 1, 1), (2**32, 2**32), 1).shape",
       "m.nn.functional.pixel_shuffle(m.zeros(1, 4, 1, 1).expand(1, 4, 2**31, 2**31), 2).shape",
       "m.nn.functional.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2).expand(1, 2**31, 2**31, 2)).shape",
       "m.nn.functional.upsample(m.zeros(1, 1, 2), scale_factor=2.0**61).shape",
       "m.fft.fft(m.zeros(2), n=2**62).shape", "m.fft.rfft(m.zeros(2), n=2**62).shape", "m.fft.irfft(m.zeros(2), n=2**62).shape",
       "m.stft(m.zeros(2**10), 2**62).shape", "m.signal.windows.hann(2**62).shape", "m.hann_window(2**62).shape",
       "m.nn.functional.ctc_loss(m.zeros(2**31, 1, 2), m.zeros(1, 1, dtype=m.int64), [2**31], [1])",
       "h31.as_strided((2**31, 2**31), (1, 1)).contiguous().shape", "m.empty(2**40, 0).t().contiguous().shape",
       "h31.new_zeros(2**62).shape", "m.nn.functional.embedding_bag(m.zeros(1, dtype=m.int64), m.zeros(2, 2), m.tensor([0]).expand(2**31)).shape",
       "m.searchsorted(m.zeros(1), h31.view(1, -1)[:, :0].expand(2**40, 0)).shape", "m.topk(h31, 2**31).values.shape",
       "m.kthvalue(h31[:4], 2**62)", "m.multinomial(m.ones(2), 2**62, replacement=True).shape", "m.nn.functional.embedding(m.tensor([2**62]), m.zeros(2, 2))",
       "m.nn.functional.unfold(m.zeros(1, 1, 4, 4), 2, stride=2**62).shape", "m.nn.functional.avg_pool2d(m.zeros(1, 1, 4, 4), 2, stride=2**62).shape",
       "m.nn.functional.adaptive_avg_pool1d(m.zeros(1, 1, 4), 2**62).shape", "m.roll(h31, 2**62).shape", "m.narrow(h, 0, 2**62 - 1, 2).shape",
       "h.unflatten(0, (2**31, 2**31)).shape", "h.view(2**31, 2**31).shape", "m.chunk(h, 2**62)[0].shape", "len(m.split(h31, 1))",
       "m.tensor_split(h31, 2**62)[0].shape", "m.diagonal(h2, 2**62).shape", "m.diagonal(h2, -2**63).shape", "m.diag(h2, 2**63 - 1).shape",
       "m.triu(h2, 2**63 - 1).shape", "m.tril(h2[:2, :2], -2**63).tolist()", "h2[:2, :2].diagonal(offset=-2**63).shape",
       "m.trapezoid(h31).shape", "m.movedim(h2, 0, 1).contiguous().shape",
       ]
for op in ops:
    add(op[:90], HUGE + op)

# --- part F: the one-call fast paths (dot, mv, cdist, softmax, searchsorted, index, masked_fill) on huge expanded and empty operands ---
FAST = ("e = m.zeros(1).expand(2**40)\nn = m.zeros(0)\nE = m.zeros(1, 1).expand(2**40, 0) if False else m.zeros(1, 0).expand(2**40, 0)\n"
     "F = m.zeros(1, 0).expand(2**20, 0)\nR = m.zeros(0, 1).expand(0, 2**40)\nB = m.zeros(1, 1, 0).expand(2**40, 3, 0)\n")
ops = ["m.dot(n, n)", "m.vdot(n, n)", "m.trace(E)", "m.trace(R)", "m.trace(m.zeros(1, 1).expand(2**31, 2**31)[:3, :3])",
       "m.mv(E, n).shape", "m.mv(R, m.zeros(1).expand(2**40)).shape", "m.matmul(E, n).shape", "(R @ e).shape", "(E @ m.zeros(0, 2)).shape",
       "(R.t() @ R).shape", "(R @ R.t()).shape", "m.bmm(B, m.zeros(2**40, 0, 2) if False else m.zeros(1, 0, 2).expand(2**40, 0, 2)).shape",
       "m.linalg.vector_norm(n)", "m.linalg.vector_norm(E, dim=1).shape", "m.linalg.vector_norm(R, dim=0).shape",
       "m.rand_like(E).shape", "m.randn_like(R).shape", "m.cdist(E, m.zeros(3, 0)).shape", "m.cdist(m.zeros(3, 0), E).shape",
       "m.cdist(m.zeros(1, 2, 0).expand(2**40, 2, 0), m.zeros(1, 3, 0).expand(2**40, 3, 0)).shape",
       "m.softmax(E, 1).shape", "m.softmax(R, 0).shape", "m.log_softmax(E, 0).shape", "m.polar(n, n).shape",
       "m.linalg.cross(m.zeros(1, 3).expand(2**40, 3)[:0], m.zeros(0, 3)).shape", "m.linspace(0, 1, 0).shape",
       "m.inner(E, m.zeros(3, 0)).shape", "m.inner(R.t(), m.zeros(3, 0).t().contiguous().t()[:, :0]).shape" if False else "m.inner(E, E[:4]).shape",
       "m.cumsum(E, 0).shape", "m.cumsum(E, 1).shape", "m.cumprod(R, 1).shape", "m.searchsorted(n, e[:0]).shape",
       "m.searchsorted(m.zeros(1).expand(2**40), m.tensor([0.5])).tolist()", "m.bucketize(m.tensor([0.5]), m.zeros(1).expand(2**40)).tolist()",
       "m.searchsorted(m.zeros(1, 0).expand(2**40, 0), m.zeros(1, 0).expand(2**40, 0)).shape",
       "m.isclose(E, E).shape", "m.allclose(E, E)", "m.gather(E, 1, m.zeros(2**40, 0, dtype=m.int64) if False else m.zeros(1, 0, dtype=m.int64).expand(2**40, 0)).shape",
       "m.zeros(1, 0).expand(2**40, 0).scatter_add(1, m.zeros(1, 0, dtype=m.int64).expand(2**40, 0), m.zeros(1, 0).expand(2**40, 0)).shape",
       "m.index_add(m.zeros(1, 0).expand(2**40, 0), 0, m.tensor([0]), m.zeros(1, 0)).shape",
       "m.nn.functional.binary_cross_entropy(F.sigmoid() if False else m.zeros(1, 0).expand(2**40, 0), m.zeros(1, 0).expand(2**40, 0), reduction='sum')",
       "m.nn.functional.binary_cross_entropy(m.zeros(1, 0).expand(2**40, 0), m.zeros(1, 0).expand(2**40, 0), reduction='mean')",
       "m.where(E > 0, E, 0.).shape", "E.clamp(0, 1).shape", "E[:, m.zeros(0, dtype=m.int64)].shape", "E[m.zeros(3, dtype=m.int64)].shape",
       "E[m.zeros(3, dtype=m.int64), m.zeros(3, dtype=m.int64)]", "R[:, m.tensor([2**40 - 1])].shape", "R[m.zeros(0, dtype=m.int64), m.tensor([0])].shape",
       "e[m.tensor([2**40 - 1, 0])].tolist()", "e[m.tensor([2**40])]", "e[(m.tensor([-2**40]),)].tolist()", "e[(m.tensor([-2**40 - 1]),)]",
       "m.zeros(1, 1).expand(2**31, 2**31)[m.tensor([2**31 - 1]), m.tensor([2**31 - 1])].tolist()",
       "m.zeros(1, 1).expand(2**31, 2**31)[:, m.tensor([2**31 - 1])].shape",
       "m.index_select(e, 0, m.tensor([2**40 - 1])).tolist()", "m.index_select(e, 0, m.tensor([2**40]))",
       "m.take(e, m.tensor([2**40 - 1])).tolist()", "m.take(m.zeros(1, 1).expand(2**31, 2**31), m.tensor([2**62 - 1])).tolist()",
       "m.take(m.zeros(1, 1).expand(2**31, 2**31), m.tensor([2**62]))",
       "e.masked_fill(m.tensor(True), 1.).shape if False else m.zeros(1, 0).expand(2**40, 0).masked_fill(m.zeros(1, 0, dtype=m.bool), 1.).shape",
       "m.zeros(2, 3).masked_fill(m.ones(1, 3, dtype=m.bool).expand(2, 3), float('nan')).tolist()",
       "m.zeros(2, 3, dtype=m.int64).masked_fill(m.ones(3, dtype=m.bool), 2**63)",
       "m.zeros(2, 3, dtype=m.int64).masked_fill(m.ones(3, dtype=m.bool), float('inf'))",
       "m.zeros(2, 3, dtype=m.int8).masked_fill(m.ones(3, dtype=m.bool), 300)",
       "m.zeros(2, 3, dtype=m.bool).masked_fill(m.ones(3, dtype=m.bool), 2).tolist()",
       "m.zeros(2, 3, dtype=m.uint8).masked_fill(m.ones(3, dtype=m.bool), -1)",
       "m.zeros(2, 3).masked_fill(m.ones(3, dtype=m.bool), 1j)",
       "m.zeros(2, 3).masked_fill_(m.ones(2, 2, 3, dtype=m.bool), 1.)",
       "m.zeros(1, 3).expand(2, 3).masked_fill_(m.ones(3, dtype=m.bool), 1.)",
       "m.zeros(2, 3).masked_fill(m.ones(2, 3, dtype=m.bool)[:, ::2] if False else m.ones(3, 2, dtype=m.bool).t(), 1.).tolist()",
       "x = m.zeros(2, 3)\nx.masked_fill_(x[0] == 0, 5.).tolist()",
       "x = m.zeros(6)\nmk = m.ones(6, dtype=m.bool)\nx.masked_fill_(mk.view(m.uint8).view(m.bool), 1.).tolist()",
       ]
for op in ops:
    add(op[:70], FAST + op)
