"""Hostile and odd inputs of hardening round 3, for tools/hostile_probe.py:
views and storages with huge/negative sizes, strides and offsets on every dtype; resize_
of views and shared storages; in-place ops on expanded tensors; out= tensors that overlap
or have the wrong dtype/shape; ops with int64-overflowing arguments; index ops with
out-of-range indices; integer division/remainder/shift/pow edge values; nan/inf/-0.0;
0-size tensors through reductions and linalg; nn layers with 0/negative sizes; DataLoader
and samplers with odd arguments; truncated/crafted checkpoints and hostile pickles.

    PYTHONPATH=$PWD python tools/hostile_probe.py tools/hostile_cases_round3.py
"""
CASES = []


def add(cid, code):
    CASES.append((cid, code))


# --- part 1 ---
H = [2**31, 2**62, 2**63-1, -1, -2**63]
DT = ["float32","float64","float16","bfloat16","int64","int32","int16","int8","uint8","bool","complex64","complex128"]
for dt in DT:
    add(f"as_strided_neg_stride_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([2],[-1])")
    add(f"as_strided_neg_size_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([-2],[1])")
    add(f"as_strided_neg_off_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([2],[1],-1)")
    add(f"as_strided_past_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([3],[2])")
    add(f"as_strided_huge_off_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([1],[1],2**62).sum()")
    add(f"as_strided_huge_stride_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([2],[2**62])")
    add(f"as_strided_zero_size_huge_stride_{dt}", f"m.zeros(4, dtype=m.{dt}).as_strided([0, 2],[2**62, 1]).sum()")
    add(f"set_huge_{dt}", f"t=m.zeros(4, dtype=m.{dt})\nm.zeros(1, dtype=m.{dt}).set_(t.untyped_storage(), 2**62, (2,), (1,))")
    add(f"set_negoff_{dt}", f"t=m.zeros(4, dtype=m.{dt})\nm.zeros(1, dtype=m.{dt}).set_(t.untyped_storage(), -1, (2,), (1,))")
    add(f"set_negstride_{dt}", f"t=m.zeros(4, dtype=m.{dt})\nm.zeros(1, dtype=m.{dt}).set_(t.untyped_storage(), 2, (2,), (-1,))")
    add(f"set_negsize_{dt}", f"t=m.zeros(4, dtype=m.{dt})\nm.zeros(1, dtype=m.{dt}).set_(t.untyped_storage(), 0, (-2,), (1,))")
    add(f"set_stride_huge_{dt}", f"t=m.zeros(4, dtype=m.{dt})\nm.zeros(1, dtype=m.{dt}).set_(t.untyped_storage(), 0, (2,3), (2**62, 2**62)).shape")
    add(f"empty_huge_{dt}", f"m.empty((2**62, 4), dtype=m.{dt})")
    add(f"empty_huge2_{dt}", f"m.empty((2**40, 2**40), dtype=m.{dt})")
    add(f"full_huge_{dt}", f"m.full((2**33, 2**33), 1, dtype=m.{dt})")
    add(f"resize_huge_{dt}", f"m.zeros(2, dtype=m.{dt}).resize_(2**61)")
    add(f"resize_neg_{dt}", f"m.zeros(2, dtype=m.{dt}).resize_(-1)")
    add(f"storage_view_huge_{dt}", f"m.zeros(2, dtype=m.{dt}).untyped_storage()[2**62]")
    add(f"storage_slice_{dt}", f"len(m.zeros(2, dtype=m.{dt}).untyped_storage()[5:2**62])")
add("as_strided_neg_stride_view", "t=m.arange(10.)\nt.as_strided([3],[-2],9)")
add("resize_view", "t=m.arange(10.)\nv=t[2:5]\nv.resize_(20)\n(v.shape, t.shape, v.storage_offset())")
add("resize_view_shrink", "t=m.arange(10.)\nv=t[2:5]\nv.resize_(1)\n(v.tolist(), t.tolist())")
add("resize_expanded", "t=m.zeros(1).expand(5)\nt.resize_(3)\n(t.stride(), t.shape)")
add("resize_as_view", "t=m.arange(10.)\nv=t[::2]\nv.resize_as_(m.zeros(2,3))\nv.shape, v.stride()")
add("resize_shared_grow", "t=m.arange(4.)\nu=m.zeros(1).set_(t)\nu.resize_(100)\nu[50]=1\nt.untyped_storage().nbytes()")
add("storage_resize_then_view", "t=m.arange(10.)\nv=t[5:]\nt.untyped_storage().resize_(8)\nv.sum()")
add("storage_resize_zero_then_index", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt[3]")
add("storage_resize_zero_then_sum", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt.sum()")
add("storage_resize_zero_then_tolist", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt.tolist()")
add("storage_resize_zero_then_clone", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt.clone()")
add("storage_resize_zero_then_add", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt.add_(1)")
add("storage_resize_zero_then_numpy", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nt.numpy()")
add("storage_resize_zero_then_str", "t=m.arange(10.)\nt.untyped_storage().resize_(0)\nstr(t)[:5]")
add("storage_resize_small_copy", "t=m.arange(10.)\nt.untyped_storage().resize_(12)\nm.zeros(10).copy_(t)")
add("storage_resize_small_matmul", "t=m.ones(4,4)\nt.untyped_storage().resize_(12)\nt@t")
add("storage_resize_small_index", "t=m.ones(4,4)\nt.untyped_storage().resize_(12)\nt[m.tensor([3])]")
add("storage_resize_small_sort", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nt.sort()")
add("storage_resize_small_cat", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nm.cat([t,t])")
add("storage_resize_small_fill", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nt.fill_(3)")
add("storage_resize_small_setitem", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nt[10]=3")
add("storage_resize_small_where", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nm.where(t>0, t, t)")
add("storage_resize_small_conv", "t=m.ones(1,1,8,8)\nt.untyped_storage().resize_(12)\nm.nn.functional.conv2d(t, m.ones(1,1,3,3))")
add("storage_resize_small_item", "t=m.ones(16)\nt.untyped_storage().resize_(12)\nt[-1].item()")
add("expand_huge_inplace", "t=m.zeros(1).expand(2**40)\nt.add_(1)")
add("expand_inplace", "t=m.zeros(1,3).expand(4,3)\nt.add_(1)")
add("expand_inplace_fill", "t=m.zeros(1,3).expand(4,3)\nt.fill_(1)\nt")
add("expand_inplace_copy", "t=m.zeros(1,3).expand(4,3)\nt.copy_(m.arange(12.).view(4,3))\nt")
add("expand_inplace_zero", "t=m.zeros(1,3).expand(4,3)\nt.zero_()")
add("expand_inplace_mul_", "t=m.ones(1,3).expand(4,3)\nt.mul_(2)")
add("expand_inplace_index_put", "t=m.zeros(1,3).expand(4,3)\nt[0,0]=1\nt")
add("expand_inplace_clamp", "t=m.zeros(1,3).expand(4,3)\nt.clamp_(0,1)")
add("expand_inplace_relu", "t=m.zeros(1,3).expand(4,3)\nm.relu_(t)")
add("expand_inplace_exp", "t=m.zeros(1,3).expand(4,3)\nt.exp_()")
add("expand_inplace_random", "t=m.zeros(1,3).expand(4,3)\nt.uniform_()\n t.shape")
add("expand_inplace_normal", "t=m.zeros(1,3).expand(4,3)\nt.normal_()\nt.shape")
add("expand_inplace_scatter", "t=m.zeros(1,3).expand(4,3)\nt.scatter_(0, m.zeros(1,3,dtype=m.long), 1.)")
add("expand_inplace_index_add", "t=m.zeros(1,3).expand(4,3)\nt.index_add_(0, m.tensor([0]), m.ones(1,3))")
add("expand_inplace_addmm", "t=m.zeros(1,3).expand(3,3)\nt.addmm_(m.ones(3,3), m.ones(3,3))")
add("expand_inplace_masked_fill", "t=m.zeros(1,3).expand(4,3)\nt.masked_fill_(m.ones(4,3,dtype=m.bool), 1)")
add("expand_out", "t=m.zeros(1,3).expand(4,3)\nm.add(m.ones(4,3), 1, out=t)")
add("overlap_out_add", "t=m.arange(6.)\nm.add(t[:5], 1, out=t[1:])")
add("overlap_out_same", "t=m.arange(6.)\nm.add(t, 1, out=t)")
add("overlap_out_mm", "a=m.ones(3,3)\nm.mm(a,a,out=a)")
add("overlap_out_cat", "a=m.ones(3)\nm.cat([a,a],out=a)")
add("overlap_out_sort", "a=m.tensor([3.,1,2])\nm.sort(a,out=(a, m.empty(3,dtype=m.long)))")
add("overlap_out_cumsum", "a=m.arange(5.)\nm.cumsum(a,0,out=a)")
add("overlap_out_index_select", "a=m.arange(5.)\nm.index_select(a,0,m.tensor([1,0]),out=a[:2])")
add("overlap_out_gather", "a=m.arange(5.)\nm.gather(a,0,m.tensor([4,3]),out=a[:2])")
add("overlap_out_matmul_view", "a=m.ones(4,4)\nm.matmul(a[:2,:2], a[:2,:2], out=a[2:,2:])")
add("out_wrong_dtype_add", "m.add(m.ones(3), 1, out=m.empty(3, dtype=m.long))")
add("out_wrong_dtype_int_to_float", "m.add(m.ones(3,dtype=m.long), 1, out=m.empty(3))")
add("out_wrong_shape_add", "m.add(m.ones(3), 1, out=m.empty(5))")
add("out_wrong_shape_mm", "m.mm(m.ones(3,3), m.ones(3,3), out=m.empty(2))")
add("out_wrong_dtype_mm", "m.mm(m.ones(3,3), m.ones(3,3), out=m.empty(3,3,dtype=m.float64))")
add("out_wrong_dtype_sum", "m.sum(m.ones(3,3), 0, out=m.empty(3,dtype=m.long))")
add("out_wrong_dtype_argmax", "m.argmax(m.ones(3,3), 0, out=m.empty(3))")
add("out_bool_cmp", "m.eq(m.ones(3), 1, out=m.empty(3))")
add("out_expanded_sum", "m.sum(m.ones(3,3), 0, out=m.zeros(1).expand(3))")
add("out_noncontig", "o=m.zeros(3,2)[:,0]\nm.add(m.ones(3),1,out=o)\no")
add("out_meta", "m.add(m.ones(3),1,out=m.empty(3,device='meta'))")
add("out_requires_grad", "m.add(m.ones(3),1,out=m.empty(3, requires_grad=True))")
add("out_requires_grad_input", "m.add(m.ones(3,requires_grad=True),1,out=m.empty(3))")
add("out_wrong_complex", "m.abs(m.ones(3, dtype=m.complex64), out=m.empty(3, dtype=m.complex64))")
add("out_int_div", "m.div(m.ones(3,dtype=m.long), 2, out=m.empty(3,dtype=m.long))")
add("out_floor_div_int", "m.div(m.ones(3,dtype=m.long), 2, rounding_mode='floor', out=m.empty(3,dtype=m.long))")


# --- part 2 ---
for h in ["2**62", "2**40", "2**63-1", "-1", "-2**63", "0"]:
    k = h.replace("**","p").replace("-","m")
    add(f"repeat_{k}", f"m.ones(2,3).repeat({h}, 2)")
    add(f"tile_{k}", f"m.ones(2,3).tile(({h}, 2))")
    add(f"kron_expand_{k}", f"m.kron(m.ones(1).expand({h}) if {h}>0 else m.ones(2), m.ones(3))")
    add(f"tril_indices_{k}", f"m.tril_indices({h}, 3)")
    add(f"triu_indices_{k}", f"m.triu_indices(3, {h})")
    add(f"tril_indices_big_{k}", f"m.tril_indices({h}, {h})")
    add(f"one_hot_{k}", f"m.nn.functional.one_hot(m.tensor([0,1]), {h})")
    add(f"arange_end_{k}", f"m.arange(0, {h}, 1)")
    add(f"arange_step_{k}", f"m.arange(0, 10, {h})")
    add(f"linspace_{k}", f"m.linspace(0, 1, {h})")
    add(f"logspace_{k}", f"m.logspace(0, 1, {h})")
    add(f"eye_{k}", f"m.eye({h})")
    add(f"eye2_{k}", f"m.eye(3, {h})")
    add(f"randperm_{k}", f"m.randperm({h})")
    add(f"ones_{k}", f"m.ones({h}, {h})")
    add(f"expand_{k}", f"m.ones(1,1).expand({h}, {h}).shape")
    add(f"unfold_{k}", f"m.ones(10).unfold(0, {h}, 1)")
    add(f"unfold_step_{k}", f"m.ones(10).unfold(0, 2, {h})")
    add(f"narrow_{k}", f"m.ones(10).narrow(0, {h}, 2)")
    add(f"narrow_len_{k}", f"m.ones(10).narrow(0, 2, {h})")
    add(f"select_{k}", f"m.ones(10).select(0, {h})")
    add(f"slice_{k}", f"m.ones(10)[{h}:]")
    add(f"slice_step_{k}", f"m.ones(10)[::{h}]")
    add(f"index_int_{k}", f"m.ones(10)[{h}]")
    add(f"index_tensor_{k}", f"m.ones(10)[m.tensor([{h}])]")
    add(f"index_select_{k}", f"m.index_select(m.ones(10), 0, m.tensor([{h}]))")
    add(f"gather_{k}", f"m.gather(m.ones(10), 0, m.tensor([{h}]))")
    add(f"scatter_{k}", f"m.zeros(10).scatter_(0, m.tensor([{h}]), 1.)")
    add(f"scatter_add_{k}", f"m.zeros(10).scatter_add_(0, m.tensor([{h}]), m.ones(1))")
    add(f"scatter_reduce_{k}", f"m.zeros(10).scatter_reduce_(0, m.tensor([{h}]), m.ones(1), 'amax')")
    add(f"index_add_{k}", f"m.zeros(10).index_add_(0, m.tensor([{h}]), m.ones(1))")
    add(f"index_copy_{k}", f"m.zeros(10).index_copy_(0, m.tensor([{h}]), m.ones(1))")
    add(f"index_fill_{k}", f"m.zeros(10).index_fill_(0, m.tensor([{h}]), 1.)")
    add(f"index_put_{k}", f"m.zeros(10).index_put_((m.tensor([{h}]),), m.ones(1))")
    add(f"index_put_acc_{k}", f"m.zeros(10).index_put_((m.tensor([{h}]),), m.ones(1), accumulate=True)")
    add(f"put_{k}", f"m.zeros(10).put_(m.tensor([{h}]), m.ones(1))")
    add(f"put_acc_{k}", f"m.zeros(10).put_(m.tensor([{h}]), m.ones(1), accumulate=True)")
    add(f"take_{k}", f"m.take(m.ones(10), m.tensor([{h}]))")
    add(f"take_along_dim_{k}", f"m.take_along_dim(m.ones(10), m.tensor([{h}]))")
    add(f"embedding_{k}", f"m.nn.functional.embedding(m.tensor([{h}]), m.ones(10, 3))")
    add(f"embedding_padidx_{k}", f"m.nn.functional.embedding(m.tensor([1]), m.ones(10, 3), padding_idx={h})")
    add(f"embedding_bag_{k}", f"m.nn.functional.embedding_bag(m.tensor([{h}, 1]), m.ones(10, 3), m.tensor([0, 1]))")
    add(f"embedding_bag_off_{k}", f"m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(10, 3), m.tensor([0, {h}]))")
    add(f"embedding_bag_off0_{k}", f"m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(10, 3), m.tensor([{h}, 1]))")
    add(f"bincount_{k}", f"m.bincount(m.tensor([{h}]))")
    add(f"bincount_minlength_{k}", f"m.bincount(m.tensor([1]), minlength={h})")
    add(f"histc_{k}", f"m.histc(m.ones(3), bins={h})")
    add(f"multinomial_{k}", f"m.multinomial(m.ones(3), {h}, replacement=True).shape")
    add(f"topk_{k}", f"m.topk(m.ones(3), {h})")
    add(f"kthvalue_{k}", f"m.kthvalue(m.ones(3), {h})")
    add(f"diag_{k}", f"m.diag(m.ones(3,3), {h})")
    add(f"diag_embed_{k}", f"m.diag_embed(m.ones(3), {h})")
    add(f"diagonal_{k}", f"m.diagonal(m.ones(3,3), {h})")
    add(f"roll_{k}", f"m.roll(m.arange(5), {h})")
    add(f"chunk_{k}", f"len(m.ones(5).chunk({h}))")
    add(f"split_{k}", f"len(m.ones(5).split({h}))")
    add(f"movedim_{k}", f"m.ones(2,3).movedim({h}, 0)")
    add(f"flatten_{k}", f"m.ones(2,3).flatten({h})")
    add(f"unflatten_{k}", f"m.ones(6).unflatten(0, ({h}, -1))")
    add(f"view_{k}", f"m.ones(6).view({h}, -1)")
    add(f"reshape_{k}", f"m.ones(6).reshape({h}, -1)")
    add(f"squeeze_{k}", f"m.ones(6).squeeze({h})")
    add(f"cumsum_dim_{k}", f"m.ones(6).cumsum({h})")
    add(f"sum_dim_{k}", f"m.ones(6).sum({h})")
    add(f"pad_{k}", f"m.nn.functional.pad(m.ones(2,3), ({h}, 0))")
    add(f"pad_reflect_{k}", f"m.nn.functional.pad(m.ones(1,2,3), ({h}, 0), mode='reflect')")
    add(f"pad_circ_{k}", f"m.nn.functional.pad(m.ones(1,2,3), ({h}, 0), mode='circular')")
    add(f"pad_repl_{k}", f"m.nn.functional.pad(m.ones(1,2,3), ({h}, 0), mode='replicate')")
    add(f"interp_{k}", f"m.nn.functional.interpolate(m.ones(1,1,3), size={h})")
    add(f"interp_scale_{k}", f"m.nn.functional.interpolate(m.ones(1,1,3), scale_factor=float({h}))")
    add(f"maxpool_{k}", f"m.nn.functional.max_pool1d(m.ones(1,1,5), {h})")
    add(f"maxpool_stride_{k}", f"m.nn.functional.max_pool1d(m.ones(1,1,5), 2, {h})")
    add(f"avgpool_pad_{k}", f"m.nn.functional.avg_pool1d(m.ones(1,1,5), 2, 1, {h})")
    add(f"conv_stride_{k}", f"m.nn.functional.conv1d(m.ones(1,1,5), m.ones(1,1,2), stride={h})")
    add(f"conv_pad_{k}", f"m.nn.functional.conv1d(m.ones(1,1,5), m.ones(1,1,2), padding={h})")
    add(f"conv_dil_{k}", f"m.nn.functional.conv1d(m.ones(1,1,5), m.ones(1,1,2), dilation={h})")
    add(f"conv_groups_{k}", f"m.nn.functional.conv1d(m.ones(1,2,5), m.ones(2,1,2), groups={h})")
    add(f"fold_{k}", f"m.nn.functional.fold(m.ones(1,4,4), ({h},3), 2)")
    add(f"unfoldF_{k}", f"m.nn.functional.unfold(m.ones(1,1,4,4), 2, stride={h})")
    add(f"pixel_shuffle_{k}", f"m.nn.functional.pixel_shuffle(m.ones(1,4,2,2), {h})")
    add(f"fft_n_{k}", f"m.fft.fft(m.ones(4), n={h})")
    add(f"rfft_n_{k}", f"m.fft.rfft(m.ones(4), n={h})")
    add(f"stft_{k}", f"m.stft(m.ones(100), {h}, return_complex=True)")
    add(f"combinations_{k}", f"m.combinations(m.arange(5), r={h})")
    add(f"cartesian_big_{k}", f"m.cartesian_prod(*[m.ones(1).expand({h}) if {h}>0 else m.ones(2)]*2)")
    add(f"full_like_{k}", f"m.full((2,), {h}, dtype=m.int32)")
    add(f"tensor_{k}", f"m.tensor([{h}], dtype=m.int32)")
    add(f"tensor_u8_{k}", f"m.tensor([{h}], dtype=m.uint8)")
    add(f"fill_int8_{k}", f"m.zeros(2, dtype=m.int8).fill_({h})")
    add(f"add_int8_{k}", f"m.zeros(2, dtype=m.int8) + {h}")
    add(f"mul_int64_{k}", f"m.tensor([2**62]) * {h}")
    add(f"clamp_int_{k}", f"m.tensor([5], dtype=m.int8).clamp({h})")
    add(f"randint_{k}", f"m.randint({h}, (2,)).shape")
    add(f"randint_hi_{k}", f"m.randint(0, {h}, (2,), dtype=m.int8).shape")
    add(f"new_full_{k}", f"m.ones(1).new_full(({h},), 1.)")
    add(f"empty_strided_{k}", f"m.empty_strided((2,2), ({h}, 1)).shape")


# --- part 3 ---
# integer arithmetic edge cases
INTS = ["int8","int16","int32","int64","uint8"]
for dt in INTS:
    add(f"div_zero_{dt}", f"m.tensor([1,0,-1], dtype=m.{dt}) // m.tensor([0,0,0], dtype=m.{dt})")
    add(f"div_zero_scalar_{dt}", f"m.tensor([1,0,-1], dtype=m.{dt}) // 0")
    add(f"rem_zero_{dt}", f"m.tensor([1,0,-1], dtype=m.{dt}) % m.tensor([0,0,0], dtype=m.{dt})")
    add(f"rem_zero_scalar_{dt}", f"m.tensor([1,0,-1], dtype=m.{dt}) % 0")
    add(f"fmod_zero_{dt}", f"m.fmod(m.tensor([1,0,-1], dtype=m.{dt}), m.tensor([0,0,0], dtype=m.{dt}))")
    add(f"fmod_zero_scalar_{dt}", f"m.fmod(m.tensor([1,0,-1], dtype=m.{dt}), 0)")
    add(f"div_trunc_zero_{dt}", f"m.div(m.tensor([1,0,-1], dtype=m.{dt}), m.tensor([0,0,0], dtype=m.{dt}), rounding_mode='trunc')")
    add(f"div_floor_zero_{dt}", f"m.div(m.tensor([1,0,-1], dtype=m.{dt}), m.tensor([0,0,0], dtype=m.{dt}), rounding_mode='floor')")
    add(f"div_true_zero_{dt}", f"m.tensor([1,0,-1], dtype=m.{dt}) / m.tensor([0,0,0], dtype=m.{dt})")
    add(f"ifloordiv_zero_{dt}", f"t=m.tensor([1,0,-1], dtype=m.{dt})\nt //= 0\nt")
    add(f"remainder_ip_zero_{dt}", f"t=m.tensor([1,0,-1], dtype=m.{dt})\nt.remainder_(0)\nt")
    add(f"minmax_div_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.min, i.max], dtype=m.{dt}) // m.tensor([-1, -1], dtype=m.{dt})")
    add(f"minmax_rem_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.min, i.max], dtype=m.{dt}) % m.tensor([-1, -1], dtype=m.{dt})")
    add(f"minmax_fmod_{dt}", f"i=m.iinfo(m.{dt})\nm.fmod(m.tensor([i.min, i.max], dtype=m.{dt}), m.tensor([-1, -1], dtype=m.{dt}))")
    add(f"minmax_trunc_{dt}", f"i=m.iinfo(m.{dt})\nm.div(m.tensor([i.min, i.max], dtype=m.{dt}), -1, rounding_mode='trunc')")
    add(f"minmax_abs_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.min, i.max], dtype=m.{dt}).abs()")
    add(f"minmax_neg_{dt}", f"i=m.iinfo(m.{dt})\n-m.tensor([i.min, i.max], dtype=m.{dt})" if dt!="uint8" else "m.tensor([0,255],dtype=m.uint8).neg()")
    add(f"minmax_sign_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.min, i.max], dtype=m.{dt}).sign()")
    add(f"minmax_sum_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.max, i.max], dtype=m.{dt}).sum()")
    add(f"minmax_prod_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.max, i.max], dtype=m.{dt}).prod()")
    add(f"minmax_cumsum_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.max, i.max], dtype=m.{dt}).cumsum(0)")
    add(f"minmax_mean_{dt}", f"i=m.iinfo(m.{dt})\nm.tensor([i.max, i.max], dtype=m.{dt}).float().mean()")
    for sh in ["-1", "0", "7", "8", "31", "32", "63", "64", "65", "2**40", "-2**63"]:
        add(f"lshift_{dt}_{sh}", f"m.tensor([1, -1, 5], dtype=m.{dt}) << {sh}" if dt!="uint8" else f"m.tensor([1, 255, 5], dtype=m.{dt}) << {sh}")
        add(f"rshift_{dt}_{sh}", f"m.tensor([1, -1, 5], dtype=m.{dt}) >> {sh}" if dt!="uint8" else f"m.tensor([1, 255, 5], dtype=m.{dt}) >> {sh}")
        add(f"lshiftT_{dt}_{sh}", f"m.tensor([1, 3, 5], dtype=m.{dt}) << m.tensor([{sh}], dtype=m.int64)")
        add(f"rshiftT_{dt}_{sh}", f"m.tensor([1, 3, 5], dtype=m.{dt}) >> m.tensor([{sh}], dtype=m.int64)")
    for p in ["-1", "-2", "0", "2", "63", "64", "2**62", "0.5", "-0.5"]:
        add(f"pow_{dt}_{p}", f"m.tensor([0, 1, 2, 3], dtype=m.{dt}) ** {p}")
        add(f"pow_neg_base_{dt}_{p}", f"m.tensor([-1, -2, 0], dtype=m.{dt}) ** m.tensor({p})" if dt!="uint8" else f"m.tensor([1,2], dtype=m.{dt}) ** m.tensor({p})")
        add(f"rpow_{dt}_{p}", f"{p} ** m.tensor([0, 1, 2, 3], dtype=m.{dt})")
    add(f"gcd_min_{dt}", f"i=m.iinfo(m.{dt})\nm.gcd(m.tensor([i.min, 0], dtype=m.{dt}), m.tensor([0, 0], dtype=m.{dt}))")
    add(f"lcm_min_{dt}", f"i=m.iinfo(m.{dt})\nm.lcm(m.tensor([i.min, i.max], dtype=m.{dt}), m.tensor([3, 2], dtype=m.{dt}))")
    add(f"bitwise_not_{dt}", f"~m.tensor([0, 1], dtype=m.{dt})")
    add(f"float_to_{dt}", f"m.tensor([float('nan'), float('inf'), -float('inf'), 1e30, -0.0]).to(m.{dt}).shape")
    add(f"clamp_nan_{dt}", f"m.tensor([1], dtype=m.{dt}).clamp(float('nan'))")
    add(f"add_float_alpha_{dt}", f"m.add(m.tensor([1], dtype=m.{dt}), m.tensor([1], dtype=m.{dt}), alpha=0.5)")
    add(f"true_div_ip_{dt}", f"t=m.tensor([1], dtype=m.{dt})\nt /= 2")
    add(f"arange_{dt}", f"m.arange(0, 300, 7, dtype=m.{dt})")
for fdt in ["float32", "float64", "float16", "bfloat16"]:
    add(f"fdiv_zero_{fdt}", f"m.tensor([1., 0., -1., -0.], dtype=m.{fdt}) // m.tensor([0., -0., 0., 0.], dtype=m.{fdt})")
    add(f"frem_zero_{fdt}", f"m.tensor([1., 0., -1., float('inf')], dtype=m.{fdt}) % m.tensor([0., -0., float('inf'), 2.], dtype=m.{fdt})")
    add(f"ffmod_{fdt}", f"m.fmod(m.tensor([1., -0., -1., float('inf')], dtype=m.{fdt}), m.tensor([0., 2., float('-inf'), 2.], dtype=m.{fdt}))")
    add(f"fpow_{fdt}", f"m.tensor([-0., 0., -1., float('nan'), float('inf')], dtype=m.{fdt}) ** m.tensor([-1., 0., 0.5, 0., -0.], dtype=m.{fdt})")
    add(f"fsign_{fdt}", f"m.tensor([-0., 0., float('nan')], dtype=m.{fdt}).sign()")
    add(f"fsgn_{fdt}", f"m.tensor([-0., 0., float('nan')], dtype=m.{fdt}).sgn()")
    add(f"ffloor_div_negz_{fdt}", f"m.div(m.tensor([-0., 1., -1.], dtype=m.{fdt}), m.tensor([1., float('inf'), float('inf')], dtype=m.{fdt}), rounding_mode='floor')")
    add(f"fmax_nan_{fdt}", f"m.maximum(m.tensor([float('nan'), -0.], dtype=m.{fdt}), m.tensor([1., 0.], dtype=m.{fdt}))")
    add(f"fmin_nan_{fdt}", f"m.minimum(m.tensor([float('nan'), 0.], dtype=m.{fdt}), m.tensor([1., -0.], dtype=m.{fdt}))")
    add(f"fcopysign_{fdt}", f"m.copysign(m.tensor([1., 2.], dtype=m.{fdt}), m.tensor([-0., float('nan')], dtype=m.{fdt}))")
    add(f"fatan2_{fdt}", f"m.atan2(m.tensor([0., -0., 0., -0.], dtype=m.{fdt}), m.tensor([-0., -0., 0., 0.], dtype=m.{fdt}))")
    add(f"fround_{fdt}", f"m.round(m.tensor([0.5, 1.5, -0.5, 2.5, float('nan')], dtype=m.{fdt}), decimals=1000)")
    add(f"fround_neg_{fdt}", f"m.round(m.tensor([0.5, 1.5, -0.5, 2.5, 1e30], dtype=m.{fdt}), decimals=-1000)")
    add(f"flog_{fdt}", f"m.log(m.tensor([-0., 0., -1.], dtype=m.{fdt}))")
    add(f"fsort_nan_{fdt}", f"m.sort(m.tensor([float('nan'), -0., 0., -float('inf'), 1.], dtype=m.{fdt}))")
    add(f"fmaxred_nan_{fdt}", f"m.tensor([1., float('nan'), 3.], dtype=m.{fdt}).max()")
    add(f"fargmax_nan_{fdt}", f"m.tensor([1., float('nan'), 3.], dtype=m.{fdt}).argmax()")
    add(f"funique_nan_{fdt}", f"m.unique(m.tensor([float('nan'), float('nan'), -0., 0.], dtype=m.{fdt}))")
    add(f"fhistc_nan_{fdt}", f"m.histc(m.tensor([float('nan'), 1.], dtype=m.{fdt}), bins=3)")
    add(f"fhistc_inf_{fdt}", f"m.histc(m.tensor([float('inf'), 1.], dtype=m.{fdt}), bins=3)")
    add(f"fhistc_range_{fdt}", f"m.histc(m.tensor([1., 2.], dtype=m.{fdt}), bins=3, min=5, max=1)")
    add(f"fhistc_range_nan_{fdt}", f"m.histc(m.tensor([1., 2.], dtype=m.{fdt}), bins=3, min=float('nan'), max=1)")
    add(f"fhistogram_inf_{fdt}", f"m.histogram(m.tensor([1., 2.], dtype=m.float32), bins=3, range=(0., float('inf')))")
    add(f"fto_int_{fdt}", f"m.tensor([float('nan')], dtype=m.{fdt}).long().shape")
    add(f"flinspace_nan_{fdt}", f"m.linspace(0, float('nan'), 3, dtype=m.{fdt})")
    add(f"farange_nan_{fdt}", f"m.arange(0, float('nan'), 1, dtype=m.{fdt})")
    add(f"farange_inf_{fdt}", f"m.arange(0, float('inf'), 1, dtype=m.{fdt})")
    add(f"farange_step_tiny_{fdt}", f"m.arange(0, 1, 1e-300, dtype=m.{fdt})")
    add(f"farange_step_nan_{fdt}", f"m.arange(0, 1, float('nan'), dtype=m.{fdt})")
    add(f"farange_step_neg_{fdt}", f"m.arange(0, 1, -1, dtype=m.{fdt})")
    add(f"fbucketize_nan_{fdt}", f"m.bucketize(m.tensor([float('nan'), 1.], dtype=m.{fdt}), m.tensor([0., 1., float('nan')], dtype=m.{fdt}))")
    add(f"fsearchsorted_{fdt}", f"m.searchsorted(m.tensor([3., 1.], dtype=m.{fdt}), m.tensor([float('nan'), 2.], dtype=m.{fdt}))")
    add(f"fquantile_nan_{fdt}", f"m.quantile(m.tensor([float('nan'), 1.], dtype=m.float32), 0.5)")
    add(f"fquantile_q_{fdt}", f"m.quantile(m.tensor([0., 1.], dtype=m.float32), 1.5)")
    add(f"fquantile_q_nan_{fdt}", f"m.quantile(m.tensor([0., 1.], dtype=m.float32), float('nan'))")
    add(f"fmultinomial_nan_{fdt}", f"m.multinomial(m.tensor([float('nan'), 1.], dtype=m.float32), 1)")
    add(f"fmultinomial_neg_{fdt}", f"m.multinomial(m.tensor([-1., 1.], dtype=m.float32), 1)")
    add(f"fmultinomial_inf_{fdt}", f"m.multinomial(m.tensor([float('inf'), 1.], dtype=m.float32), 1)")
    add(f"fmultinomial_zero_{fdt}", f"m.multinomial(m.tensor([0., 0.], dtype=m.float32), 1)")
    add(f"fbernoulli_p_{fdt}", f"m.bernoulli(m.tensor([1.5, -0.5], dtype=m.float32))")
    add(f"fbernoulli_nan_{fdt}", f"m.bernoulli(m.tensor([float('nan')], dtype=m.float32))")
    add(f"fnormal_std_neg_{fdt}", f"m.normal(m.zeros(2), m.tensor([-1., 1.]))")
    add(f"fnormal_std_nan_{fdt}", f"m.normal(0., float('nan'), (2,)).shape")
    add(f"fpoisson_neg_{fdt}", f"m.poisson(m.tensor([-1.]))")
    add(f"fpoisson_nan_{fdt}", f"m.poisson(m.tensor([float('nan')]))")
    add(f"fpoisson_inf_{fdt}", f"m.poisson(m.tensor([float('inf')]))")
    add(f"funiform_inf_{fdt}", f"m.empty(2).uniform_(0, float('inf'))")
    add(f"funiform_rev_{fdt}", f"m.empty(2).uniform_(1, 0)")
    add(f"fexponential_neg_{fdt}", f"m.empty(2).exponential_(-1)")
    add(f"fgeometric_{fdt}", f"m.empty(2).geometric_(1.5)")
    add(f"fcauchy_{fdt}", f"m.empty(2).cauchy_(0, -1)")
    add(f"flognormal_{fdt}", f"m.empty(2).log_normal_(0, -1)")
    add(f"frandom_{fdt}", f"m.empty(2, dtype=m.{fdt}).random_(0, 2**60)")
    add(f"frandom_rev_{fdt}", f"m.empty(2, dtype=m.{fdt}).random_(5, 2)")
    add(f"fnan_to_num_{fdt}", f"m.nan_to_num(m.tensor([float('nan'), float('inf'), -float('inf')], dtype=m.{fdt}))")
    add(f"fcumprod_{fdt}", f"m.cumprod(m.tensor([0., float('inf'), float('nan')], dtype=m.{fdt}), 0)")
    add(f"flogsumexp_{fdt}", f"m.logsumexp(m.tensor([float('inf'), float('inf')], dtype=m.{fdt}), 0)")
    add(f"flogsumexp_ninf_{fdt}", f"m.logsumexp(m.tensor([-float('inf'), -float('inf')], dtype=m.{fdt}), 0)")
    add(f"fsoftmax_inf_{fdt}", f"m.softmax(m.tensor([float('inf'), 1.], dtype=m.{fdt}), 0)")
    add(f"fnorm_inf_{fdt}", f"m.linalg.vector_norm(m.tensor([float('inf'), float('nan')], dtype=m.float32), ord=0)")


# --- part 4 ---
# 0-size through reductions and linalg
RED = ["sum","prod","mean","nansum","nanmean","amax","amin","max","min","argmax","argmin","std","var","median","nanmedian","mode","logsumexp","all","any","count_nonzero","norm","cumsum","cumprod","cummax","cummin","logcumsumexp","aminmax","std_mean","var_mean","sort","argsort","msort","unique","unique_consecutive","kthvalue","topk"]
for r in RED:
    for shape, dim in [("(0,)", None), ("(0,)", 0), ("(2,0)", 1), ("(2,0)", 0), ("(0,3)", 0), ("(0,3)", 1)]:
        a = "" if dim is None else f", {dim}"
        if r in ("kthvalue",): a = f", 1{a}"
        if r in ("topk",): a = f", 1{a}"
        if r in ("cumsum","cumprod","cummax","cummin","logcumsumexp") and dim is None: a = ", 0"
        if r == "aminmax" and dim is not None: a = f", dim={dim}"
        add(f"red0_{r}_{shape}_{dim}", f"m.{r}(m.ones{shape}{a})")
LIN = ["det","slogdet","inv","pinv","matrix_rank","svd","svdvals","eig","eigvals","eigh","eigvalsh","qr","cholesky","lu_factor","lu","matrix_norm","cond","matrix_exp","matrix_power","inv_ex","cholesky_ex","ldl_factor"]
for f in LIN:
    for shape in ["(0,0)", "(2,0,0)", "(0,3,3)", "(3,0)", "(0,3)"]:
        extra = ", 2" if f=="matrix_power" else ""
        add(f"lin0_{f}_{shape}", f"m.linalg.{f}(m.ones{shape}{extra})")
for f in ["solve", "lstsq", "solve_triangular"]:
    for sa, sb in [("(0,0)", "(0,2)"), ("(2,0,0)", "(2,0,1)"), ("(3,3)", "(3,0)"), ("(0,3)","(0,1)")]:
        extra = ", upper=True" if f=="solve_triangular" else ""
        add(f"lin0_{f}_{sa}_{sb}", f"m.linalg.{f}(m.ones{sa}, m.ones{sb}{extra})")
for f in ["mm","bmm","matmul","mv","dot","vdot","outer","addmm","tensordot","einsum","kron","cross","cdist","trace","tril","triu","diag","inner","chain_matmul","baddbmm","addbmm","addmv","addr"]:
    code = {"mm":"m.mm(m.ones(0,3), m.ones(3,0))", "bmm":"m.bmm(m.ones(2,0,3), m.ones(2,3,4))",
            "matmul":"m.matmul(m.ones(0), m.ones(0))","mv":"m.mv(m.ones(3,0), m.ones(0))","dot":"m.dot(m.ones(0), m.ones(0))",
            "vdot":"m.vdot(m.ones(0), m.ones(0))","outer":"m.outer(m.ones(0), m.ones(3))","addmm":"m.addmm(m.ones(2,2), m.ones(2,0), m.ones(0,2))",
            "tensordot":"m.tensordot(m.ones(0,2), m.ones(0,2), ([0],[0]))","einsum":"m.einsum('ij,jk->ik', m.ones(2,0), m.ones(0,3))",
            "kron":"m.kron(m.ones(0,2), m.ones(2,3))","cross":"m.linalg.cross(m.ones(0,3), m.ones(0,3))","cdist":"m.cdist(m.ones(0,3), m.ones(2,3))",
            "trace":"m.trace(m.ones(0,0))","tril":"m.tril(m.ones(0,3))","triu":"m.triu(m.ones(3,0), 2**40)","diag":"m.diag(m.ones(0))",
            "inner":"m.inner(m.ones(0), m.ones(0))","chain_matmul":"m.linalg.multi_dot([m.ones(2,0), m.ones(0,3), m.ones(3,2)])",
            "baddbmm":"m.baddbmm(m.ones(2,2,2), m.ones(2,2,0), m.ones(2,0,2))","addbmm":"m.addbmm(m.ones(2,2), m.ones(0,2,3), m.ones(0,3,2))",
            "addmv":"m.addmv(m.ones(2), m.ones(2,0), m.ones(0))","addr":"m.addr(m.ones(0,2), m.ones(0), m.ones(2))"}[f]
    add(f"mat0_{f}", code)
# nn layers with 0/negative sizes
for L in ["Linear(0, 3)", "Linear(3, 0)", "Linear(-1, 3)", "Conv2d(0, 3, 3)", "Conv2d(3, 3, 0)", "Conv2d(3, 3, -1)", "Conv2d(3, 3, 3, stride=0)",
          "Conv2d(3, 3, 3, groups=0)", "Conv2d(3, 3, 3, groups=2)", "Embedding(0, 3)", "Embedding(-1, 3)", "Embedding(3, 3, padding_idx=5)",
          "LSTM(0, 3)", "LSTM(3, 0)", "LSTM(3, 3, num_layers=0)", "GRU(3, -1)", "RNN(3, 3, num_layers=-1)", "BatchNorm1d(0)", "BatchNorm1d(-1)",
          "LayerNorm(0)", "LayerNorm(-1)", "GroupNorm(0, 3)", "GroupNorm(2, 3)", "MultiheadAttention(4, 3)", "MultiheadAttention(0, 1)",
          "MultiheadAttention(4, 0)", "Bilinear(0, 2, 3)", "ConvTranspose2d(3, 3, 3, output_padding=5)", "MaxPool2d(0)", "AvgPool2d(-1)",
          "AdaptiveAvgPool2d(-1)", "Flatten(5)", "Unflatten(1, (2, -1))", "PixelShuffle(0)", "Upsample(scale_factor=-1)",
          "TransformerEncoderLayer(4, 3)", "TransformerEncoderLayer(0, 1)", "Dropout(1.5)", "Dropout(-0.1)", "EmbeddingBag(0, 3)",
          "InstanceNorm1d(0)", "Softmax(5)", "LPPool1d(0, 2)", "Fold((2, 2), 0)", "ZeroPad2d(-5)", "ConstantPad1d(-10, 0.)", "ReflectionPad1d(5)"]:
    add(f"nn_ctor_{L}", f"mod=m.nn.{L}\nsum(p.numel() for p in mod.parameters())")
for L, x in [("Linear(0, 3)", "m.ones(2, 0)"), ("Linear(3, 0)", "m.ones(2, 3)"), ("Conv2d(3, 3, 3, groups=2)", "m.ones(1,3,5,5)"),
             ("LSTM(3, 3, num_layers=0)", "m.ones(2,1,3)"), ("BatchNorm1d(0)", "m.ones(2, 0)"), ("LayerNorm(0)", "m.ones(2, 0)"),
             ("Flatten(5)", "m.ones(2,3)"), ("ReflectionPad1d(5)", "m.ones(1,1,3)"), ("ZeroPad2d(-5)", "m.ones(1,1,3,3)"),
             ("ConstantPad1d(-10, 0.)", "m.ones(1,1,3)"), ("Embedding(3, 3, padding_idx=-3)", "m.tensor([0])"),
             ("EmbeddingBag(0, 3)", "m.tensor([[0]])"), ("Embedding(0, 3)", "m.tensor([0])"), ("MaxPool2d(5)", "m.ones(1,1,3,3)"),
             ("MaxPool2d(2, padding=2)", "m.ones(1,1,3,3)"), ("AvgPool2d(2, padding=5)", "m.ones(1,1,3,3)"),
             ("Unflatten(1, (2, -1))", "m.ones(2,3)"), ("PixelShuffle(2)", "m.ones(1,3,2,2)"), ("PixelUnshuffle(2)", "m.ones(1,1,3,3)"),
             ("Upsample(size=0)", "m.ones(1,1,3)"), ("BatchNorm1d(3)", "m.ones(1, 3)"), ("InstanceNorm1d(3)", "m.ones(1, 3, 1)"),
             ("GroupNorm(1, 3)", "m.ones(0, 3)"), ("CrossEntropyLoss()", "(m.ones(0, 3), m.ones(0, dtype=m.long))"),
             ("CrossEntropyLoss()", "(m.ones(2, 3), m.tensor([5, 0]))"), ("CrossEntropyLoss()", "(m.ones(2, 3), m.tensor([-1, 0]))"),
             ("CrossEntropyLoss(ignore_index=5)", "(m.ones(2, 3), m.tensor([5, 5]))"), ("NLLLoss()", "(m.ones(2, 3), m.tensor([3, 0]))"),
             ("NLLLoss(weight=m.ones(2))", "(m.ones(2, 3), m.tensor([2, 0]))"), ("CTCLoss()", "(m.ones(5,1,3).log_softmax(2), m.tensor([[1, 7]]), m.tensor([5]), m.tensor([2]))"),
             ("CTCLoss()", "(m.ones(5,1,3).log_softmax(2), m.tensor([[1, 1]]), m.tensor([9]), m.tensor([2]))"),
             ("CTCLoss()", "(m.ones(5,1,3).log_softmax(2), m.tensor([[1, 1]]), m.tensor([5]), m.tensor([-2]))"),
             ("MultiMarginLoss()", "(m.ones(2, 3), m.tensor([3, 0]))"), ("MultiLabelMarginLoss()", "(m.ones(2, 3), m.tensor([[3, 0, -1], [0,1,2]]))"),
             ("BCELoss()", "(m.tensor([1.5]), m.tensor([1.]))"), ("BCELoss()", "(m.tensor([float('nan')]), m.tensor([1.]))"),
             ("KLDivLoss()", "(m.ones(0), m.ones(0))"), ("MSELoss()", "(m.ones(0), m.ones(0))"),
             ("AdaptiveLogSoftmaxWithLoss(4, 10, [2, 20])", "(m.ones(2, 4), m.tensor([0, 1]))"),
             ("EmbeddingBag(3, 2, mode='max')", "(m.tensor([0, 1]), m.tensor([0, 5]))"),
             ("EmbeddingBag(3, 2, mode='sum')", "(m.tensor([0, 1]), m.tensor([1, 0]))"),
             ("EmbeddingBag(3, 2, mode='sum')", "(m.tensor([0, 1]), m.tensor([0, 0, 2]))"),
             ("EmbeddingBag(3, 2, mode='mean', include_last_offset=True)", "(m.tensor([0, 1]), m.tensor([0]))"),
             ]:
    add(f"nn_fwd_{L}_{x}", f"m.manual_seed(0)\nmod=m.nn.{L}\nx={x}\nr=mod(*x) if isinstance(x, tuple) else mod(x)\nr.shape if hasattr(r,'shape') else r[0].shape")
# DataLoader odd samplers
DL = [
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=0))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=-1))",
 "list(m.utils.data.DataLoader(list(range(5)), sampler=[0, 9]))",
 "list(m.utils.data.DataLoader(list(range(5)), sampler=[0, -1]))",
 "list(m.utils.data.DataLoader(list(range(5)), sampler=[0, 'a']))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_sampler=[[0, 1], [2]]))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_sampler=[[0, 1], []]))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_sampler=[[0, 1]], batch_size=2))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_sampler=[[0, 1]], shuffle=True))",
 "list(m.utils.data.DataLoader(list(range(5)), sampler=[0], shuffle=True))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=None))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=None, drop_last=True))",
 "list(m.utils.data.DataLoader([], batch_size=2))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2, num_workers=-1))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2, timeout=-1))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2, prefetch_factor=2))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2, persistent_workers=True))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2.5))",
 "list(m.utils.data.RandomSampler(list(range(5)), num_samples=0))",
 "list(m.utils.data.RandomSampler(list(range(5)), num_samples=-1))",
 "len(list(m.utils.data.RandomSampler(list(range(5)), replacement=True, num_samples=7)))",
 "list(m.utils.data.WeightedRandomSampler([0., 0.], 2))",
 "list(m.utils.data.WeightedRandomSampler([-1., 1.], 2))",
 "list(m.utils.data.WeightedRandomSampler([1., 1.], 3, replacement=False))",
 "list(m.utils.data.WeightedRandomSampler([float('nan'), 1.], 1))",
 "list(m.utils.data.WeightedRandomSampler([1., 1.], -1))",
 "list(m.utils.data.WeightedRandomSampler([[1., 1.]], 1))",
 "list(m.utils.data.BatchSampler([0, 1, 2], 0, False))",
 "list(m.utils.data.BatchSampler([0, 1, 2], 2, 'x'))",
 "list(m.utils.data.SubsetRandomSampler([]))",
 "list(m.utils.data.random_split(list(range(5)), [3, 3]))",
 "[len(x) for x in m.utils.data.random_split(list(range(5)), [0.5, 0.6])]",
 "[len(x) for x in m.utils.data.random_split(list(range(5)), [-1, 6])]",
 "[len(x) for x in m.utils.data.random_split(list(range(5)), [1.5, -0.5])]",
 "m.utils.data.Subset(list(range(5)), [9])[0]",
 "m.utils.data.TensorDataset(m.ones(3), m.ones(4))",
 "m.utils.data.ConcatDataset([])",
 "m.utils.data.ConcatDataset([[1, 2]])[-3]",
 "m.utils.data.ConcatDataset([[1, 2]])[2]",
 "list(m.utils.data.distributed.DistributedSampler(list(range(5)), num_replicas=2, rank=2))",
 "list(m.utils.data.distributed.DistributedSampler(list(range(5)), num_replicas=0, rank=0))",
 "list(m.utils.data.distributed.DistributedSampler(list(range(5)), num_replicas=2, rank=-1))",
 "list(m.utils.data.DataLoader(list(range(5)), batch_size=2, collate_fn=None))",
 "list(m.utils.data.DataLoader([{'a': 1}, {'b': 2}], batch_size=2))",
 "list(m.utils.data.DataLoader([(1, 2), (1,)], batch_size=2))",
 "list(m.utils.data.DataLoader([m.ones(2), m.ones(3)], batch_size=2))",
 "list(m.utils.data.DataLoader([np.ones(2), np.ones(3)], batch_size=2))",
 "list(m.utils.data.DataLoader(['a', 1], batch_size=2))",
 "list(m.utils.data.DataLoader([None, None], batch_size=2))",
 "list(m.utils.data.DataLoader([object()], batch_size=1))[0][0].__class__.__name__",
 "list(m.utils.data.DataLoader([np.array(['a'])], batch_size=1))",
 "list(m.utils.data.DataLoader([np.ones(2, dtype=object)], batch_size=1))",
 "list(m.utils.data.DataLoader([2**70, 1], batch_size=2))",
 "list(m.utils.data.DataLoader([1.5, 1], batch_size=2))",
 "list(m.utils.data.DataLoader([True, 1], batch_size=2))",
 "list(m.utils.data.DataLoader([1+2j, 1], batch_size=2))",
]
for i, c in enumerate(DL):
    add(f"dl_{i}", c)


# --- part 5 ---
PRE = """
import io, pickle, zipfile, os, struct
def good(obj, **kw):
    b = io.BytesIO(); m.save(obj, b, **kw); return b.getvalue()
def load(data, **kw):
    return m.load(io.BytesIO(data), **kw)
def rezip(data, edit):
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        for n in zin.namelist():
            d = zin.read(n)
            d = edit(n, d)
            if d is not None:
                z.writestr(n, d)
    return out.getvalue()
"""
def addp(cid, code): add(cid, PRE + code)
# truncations
for cut in [0, 1, 4, 22, 100, -1, -22, -100]:
    addp(f"trunc_zip_{cut}", f"d = good(m.arange(10.))\nload(d[:{cut}] if {cut} else b'')")
    addp(f"trunc_legacy_{cut}", f"d = good(m.arange(10.), _use_new_zipfile_serialization=False)\nload(d[:{cut}] if {cut} else b'')")
addp("garbage", "load(b'\\x00' * 100)")
addp("garbage_pk", "load(b'PK\\x03\\x04' + b'\\x00' * 100)")
addp("text", "load(b'hello world')")
# data file shorter than declared storage
addp("short_storage", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: x[:8] if '/data/' in n and not n.endswith('.pkl') else x))")
addp("empty_storage", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: b'' if '/data/' in n and not n.endswith('.pkl') else x))")
addp("missing_storage", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: None if '/data/' in n and not n.endswith('.pkl') else x))")
addp("missing_pkl", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: None if n.endswith('data.pkl') else x))")
addp("long_storage", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: x + b'\\x00' * 7 if '/data/' in n and not n.endswith('.pkl') else x))")
addp("odd_storage", "d = good(m.arange(10.))\nload(rezip(d, lambda n, x: x[:-1] if '/data/' in n and not n.endswith('.pkl') else x))")
addp("shared_storage_short", "t=m.arange(10.)\nd = good([t[:2], t[5:]])\nload(rezip(d, lambda n, x: x[:12] if '/data/' in n and not n.endswith('.pkl') else x))")
addp("view_past_short", "t=m.arange(10.)\nd = good(t[8:])\nload(rezip(d, lambda n, x: x[:16] if '/data/' in n and not n.endswith('.pkl') else x))")
# crafted pickles inside a valid zip
CRAFT = {
  "os_system": "b'cos\\nsystem\\n(S\"echo pwned\"\\ntR.'",
  "builtins_eval": "b'cbuiltins\\neval\\n(S\"1+1\"\\ntR.'",
  "builtins_getattr": "b'cbuiltins\\ngetattr\\n(cbuiltins\\nobject\\nS\"__class__\"\\ntR.'",
  "torch_rebuild_bad_size": None,
  "empty": "b''",
  "just_stop": "b'.'",
  "int": "b'K\\x05.'",
  "deep_nest": "b'(' * 100000 + b'l' * 0 + b'.'",
  "huge_list": "b']' + b'q\\x00' + b'.'",
  "bad_opcode": "b'\\xff.'",
  "persid_unknown": "b'(X\\x03\\x00\\x00\\x00fooq\\x00tQ.'",
  "persid_storage_bad": "b'(X\\x07\\x00\\x00\\x00storageq\\x00ctorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x03\\x00\\x00\\x00cpuK\\x05tQ.'",
  "reduce_numpy": "b'cnumpy.core.multiarray\\n_reconstruct\\n(cnumpy\\nndarray\\n(K\\x00tC\\x01btR.'",
  "collections_ordereddict": "b'ccollections\\nOrderedDict\\n)R.'",
  "torch_device": "b'ctorch\\ndevice\\nX\\x03\\x00\\x00\\x00cpu\\x85R.'",
  "torch_tensor_dtype": "b'ctorch\\nfloat32\\n.'",
  "subprocess": "b'csubprocess\\nPopen\\n(]X\\x04\\x00\\x00\\x00trueatR.'",
  "posix_system": "b'cposix\\nsystem\\nX\\x04\\x00\\x00\\x00true\\x85R.'",
  "stack_global": "b'\\x8c\\x02os\\x8c\\x06system\\x93X\\x04\\x00\\x00\\x00true\\x85R.'",
  "inst": "b'(ios\\nsystem\\nX\\x04\\x00\\x00\\x00true.'",
  "obj": "b'(cos\\nsystem\\nX\\x04\\x00\\x00\\x00trueo.'",
  "build_setstate": "b'ccollections\\nOrderedDict\\n)R}X\\x01\\x00\\x00\\x00a\\x85bK\\x01.'",
  "ext": "b'\\x82\\x01.'",
  "frame_big": "b'\\x80\\x04\\x95\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x7fK\\x01.'",
  "long4_huge": "b'\\x8b\\xff\\xff\\xff\\x7f.'",
  "binunicode_huge": "b'X\\xff\\xff\\xff\\x7fabc.'",
  "binbytes8_huge": "b'\\x8e\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x7f.'",
  "get_missing": "b'h\\x05.'",
  "pop_empty": "b'0.'",
  "setitem_empty": "b's.'",
  "tuple_mark_missing": "b't.'",
  "append_nolist": "b'K\\x01K\\x02a.'",
}
for k, v in CRAFT.items():
    if v is None: continue
    addp(f"craft_pkl_{k}", f"d = good(m.arange(3.))\nd = rezip(d, lambda n, x: {v} if n.endswith('data.pkl') else x)\nr = load(d)\ntype(r).__name__")
    addp(f"craft_pkl_wof_{k}", f"d = good(m.arange(3.))\nd = rezip(d, lambda n, x: {v} if n.endswith('data.pkl') else x)\nr = load(d, weights_only=False)\ntype(r).__name__" if k not in ("os_system","subprocess","posix_system","stack_global","inst","obj") else "0")
    addp(f"craft_raw_{k}", f"r = load({v})\ntype(r).__name__")
# rebuild_tensor with bad sizes in a crafted zip (torch._utils._rebuild_tensor_v2)
RB = """
class FakeStorage: pass
def make(size, stride, offset, nel=10, dtype='FloatStorage'):
    # protocol-2 pickle with persistent id for storage key '0'
    import pickletools
    p = io.BytesIO()
    class P(pickle.Pickler):
        def persistent_id(self, obj):
            if obj is FakeStorage:
                return ('storage', Glob('torch', dtype), '0', 'cpu', nel)
            return None
    class Glob:
        def __init__(self, mod, name): self.mod, self.name = mod, name
        def __reduce__(self): return (getattr, (__import__(self.mod), self.name))
    # build by hand
    import pickle as pk
    return None
"""
def rebuild(cid, size, stride, offset, nel=10, datalen=40, dtype="FloatStorage"):
    code = f"""
def enc(x):
    return pickle.dumps(x, protocol=2)[2:-1]
body = (b'\\x80\\x02' + b'ctorch._utils\\n_rebuild_tensor_v2\\n' + b'(' +
        b'(X\\x07\\x00\\x00\\x00storage' + b'ctorch\\n{dtype}\\n' + b'X\\x01\\x00\\x00\\x000' + b'X\\x03\\x00\\x00\\x00cpu' + enc({nel}) + b'tQ' +
        enc({offset}) + enc({size}) + enc({stride}) + b'\\x89' + b'ccollections\\nOrderedDict\\n)R' + b'tR.')
out = io.BytesIO()
with zipfile.ZipFile(out, 'w') as z:
    z.writestr('archive/data.pkl', body)
    z.writestr('archive/byteorder', 'little')
    z.writestr('archive/data/0', b'\\x01' * {datalen})
    z.writestr('archive/version', '3\\n')
d = out.getvalue()
r = load(d)
(tuple(r.shape), r.stride(), r.storage_offset(), r.sum().item() if r.numel() < 100 else 0)
"""
    addp(f"rebuild_{cid}", code)
rebuild("ok", (2, 3), (3, 1), 1)
rebuild("past_end", (4, 3), (3, 1), 0)
rebuild("neg_stride", (3,), (-1,), 2)
rebuild("neg_offset", (3,), (1,), -1)
rebuild("neg_size", (-3,), (1,), 0)
rebuild("huge_size", (2**62, 4), (1, 1), 0)
rebuild("huge_stride", (2,), (2**62,), 0)
rebuild("huge_offset", (1,), (1,), 2**62)
rebuild("overflow_i64", (2**63,), (1,), 0)
rebuild("nel_bigger_than_data", (10,), (1,), 0, nel=10, datalen=8)
rebuild("nel_huge", (1,), (1,), 0, nel=2**62, datalen=8)
rebuild("nel_negative", (1,), (1,), 0, nel=-1, datalen=8)
rebuild("data_longer", (10,), (1,), 0, nel=10, datalen=400)
rebuild("size_not_tuple", 5, (1,), 0)
rebuild("size_str", "'ab'", (1,), 0)
rebuild("stride_len_mismatch", (2, 2), (1,), 0)
rebuild("offset_float", (2,), (1,), 0.5)
rebuild("bad_dtype_storage", (2,), (1,), 0, dtype="NoSuchStorage")
rebuild("bool_storage_odd", (3,), (1,), 0, nel=3, datalen=2, dtype="BoolStorage")
rebuild("double_storage_short", (3,), (1,), 0, nel=3, datalen=20, dtype="DoubleStorage")
rebuild("zero_numel_huge_stride", (0, 5), (2**62, 2**62), 2**62)
# legacy format crafted
addp("legacy_magic_only", "import pickle\nload(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2))")
addp("legacy_bad_proto", "import pickle\nload(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(999, protocol=2))")
addp("legacy_trunc_keys", "d = good(m.arange(10.), _use_new_zipfile_serialization=False)\nload(d[:-30])")
addp("legacy_bad_numel", "d = good(m.arange(10.), _use_new_zipfile_serialization=False)\ni = d.rfind(struct.pack('<q', 10))\nload(d[:i] + struct.pack('<q', 2**62) + d[i+8:])")
addp("legacy_neg_numel", "d = good(m.arange(10.), _use_new_zipfile_serialization=False)\ni = d.rfind(struct.pack('<q', 10))\nload(d[:i] + struct.pack('<q', -5) + d[i+8:])")
addp("legacy_small_numel", "d = good(m.arange(10.), _use_new_zipfile_serialization=False)\ni = d.rfind(struct.pack('<q', 10))\nload(d[:i] + struct.pack('<q', 2) + d[i+8:])")
addp("legacy_roundtrip", "d = good(m.arange(10.), _use_new_zipfile_serialization=False)\nload(d)")
addp("zip_roundtrip", "d = good({'a': m.arange(10.), 'b': [1, 2]})\nload(d)")
addp("mmap_bytesio", "d = good(m.arange(10.))\nload(d, mmap=True)")
addp("weights_only_obj", "d = good(object)\nload(d)")
addp("weights_only_set", "d = good({1, 2})\nload(d)")
addp("weights_only_slice", "d = good(slice(1, 2))\nload(d)")
addp("weights_only_complex", "d = good(1+2j)\nload(d)")
addp("weights_only_bytearray", "d = good(bytearray(b'ab'))\nload(d)")
addp("weights_only_range", "d = good(range(3))\nload(d)")
addp("weights_only_frozenset", "d = good(frozenset([1]))\nload(d)")
addp("weights_only_np", "d = good(np.ones(2))\nload(d)")
addp("weights_only_np_scalar", "d = good(np.float64(2))\nload(d)")
addp("weights_only_dtype", "d = good(m.float16)\nload(d)")
addp("weights_only_device", "d = good(m.device('cpu'))\nload(d)")
addp("weights_only_size", "d = good(m.Size([1, 2]))\nload(d)")
addp("weights_only_param", "d = good(m.nn.Parameter(m.ones(2)))\nload(d)")
addp("weights_only_module", "d = good(m.nn.Linear(2, 2))\nload(d)")
addp("weights_only_ordered", "import collections\nd = good(collections.OrderedDict(a=1))\nload(d)")
addp("weights_only_defaultdict", "import collections\nd = good(collections.defaultdict(list))\nload(d)")
addp("weights_only_counter", "import collections\nd = good(collections.Counter('aab'))\nload(d)")
addp("weights_only_sparse", "d = good(m.ones(2).to_sparse())\nload(d)")
addp("weights_only_qint", "d = good(m.ones(2, dtype=m.uint16))\nload(d)")
addp("weights_only_namedtuple", "d = good(m.return_types.max((m.ones(1), m.ones(1))) if hasattr(m, 'return_types') else 0)\nload(d)")
addp("map_location_bad", "d = good(m.arange(3.))\nload(d, map_location='nosuchdev')")
addp("map_location_fn", "d = good(m.arange(3.))\nload(d, map_location=lambda s, l: 5)")
addp("map_location_dict", "d = good(m.arange(3.))\nload(d, map_location={'cpu': 'meta'})")
addp("load_str_missing", "m.load('/nonexistent/file.pt')")
addp("load_dir", "m.load('/tmp')")
addp("load_none", "m.load(None)")
addp("save_to_dir", "m.save(1, '/tmp')")
addp("save_closed", "b = io.BytesIO(); b.close(); m.save(1, b)")
addp("load_text_io", "m.load(io.StringIO('abc'))")
addp("pickle_protocol_bad", "good(1, pickle_protocol=99)")
addp("pickle_protocol_neg", "load(good(m.ones(2), pickle_protocol=-1))")
addp("pickle_protocol_0", "load(good(m.ones(2), pickle_protocol=0))")
addp("pickle_protocol_1", "load(good(m.ones(2), pickle_protocol=1))")
addp("tensor_pickle_plain", "pickle.loads(pickle.dumps(m.arange(3.)[1:]))")
addp("storage_pickle_plain", "pickle.loads(pickle.dumps(m.arange(3.).untyped_storage())).nbytes()")


# --- part 6 ---
B = ["2**62", "2**63-1", "-2**63", "2**63-2", "2**62+1"]
for h in B:
    k = h.replace("**","p").replace("-","m").replace("+","a")
    add(f"p6_unfold_size_{k}", f"m.ones(10).unfold(0, {h}, 1)")
    add(f"p6_unfold_step_{k}", f"m.ones(10).unfold(0, 3, {h}).sum()")
    add(f"p6_slice_start_{k}", f"m.arange(10.)[{h}:{h}]")
    add(f"p6_slice_stop_{k}", f"m.arange(10.)[2:{h}]")
    add(f"p6_slice_step_{k}", f"m.arange(10.)[::{h}].tolist()")
    add(f"p6_slice_neg_{k}", f"m.arange(10.)[-{h}:] if {h} > 0 else 0")
    add(f"p6_narrow_neg_{k}", f"m.arange(10.).narrow(0, -1, {h})")
    add(f"p6_split_sizes_{k}", f"m.arange(10.).split([{h}, 10 - ({h})])")
    add(f"p6_tensor_split_{k}", f"m.arange(10.).tensor_split([{h}, 3])")
    add(f"p6_index_select_neg_{k}", f"m.arange(10.).index_select(0, m.tensor([{h}]))")
    add(f"p6_diagonal_off_{k}", f"m.ones(3,3).diagonal({h})")
    add(f"p6_roll_{k}", f"m.arange(5).roll({h})")
    add(f"p6_movedim_{k}", f"m.ones(2,3).movedim(0, {h})")
    add(f"p6_transpose_{k}", f"m.ones(2,3).transpose(0, {h})")
    add(f"p6_expand_neg_{k}", f"m.ones(1).expand({h}, 2)")
    add(f"p6_stride_view_{k}", f"m.ones(4).as_strided([2], [1], {h})")
    add(f"p6_view_dtype_{k}", f"m.ones(4).view(m.int8).as_strided([2], [{h}])")
    add(f"p6_storage_offset_setitem_{k}", f"t=m.ones(4)\nt.set_(t.untyped_storage(), {h}, (0,), (1,))\nt.shape")
    add(f"p6_linspace_steps_{k}", f"m.linspace(0, 1, steps={h})")
    add(f"p6_arange_float_{k}", f"m.arange(0., float({h}), 1.)")
    add(f"p6_arange_int_{k}", f"m.arange({h}, 0, -1)")
    add(f"p6_cumsum_huge_expand_{k}", f"m.ones(1).expand({h}).cumsum(0)" if not h.startswith("-") else "0")
    add(f"p6_nonzero_huge_{k}", f"m.ones(1).expand({h}).nonzero()" if not h.startswith("-") else "0")
    add(f"p6_unique_huge_{k}", f"m.ones(1).expand({h}).unique()" if not h.startswith("-") else "0")
    add(f"p6_sort_huge_{k}", f"m.ones(1).expand({h}).sort()" if not h.startswith("-") else "0")
    add(f"p6_argmax_huge_{k}", f"m.ones(1).expand({h}).argmax()" if not h.startswith("-") else "0")
    add(f"p6_contig_huge_{k}", f"m.ones(1,1).expand({h}, 2).contiguous()" if not h.startswith("-") else "0")
    add(f"p6_bmm_huge_{k}", f"m.ones(1,1,1).expand({h},1,1).bmm(m.ones(1,1,1).expand({h},1,1))" if not h.startswith("-") else "0")
    add(f"p6_mm_huge_{k}", f"m.ones(1,1).expand({h},1).mm(m.ones(1,1))" if not h.startswith("-") else "0")
    add(f"p6_index_huge_{k}", f"m.ones(1).expand({h})[m.tensor([0, -1])]" if not h.startswith("-") else "0")
    add(f"p6_tolist_huge_{k}", f"m.ones(1).expand({h}).tolist()" if not h.startswith("-") else "0")
    add(f"p6_numpy_huge_{k}", f"m.ones(1).expand({h}).numpy().shape" if not h.startswith("-") else "0")
    add(f"p6_repr_huge_{k}", f"len(repr(m.ones(1).expand({h})))" if not h.startswith("-") else "0")
    add(f"p6_eq_huge_{k}", f"m.equal(m.ones(1).expand({h}), m.ones(1).expand({h}))" if not h.startswith("-") else "0")
    add(f"p6_allclose_huge_{k}", f"m.allclose(m.ones(1).expand({h}), m.ones(1).expand({h}))" if not h.startswith("-") else "0")
# odd buffers
for c in [
 "m.from_numpy(np.ones(3)[::-1])", "m.from_numpy(np.ones((3,3))[:, ::-1])", "m.from_numpy(np.frombuffer(b'abcdefgh', dtype=np.float32))",
 "m.from_numpy(np.frombuffer(b'abcdefgh', dtype=np.float32)).add_(1)", "m.from_numpy(np.ones(0))", "m.from_numpy(np.ones((0, 3))[:, ::-1])",
 "m.from_numpy(np.ones(5, dtype=np.uint8)[1:].view(np.int32))", "m.from_numpy(np.zeros(9, dtype=np.uint8)[1:].view(np.float64))",
 "m.from_numpy(np.zeros(9, dtype=np.uint8)[1:].view(np.float64)).sum()", "m.from_numpy(np.lib.stride_tricks.as_strided(np.zeros(2), (3,), (0,)))",
 "m.from_numpy(np.lib.stride_tricks.as_strided(np.zeros(2), (3,), (0,))).add_(1)", "m.from_numpy(np.array([1, 2], dtype=object))",
 "m.from_numpy(np.array(['a']))", "m.from_numpy(np.zeros(3, dtype='>f4'))", "m.from_numpy(np.zeros(3, dtype=np.float128))" ,
 "m.from_numpy(np.zeros(3, dtype=np.uint64))", "m.from_numpy(np.zeros(3, dtype=np.complex256))", "m.from_numpy(np.zeros(3, dtype='M8[s]'))",
 "m.from_numpy(np.zeros((2,), dtype=[('a', 'f4')]))", "m.from_numpy(np.float64(3))", "m.from_numpy(np.zeros(()))", "m.from_numpy([1, 2])",
 "m.frombuffer(b'abcd', dtype=m.float32)", "m.frombuffer(b'abcd', dtype=m.float32).add_(1)", "m.frombuffer(b'abc', dtype=m.float32)",
 "m.frombuffer(b'', dtype=m.float32)", "m.frombuffer(bytearray(8), dtype=m.float32, count=3)", "m.frombuffer(bytearray(8), dtype=m.float32, offset=9)",
 "m.frombuffer(bytearray(8), dtype=m.float32, offset=-1)", "m.frombuffer(bytearray(8), dtype=m.float32, count=-2)", "m.frombuffer(bytearray(8), dtype=m.float32, offset=1)",
 "m.frombuffer(bytearray(8), dtype=m.float32, offset=2**62)", "m.frombuffer(bytearray(8), dtype=m.float32, count=2**62)", "m.frombuffer(memoryview(bytearray(16))[::2], dtype=m.uint8)",
 "m.frombuffer(np.ones((2,2))[:, 0], dtype=m.float64)", "m.frombuffer(1, dtype=m.float32)", "m.frombuffer(bytearray(8), dtype=m.float32, count=0)",
 "m.frombuffer(bytearray(7), dtype=m.float32, offset=3)", "m.frombuffer(bytearray(4), dtype=m.bool)", "m.frombuffer(bytearray(4), dtype=m.complex64)",
 "m.from_dlpack(np.ones(3)[::-1])", "m.from_dlpack(np.ones(0))", "m.from_dlpack(np.frombuffer(b'abcdefgh', dtype=np.float32))",
 "m.from_dlpack(np.ones((3,3))[:, ::2])", "m.from_dlpack(np.lib.stride_tricks.as_strided(np.zeros(2), (3,), (0,)))", "m.from_dlpack(np.zeros(9, dtype=np.uint8)[1:].view(np.float64))",
 "m.from_dlpack(np.zeros(3, dtype=np.float16))", "m.from_dlpack(np.zeros(3, dtype=bool))", "m.from_dlpack(np.zeros(3, dtype=np.complex64))", "m.from_dlpack(1)",
 "m.as_tensor(np.ones(3)[::-1])", "m.tensor(np.ones(3)[::-1])", "m.asarray(np.ones(3)[::-1])", "m.asarray(memoryview(b'ab'))", "m.asarray(b'ab')",
 "m.asarray(bytearray(4), dtype=m.float32)", "m.tensor(memoryview(bytearray(8)).cast('d'))", "m.tensor([[1, 2], [3]])", "m.tensor([1, 'a'])",
 "m.tensor([[]])", "m.tensor([[], []]).shape", "m.tensor([2**64])", "m.tensor([2**63])", "m.tensor([-2**63-1])", "m.tensor([1e400])", "m.tensor([1, 2**63])",
 "m.tensor(2**63, dtype=m.uint64)", "m.tensor([1.5], dtype=m.int64)", "m.tensor([float('nan')], dtype=m.int64)", "m.tensor([float('inf')], dtype=m.int32)",
 "m.tensor([300], dtype=m.uint8)", "m.tensor([-1], dtype=m.uint8)", "m.tensor([1+1j], dtype=m.float32)", "m.tensor([True, 2.5])", "m.tensor(np.ones(3, dtype=object))",
 "m.tensor([m.ones(2), m.ones(3)])", "m.tensor([m.ones(2), 1])", "m.tensor([np.float64(1), m.tensor(2.)])", "m.tensor([[1]] * 2, dtype=m.bool)",
]:
    add(f"p6_buf_{c[:80]}", c)


# --- part 7 ---
for dt in ["float32", "int64", "bool", "complex64", "float16", "uint8"]:
    z = f"m.zeros(3, 4, dtype=m.{dt})"
    add(f"gather_dim1_oob_{dt}", f"m.gather({z}, 1, m.tensor([[4]]))")
    add(f"gather_idx_big_shape_{dt}", f"m.gather({z}, 1, m.zeros(5, 1, dtype=m.long))")
    add(f"gather_idx_int32_{dt}", f"m.gather({z}, 1, m.zeros(1, 1, dtype=m.int32))")
    add(f"gather_idx_float_{dt}", f"m.gather({z}, 1, m.zeros(1, 1))")
    add(f"scatter_src_small_{dt}", f"{z}.scatter_(1, m.zeros(3, 4, dtype=m.long), m.ones(1, 1, dtype=m.{dt}))")
    add(f"scatter_idx_big_{dt}", f"{z}.scatter_(1, m.zeros(4, 4, dtype=m.long), m.ones(4, 4, dtype=m.{dt}))")
    add(f"scatter_neg_{dt}", f"{z}.scatter_(1, m.tensor([[-1]]), m.ones(1, 1, dtype=m.{dt}))")
    add(f"scatter_reduce_bad_{dt}", f"{z}.scatter_reduce_(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.{dt}), 'nope')")
    add(f"scatter_reduce_mean_{dt}", f"{z}.scatter_reduce(1, m.tensor([[0, 0]]), m.ones(1, 2, dtype=m.{dt}), 'mean', include_self=False)")
    add(f"index_put_bool_mismatch_{dt}", f"{z}.index_put_((m.ones(2, dtype=m.bool),), m.tensor(1, dtype=m.{dt}))")
    add(f"index_put_bool_2d_{dt}", f"{z}.index_put_((m.ones(3, 5, dtype=m.bool),), m.tensor(1, dtype=m.{dt}))")
    add(f"index_put_values_shape_{dt}", f"{z}.index_put_((m.tensor([0, 1]),), m.ones(3, 4, dtype=m.{dt}))")
    add(f"setitem_mask_{dt}", f"t={z}\nt[m.ones(3, 4, dtype=m.bool)] = m.ones(5, dtype=m.{dt})\nt")
    add(f"setitem_tuple_many_{dt}", f"t={z}\nt[0, 0, 0] = 1")
    add(f"setitem_none_ell_{dt}", f"t={z}\nt[None, ..., None, 1] = 1\nt")
    add(f"getitem_float_{dt}", f"{z}[1.5]")
    add(f"getitem_list_neg_{dt}", f"{z}[[-4]]")
    add(f"getitem_list_oob_{dt}", f"{z}[[0, 3]]")
    add(f"getitem_tensor_uint8_{dt}", f"{z}[m.tensor([1, 0, 1], dtype=m.uint8)]")
    add(f"getitem_empty_list_{dt}", f"{z}[[]]")
    add(f"getitem_nested_empty_{dt}", f"{z}[[[]]]")
    add(f"getitem_bool_scalar_{dt}", f"{z}[True, False]")
    add(f"getitem_mixed_adv_{dt}", f"{z}[m.tensor([0, 2]), :, None][..., m.tensor([1, 3])].shape")
    add(f"index_fill_2d_idx_{dt}", f"{z}.index_fill_(1, m.tensor([[0]]), 1)")
    add(f"index_copy_src_mismatch_{dt}", f"{z}.index_copy_(1, m.tensor([0, 1]), m.ones(3, 3, dtype=m.{dt}))")
    add(f"index_add_alpha_{dt}", f"{z}.index_add_(1, m.tensor([0, 0]), m.ones(3, 2, dtype=m.{dt}), alpha=2)")
    add(f"take_along_oob_{dt}", f"m.take_along_dim({z}, m.tensor([[4]]), 1)")
    add(f"take_along_neg_{dt}", f"m.take_along_dim({z}, m.tensor([[-1]]), 1)")
    add(f"masked_scatter_{dt}", f"{z}.masked_scatter_(m.ones(3, 4, dtype=m.bool), m.ones(5, dtype=m.{dt}))")
    add(f"masked_select_bcast_{dt}", f"m.masked_select({z}, m.ones(2, 1, 4, dtype=m.bool)).shape")
    add(f"put_oob_{dt}", f"{z}.put_(m.tensor([12]), m.ones(1, dtype=m.{dt}))")
    add(f"put_neg_{dt}", f"{z}.put_(m.tensor([-12]), m.ones(1, dtype=m.{dt}))")
    add(f"put_neg_oob_{dt}", f"{z}.put_(m.tensor([-13]), m.ones(1, dtype=m.{dt}))")
    add(f"index_select_2d_{dt}", f"m.index_select({z}, 0, m.tensor([[0]]))")
    add(f"nonzero_{dt}", f"m.nonzero({z}.view(-1)[::5])")
    add(f"where1_{dt}", f"m.where({z})")
    add(f"unique_dim_{dt}", f"m.unique({z}, dim=5)")
    add(f"unique_dim0_{dt}", f"m.unique(m.zeros(0, 3, dtype=m.{dt}), dim=1)")
    add(f"flip_dup_{dt}", f"{z}.flip(0, 0)")
    add(f"permute_dup_{dt}", f"{z}.permute(0, 0)")
    add(f"sum_dup_{dt}", f"{z}.sum((0, 0))")
    add(f"copy_overlap_{dt}", f"t=m.arange(6).to(m.{dt})\nt[1:].copy_(t[:-1])\nt")
    add(f"copy_overlap_rev_{dt}", f"t=m.arange(6).to(m.{dt})\nt[:-1].copy_(t[1:])\nt")
    add(f"add_overlap_{dt}", f"t=m.arange(6).to(m.{dt})\nt[1:].add_(t[:-1])\nt")
    add(f"setitem_overlap_{dt}", f"t=m.arange(6).to(m.{dt})\nt[1:] = t[:-1]\nt")
    add(f"index_put_self_{dt}", f"t=m.arange(6).to(m.{dt})\nt[m.tensor([1,2,3])] = t[:3]\nt")
    add(f"clone_expand_setitem_{dt}", f"t=m.zeros(1, dtype=m.{dt}).expand(3)\nt[m.tensor([0])] = 1\nt")


# --- part 8 ---
PRE = PRE + """
def members(data):
    return {n: zipfile.ZipFile(io.BytesIO(data)).read(n) for n in zipfile.ZipFile(io.BytesIO(data)).namelist()}
"""
# sparse with corrupted indices
for val in [5, -1, 2**40, 2**63-1]:
    for layout in ["coo", "csr"]:
        mk = "m.tensor([[0., 1.], [2., 0.]]).to_sparse()" if layout == "coo" else "m.tensor([[0., 1.], [2., 0.]]).to_sparse_csr()"
        addp(f"p8_sparse_{layout}_idx_{val}", f"""
d = good({mk})
ms = members(d)
keys = sorted(n for n in ms if '/data/' in n and not n.endswith('.pkl'))
def edit(n, x):
    if n in keys and len(x) % 8 == 0 and x.count(struct.pack('<q', 1)) > 0:
        i = x.find(struct.pack('<q', 1))
        return x[:i] + struct.pack('<q', {val}) + x[i+8:]
    return x
r = load(rezip(d, edit))
r.to_dense()""")
addp("p8_size_huge", "load(good(m.Size([2**63-1, 2])))")
addp("p8_param_of_nontensor", "load(good(m.nn.Parameter(m.ones(2))))")
addp("p8_dtype_storage_mix", "t=m.arange(4.)\nload(good([t, t.view(m.int32)]))")
addp("p8_nested_tensor", "load(good(m.nested.nested_tensor([m.ones(2), m.ones(3)]))).is_nested")
addp("p8_complex32", "load(good(m.ones(2, dtype=m.complex32))).dtype")
addp("p8_meta", "load(good(m.ones(2, device='meta'))).shape")
addp("p8_zero_dim", "load(good(m.tensor(3.)))")
addp("p8_empty_huge_stride", "load(good(m.empty(0, 5).as_strided((0, 5), (2**40, 2**40))))")
addp("p8_noncontig", "load(good(m.arange(12.).view(3, 4).t()[1:]))")
addp("p8_mmap_file", f"import os, tempfile\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nm.save(m.arange(5.), p)\nm.load(p, mmap=True)")
addp("p8_mmap_trunc_file", f"import os, tempfile\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nm.save(m.arange(5000.), p)\nd=open(p,'rb').read()\nopen(p,'wb').write(d[:len(d)//2])\nm.load(p, mmap=True)")
addp("p8_mmap_trunc_file_after", f"import os, tempfile\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nm.save(m.arange(5000.), p)\nr = m.load(p, mmap=True)\nos.truncate(p, 100)\nr.shape")
addp("p8_legacy_mmap", f"import os, tempfile\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nm.save(m.arange(5.), p, _use_new_zipfile_serialization=False)\nm.load(p, mmap=True)")
addp("p8_weights_only_false_roundtrip_obj", "load(good({'a': (1, 2.5, 'x', None, b'y')}), weights_only=False)")
addp("p8_byteorder_big", "d=good(m.arange(3.))\nload(rezip(d, lambda n, x: b'big' if n.endswith('byteorder') else x))")
addp("p8_byteorder_weird", "d=good(m.arange(3.))\nload(rezip(d, lambda n, x: b'middle' if n.endswith('byteorder') else x))")
addp("p8_version_huge", "d=good(m.arange(3.))\nload(rezip(d, lambda n, x: b'99999' if n.endswith('/version') else x))")
addp("p8_version_junk", "d=good(m.arange(3.))\nload(rezip(d, lambda n, x: b'abc' if n.endswith('/version') else x))")
addp("p8_no_version", "d=good(m.arange(3.))\nload(rezip(d, lambda n, x: None if n.endswith('/version') else x))")
addp("p8_two_archives", "d=good(m.arange(3.))\nms=members(d)\nout=io.BytesIO()\nz=zipfile.ZipFile(out,'w')\n[z.writestr(n, x) for n, x in ms.items()]\n[z.writestr('other/' + n.split('/',1)[1], x) for n, x in ms.items()]\nz.close()\nload(out.getvalue())")


# --- part 9 ---
C = [
 "m.cat([])", "m.stack([])", "m.cat([m.ones(2), m.ones(2, 2)])", "m.cat([m.ones(2, 3), m.ones(2, 4)])", "m.cat([m.ones(0), m.ones(2, 2)])",
 "m.cat([m.ones(2)], dim=5)", "m.cat([m.ones(2), m.ones(2, dtype=m.int64)])", "m.stack([m.ones(2), m.ones(3)])", "m.cat((m.ones(2),) * 1000).shape",
 "m.einsum('', m.ones(2))", "m.einsum('i->j', m.ones(2))", "m.einsum('ii->i', m.ones(2, 3))", "m.einsum('i,i->', m.ones(2), m.ones(3))",
 "m.einsum('...i,...i', m.ones(2, 3), m.ones(3, 3))", "m.einsum('i', m.ones(2), m.ones(2))", "m.einsum('iiiiiiiiiiiiiiiiiiiiiiiiiiiiiii', m.ones(*[1]*31))",
 "m.einsum('ab,bc->ac', m.ones(0, 2), m.ones(2, 0))", "m.einsum('i->ii', m.ones(2))", "m.einsum('I->I', m.ones(2))", "m.einsum('i$->i', m.ones(2, 2))",
 "m.linalg.inv(m.zeros(2, 2))", "m.linalg.inv(m.tensor([[float('nan'), 1.], [1., 1.]]))", "m.linalg.det(m.tensor([[float('inf'), 1.], [1., 1.]]))",
 "m.linalg.cholesky(m.tensor([[-1., 0.], [0., 1.]]))", "m.linalg.cholesky(m.tensor([[float('nan'), 0.], [0., 1.]]))", "m.linalg.eigh(m.tensor([[float('nan'), 0.], [0., 1.]]))",
 "m.linalg.svd(m.tensor([[float('nan'), 0.], [0., 1.]]))", "m.linalg.solve(m.zeros(2, 2), m.ones(2))", "m.linalg.matrix_power(m.zeros(2, 2), -1)",
 "m.linalg.matrix_power(m.eye(2), -2**62)", "m.linalg.matrix_power(m.eye(2), 2**62)", "m.linalg.matrix_power(m.eye(2, dtype=m.int64) * 2, 70)",
 "m.linalg.norm(m.ones(2), ord='fro')", "m.linalg.norm(m.ones(2, 2), ord=3)", "m.linalg.vector_norm(m.ones(2), ord=float('nan'))",
 "m.linalg.vector_norm(m.ones(2, dtype=m.int64))", "m.linalg.matrix_rank(m.ones(2, 2), tol=-1)", "m.linalg.pinv(m.ones(2, 2), rtol=float('nan'))",
 "m.linalg.lstsq(m.ones(3, 2), m.ones(2, 1))", "m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1), driver='nope')", "m.linalg.eigvals(m.tensor([[float('inf'), 0.], [0., 1.]]))",
 "m.linalg.qr(m.ones(2, 3), mode='nope')", "m.linalg.householder_product(m.ones(2, 3), m.ones(3))", "m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.ones(3, 1))",
 "m.linalg.lu_solve(m.eye(2), m.tensor([5, 1], dtype=m.int32), m.ones(2, 1))", "m.lu_unpack(m.eye(2), m.tensor([5, 1], dtype=m.int32))",
 "m.linalg.ldl_solve(m.eye(2), m.tensor([5, 1], dtype=m.int32), m.ones(2, 1))", "m.cholesky_solve(m.ones(2, 1), m.zeros(2, 2))",
 "m.triangular_solve(m.ones(2, 1), m.zeros(2, 2))", "m.ormqr(m.ones(2, 2), m.ones(5), m.ones(2, 2))", "m.linalg.tensorinv(m.ones(4, 2, 2), ind=1)",
 "m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3))", "m.linalg.cross(m.ones(2), m.ones(2))", "m.cross(m.ones(3, 2), m.ones(3, 2))",
 "m.cdist(m.ones(2, 3), m.ones(2, 3), p=-1)", "m.cdist(m.ones(2, 3), m.ones(2, 3), p=float('nan'))", "m.cdist(m.ones(2, 3), m.ones(2, 4))",
 "m.pdist(m.ones(2, 3), p=-1)", "m.pdist(m.ones(1, 3))", "m.cov(m.ones(2, 3), correction=5)", "m.cov(m.ones(2, 3), fweights=m.tensor([-1, 1, 1]))",
 "m.cov(m.ones(2, 3), aweights=m.tensor([-1., 1., 1.]))", "m.corrcoef(m.ones(2, 3))", "m.histogram(m.ones(3), bins=-1)", "m.histogram(m.ones(3), bins=m.tensor([2., 1.]))",
 "m.histogramdd(m.ones(3, 2), bins=[2, 0])", "m.bucketize(m.ones(3), m.tensor([[1.]]))", "m.searchsorted(m.tensor([1., 2.]), m.ones(3), sorter=m.tensor([5, 0]))",
 "m.searchsorted(m.tensor([1., 2.]), m.ones(3), side='middle')", "m.searchsorted(m.tensor([1., 2.]), m.ones(3), side='left', right=True)",
 "m.stft(m.ones(10), 16, return_complex=True)", "m.stft(m.ones(100), 16, hop_length=0, return_complex=True)", "m.stft(m.ones(100), 16, win_length=32, return_complex=True)",
 "m.stft(m.ones(100), 16, window=m.ones(3), return_complex=True)", "m.istft(m.ones(9, 5, dtype=m.complex64), 16)", "m.istft(m.ones(9, 5, dtype=m.complex64), 16, hop_length=0)",
 "m.fft.fft(m.ones(4), n=0)", "m.fft.fft(m.ones(4), n=-1)", "m.fft.fft(m.ones(4), norm='nope')", "m.fft.fftn(m.ones(4), s=(2, 2))", "m.fft.irfft(m.ones(1, dtype=m.complex64))",
 "m.fft.hfft(m.ones(1, dtype=m.complex64))", "m.fft.fftfreq(-1)", "m.fft.fftfreq(0)", "m.fft.fftshift(m.ones(4), dim=5)", "m.fft.rfft(m.ones(4, dtype=m.complex64))",
 "m.nn.functional.interpolate(m.ones(1, 1, 3), size=0)", "m.nn.functional.interpolate(m.ones(1, 1, 3), scale_factor=0.)", "m.nn.functional.interpolate(m.ones(1, 1, 3), scale_factor=float('nan'))",
 "m.nn.functional.interpolate(m.ones(1, 1, 3), scale_factor=float('inf'))", "m.nn.functional.interpolate(m.ones(1, 1, 3), scale_factor=-1.)", "m.nn.functional.interpolate(m.ones(1, 1, 3), size=2, mode='bilinear')",
 "m.nn.functional.interpolate(m.ones(1, 1, 0), size=3)", "m.nn.functional.interpolate(m.ones(0, 1, 3), size=5).shape", "m.nn.functional.interpolate(m.ones(1, 1, 3), size=4, mode='nope')",
 "m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.full((1, 2, 2, 2), float('nan')))", "m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.full((1, 2, 2, 2), 1e30))",
 "m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.full((1, 2, 2, 2), float('inf')), padding_mode='reflection')", "m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.full((1, 2, 2, 2), -1e30), padding_mode='border', mode='nearest')",
 "m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.full((1, 2, 2, 2), float('nan')), mode='bicubic', padding_mode='reflection')",
 "m.nn.functional.affine_grid(m.ones(1, 2, 3), (1, 1, 0, 2))", "m.nn.functional.affine_grid(m.ones(1, 2, 3), (1, 1, -1, 2))",
 "m.nn.functional.embedding(m.tensor([0]), m.ones(3, 2), max_norm=-1.)", "m.nn.functional.embedding(m.tensor([0]), m.ones(3, 2), max_norm=float('nan'))",
 "m.nn.functional.max_pool2d(m.ones(1, 1, 3, 3), 2, return_indices=True, ceil_mode=True)", "m.nn.functional.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, 9]]]), 2)",
 "m.nn.functional.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, -1]]]), 2)", "m.nn.functional.max_unpool2d(m.ones(1, 1, 1, 2), m.tensor([[[[0, 2**40]]]]), 2)",
 "m.nn.functional.fractional_max_pool2d(m.ones(1, 1, 4, 4), 2, output_size=5)", "m.nn.functional.fractional_max_pool2d(m.ones(1, 1, 4, 4), 2, output_ratio=1.5)",
 "m.nn.functional.adaptive_max_pool1d(m.ones(1, 1, 0), 2)", "m.nn.functional.adaptive_avg_pool1d(m.ones(1, 1, 3), 0)", "m.nn.functional.lp_pool1d(m.ones(1, 1, 4), -1., 2)",
 "m.nn.functional.lp_pool1d(m.ones(1, 1, 4), 0., 2)", "m.nn.functional.local_response_norm(m.ones(1, 2, 3), 0)", "m.nn.functional.normalize(m.zeros(2, 3), p=0)",
 "m.nn.functional.normalize(m.zeros(2, 3), p=-1)", "m.nn.functional.softmax(m.ones(2), dim=3)", "m.nn.functional.gumbel_softmax(m.ones(2), tau=0.).shape",
 "m.nn.functional.dropout(m.ones(2), p=1.).tolist()", "m.nn.functional.dropout(m.ones(2), p=float('nan'))", "m.nn.functional.alpha_dropout(m.ones(2), p=1., training=True)",
 "m.nn.functional.rrelu(m.ones(2), lower=1., upper=0., training=True)", "m.nn.functional.hardtanh(m.ones(2), 1., -1.)", "m.nn.functional.threshold(m.ones(2, dtype=m.int64), 0.5, 2.5)",
 "m.nn.functional.celu(m.ones(2), alpha=0.)", "m.nn.functional.elu(m.ones(2, dtype=m.int64))", "m.nn.functional.glu(m.ones(3))", "m.nn.functional.glu(m.ones(0))",
 "m.nn.functional.cosine_similarity(m.zeros(2), m.zeros(2))", "m.nn.functional.pairwise_distance(m.ones(2), m.ones(3))", "m.nn.functional.triplet_margin_loss(m.ones(2), m.ones(2), m.ones(3))",
 "m.nn.functional.cross_entropy(m.ones(2, 3), m.ones(2, 3) * 2)", "m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 1]), label_smoothing=1.5)",
 "m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(2))", "m.nn.functional.cross_entropy(m.ones(0, 3), m.ones(0, dtype=m.long), reduction='mean')",
 "m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0, 1]), reduction='nope')", "m.nn.functional.binary_cross_entropy(m.ones(2), m.ones(3))",
 "m.nn.functional.binary_cross_entropy_with_logits(m.ones(2), m.ones(2), pos_weight=m.ones(3))", "m.nn.functional.kl_div(m.ones(2), m.ones(2), reduction='nope')",
 "m.nn.functional.poisson_nll_loss(m.ones(2), m.ones(2), eps=-1.)", "m.nn.functional.gaussian_nll_loss(m.ones(2), m.ones(2), -m.ones(2))",
 "m.nn.functional.huber_loss(m.ones(2), m.ones(2), delta=-1.)", "m.nn.functional.smooth_l1_loss(m.ones(2), m.ones(2), beta=-1.)", "m.nn.functional.margin_ranking_loss(m.ones(2), m.ones(2), m.ones(3))",
 "m.nn.functional.multi_margin_loss(m.ones(2, 3), m.tensor([0, 1]), p=3)", "m.nn.functional.hinge_embedding_loss(m.ones(2), m.ones(3))",
 "m.nn.functional.scaled_dot_product_attention(m.ones(1, 2, 3), m.ones(1, 4, 3), m.ones(1, 5, 3))", "m.nn.functional.scaled_dot_product_attention(m.ones(1, 0, 3), m.ones(1, 0, 3), m.ones(1, 0, 3)).shape",
 "m.nn.functional.scaled_dot_product_attention(m.ones(1, 2, 3), m.ones(1, 2, 3), m.ones(1, 2, 3), attn_mask=m.zeros(1, 2, 2, dtype=m.bool))",
 "m.nn.functional.scaled_dot_product_attention(m.ones(1, 2, 3), m.ones(1, 2, 3), m.ones(1, 2, 3), scale=float('nan'))",
 "m.nn.functional.multi_head_attention_forward(m.ones(2, 1, 4), m.ones(2, 1, 4), m.ones(2, 1, 4), 4, 3, m.ones(12, 4), m.ones(12), None, None, False, 0., m.ones(4, 4), m.ones(4))",
 "m.nn.functional.layer_norm(m.ones(2, 3), (4,))", "m.nn.functional.layer_norm(m.ones(2, 3), (3,), eps=-1.)", "m.nn.functional.group_norm(m.ones(2, 3), 2)",
 "m.nn.functional.batch_norm(m.ones(2, 3), m.ones(4), m.ones(4))", "m.nn.functional.batch_norm(m.ones(1, 3), None, None, training=True)", "m.nn.functional.instance_norm(m.ones(1, 3, 1))",
 "m.nn.functional.rms_norm(m.ones(2, 3), (3,), eps=-1.)", "m.nn.functional.conv1d(m.ones(1, 1, 3), m.ones(1, 1, 2), padding='nope')", "m.nn.functional.conv1d(m.ones(1, 1, 3), m.ones(1, 1, 2), padding='same', stride=2)",
 "m.nn.functional.conv_transpose1d(m.ones(1, 1, 3), m.ones(1, 1, 2), output_padding=-1)", "m.nn.functional.conv_transpose1d(m.ones(1, 1, 3), m.ones(1, 1, 2), padding=10)",
 "m.nn.functional.ctc_loss(m.ones(5, 1, 3).log_softmax(2), m.tensor([[1, 1]]), m.tensor([5]), m.tensor([2]), blank=5)",
 "m.nn.functional.ctc_loss(m.ones(5, 1, 3).log_softmax(2), m.tensor([[1, 1]]), m.tensor([5]), m.tensor([2]), blank=-1)",
 "m.nn.functional.ctc_loss(m.ones(5, 1, 3).log_softmax(2), m.tensor([[1, 1, 1, 1, 1, 1, 1]]), m.tensor([5]), m.tensor([7]))",
]
for i, c in enumerate(C):
    add(f"m9_{i}_{c[:70]}", c)


# --- part 10 ---
C = [
 "m.UntypedStorage(-1)", "m.UntypedStorage(2**62)", "m.UntypedStorage(2**63)", "m.UntypedStorage([1, 2, 300])", "m.UntypedStorage([1, -1])",
 "m.UntypedStorage(b'abc').tolist()", "m.UntypedStorage(4).copy_(m.UntypedStorage(8))", "m.UntypedStorage(8).copy_(m.UntypedStorage(4))",
 "m.UntypedStorage(4)[5]", "m.UntypedStorage(4)[-5]", "m.UntypedStorage(4)[1:2**62].nbytes()", "m.UntypedStorage(4)[::2]",
 "s = m.UntypedStorage(4)\ns[0] = 256", "s = m.UntypedStorage(4)\ns[0] = -1\ns.tolist()", "s = m.UntypedStorage(4)\ns[1:3] = 7\ns.tolist()",
 "m.UntypedStorage(4).fill_(300)", "m.UntypedStorage(4).resize_(-1)", "m.UntypedStorage(4).resize_(2**63)", "m.UntypedStorage(4).resize_(2**62)",
 "m.FloatStorage(3).tolist().__len__()", "m.FloatStorage(-1)", "m.FloatStorage([1, 'a'])", "m.DoubleStorage(2**61)",
 "m.tensor([], dtype=m.float32).set_(m.UntypedStorage(3))", "m.tensor([], dtype=m.float32).set_(m.UntypedStorage(3), 0, (1,))",
 "m.tensor([], dtype=m.float32).set_(m.UntypedStorage(8), 1, (1,))", "m.tensor([], dtype=m.float64).set_(m.UntypedStorage(8), 0, (1,), (1,)).shape",
 "m.Tensor(m.UntypedStorage(8)).shape", "m.Tensor(m.UntypedStorage(7))", "m.Tensor(-1)", "m.Tensor(2**62)", "m.Tensor(2, -1)", "m.Tensor('a')", "m.Tensor([[1], [2, 3]])",
 "m.ones(2).new(m.UntypedStorage(8)).shape", "m.ones(2).new(-1)", "m.ones(2).new(2**62)", "m.ones(2).new([1, 2], dtype=m.int64)",
 "m.ones(4).view(m.int8).shape", "m.ones(4)[1:].view(m.float64)", "m.ones(3).view(m.float64)", "m.ones(4, 3).view(m.float64)", "m.ones(3, 4)[:, :2].view(m.float64)",
 "m.ones(4).view(m.complex64).shape", "m.ones(3).view(m.complex64)", "m.ones(4, dtype=m.int8).view(m.bool)", "m.ones(0).view(m.float64).shape",
 "m.ones(1).expand(4).view(m.int8)", "m.ones(4).view(m.int8)[1:].view(m.float32)", "m.ones(2, 2).t().view(m.int8)", "m.ones(2, 2).t().view(m.float64)",
 "m.ones(4).untyped_storage()._new_shared(3).nbytes()" , "m.ones(4).share_memory_().untyped_storage().resize_(0)",
 "t = m.ones(4)\nu = t.view(m.int8)\nt.resize_(100)\nu.sum()", "t = m.ones(4)\nu = t[2:]\nt.resize_(1)\nu.tolist()",
 "t = m.ones(4)\nu = t[2:]\nt.set_()\nu.tolist()", "t = m.ones(4)\nu = t[2:]\nt.untyped_storage().resize_(4)\nu.tolist()",
 "t = m.ones(4)\nu = m.ones(0).set_(t.untyped_storage(), 3, (1,))\nt.untyped_storage().resize_(8)\nu.item()",
 "t = m.ones(4)\nm.ones(2).copy_(t.untyped_storage())", "t = m.ones(4)\nt.data = m.ones(2, dtype=m.int64)\nt", "t = m.ones(4)\nt.data = 5",
 "t = m.ones(4, requires_grad=True)\nt.data = m.ones(100)\n(t * 2).sum().backward()\nt.grad.shape",
 "t = m.ones(4)\nt.grad = m.ones(3)", "t = m.ones(4, requires_grad=True)\nt.grad = m.ones(4, dtype=m.int64)", "t = m.ones(4, requires_grad=True)\nt.grad = m.ones(1).expand(4)\nt.grad.stride()",
 "t = m.ones(4)\nt.requires_grad_()\nt.resize_(5)", "t = m.ones(4, dtype=m.int64)\nt.requires_grad_()", "m.ones(4).detach_().requires_grad_().add_(1)",
 "a = m.ones(4, requires_grad=True)\nb = a[:2]\nb.add_(1)\nb.sum().backward()\na.grad", "a = m.ones(4, requires_grad=True)\na.add_(1)",
 "a = m.ones(4, requires_grad=True).clone()\nb = a.view(2, 2)\nwith m.no_grad():\n    c = a.view(4)\nc.add_(1)\nb.sum().backward() if b.requires_grad else 0",
]
for i, c in enumerate(C):
    add(f"m10_{i}_{c[:70]}", c)
