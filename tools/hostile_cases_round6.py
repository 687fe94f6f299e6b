"""Hostile and odd inputs of hardening round 6, for tools/hostile_probe.py: safetensors
buffers with lying headers (overlapping, out-of-range, unsorted offsets, odd shapes and
dtypes; part A); checkpoint archives with duplicate or absent records, lying zip headers,
storage keys that name other members, and pickles that build odd objects under
weights_only (part B); shrunk storages under views through reads, writes, in-place ops,
indexing, copy_, to, the NumPy bridge and DLPack (part C); as_strided/view/unfold/expand
with huge or negative sizes and strides (part D); out= tensors aliasing an input (part E);
int64 overflow in the range factories, repeat/tile/kron/cartesian_prod (part F);
out-of-range indices on every indexing op (part G); zero-size dims (part H);
non-contiguous and overlapping inputs to the kernels with fast paths (part I); threads
racing on one tensor (part J); torch.jit.load of crafted archives (part K); DataLoader
workers that die or hang (part L).  Run::

    PYTHONPATH=$PWD python tools/hostile_probe.py tools/hostile_cases_round6.py
"""
CASES = []


def add(c, code):
    CASES.append((c, code))


# --- part A: safetensors ---
ST = """
import json, struct
st = __import__('safetensors.torch', fromlist=['load']) if m.__name__ == 'torch' else m.utils.safetensors
def buf(header, data=b'', n=None, pad=b''):
    h = (json.dumps(header) if not isinstance(header, (bytes, str)) else header)
    h = h.encode() if isinstance(h, str) else h
    h = h + pad
    return struct.pack('<Q', len(h) if n is None else n) + h + data
def t(dtype, shape, a, b):
    return {'dtype': dtype, 'shape': shape, 'data_offsets': [a, b]}
def res(d):
    return {k: (list(v.shape), str(v.dtype).split('.')[-1], v.flatten()[:8].tolist()) for k, v in sorted(d.items())}
"""


def addst(c, code):
    add("st_" + c, ST + code)


D16 = "bytes(range(16))"
addst("ok", f"res(st.load(buf({{'a': t('F32', [2, 2], 0, 16)}}, {D16})))")
addst("overlap", f"res(st.load(buf({{'a': t('F32', [2], 0, 8), 'b': t('F32', [2], 4, 12)}}, {D16})))")
addst("same_range", f"res(st.load(buf({{'a': t('F32', [4], 0, 16), 'b': t('F32', [4], 0, 16)}}, {D16})))")
addst("past_end", f"res(st.load(buf({{'a': t('F32', [8], 0, 32)}}, {D16})))")
addst("end_lt_begin", f"res(st.load(buf({{'a': t('F32', [0], 8, 4)}}, {D16})))")
addst("gap", f"res(st.load(buf({{'a': t('F32', [2], 0, 8), 'b': t('F32', [1], 12, 16)}}, {D16})))")
addst("trailing_data", f"res(st.load(buf({{'a': t('F32', [2], 0, 8)}}, {D16})))")
addst("numel_mismatch", f"res(st.load(buf({{'a': t('F32', [3], 0, 16)}}, {D16})))")
addst("neg_shape", f"res(st.load(buf({{'a': t('F32', [-1, 4], 0, 16)}}, {D16})))")
addst("huge_shape", f"res(st.load(buf({{'a': t('F32', [2**62, 2**62], 0, 16)}}, {D16})))")
addst("huge_shape_zero", f"res(st.load(buf({{'a': t('F32', [2**62, 0], 0, 0), 'b': t('F32', [4], 0, 16)}}, {D16})))")
addst("float_shape", f"res(st.load(buf({{'a': t('F32', [4.0], 0, 16)}}, {D16})))")
addst("str_shape", f"res(st.load(buf({{'a': t('F32', '4', 0, 16)}}, {D16})))")
addst("huge_offset", f"res(st.load(buf({{'a': t('F32', [4], 2**64 - 8, 2**64 + 8)}}, {D16})))")
addst("neg_offset", f"res(st.load(buf({{'a': t('F32', [4], -16, 0)}}, {D16})))")
addst("three_offsets", f"res(st.load(buf({{'a': {{'dtype': 'F32', 'shape': [4], 'data_offsets': [0, 8, 16]}}}}, {D16})))")
addst("no_offsets", f"res(st.load(buf({{'a': {{'dtype': 'F32', 'shape': [4]}}}}, {D16})))")
addst("bad_dtype", f"res(st.load(buf({{'a': t('F31', [4], 0, 16)}}, {D16})))")
addst("dtype_int", f"res(st.load(buf({{'a': t(5, [4], 0, 16)}}, {D16})))")
addst("header_list", f"res(st.load(buf([1, 2], {D16})))")
addst("header_not_json", f"res(st.load(buf('{{nope', {D16})))")
addst("header_not_utf8", f"res(st.load(buf(b'{{\\xff\\xfe}}', {D16})))")
addst("header_len_huge", f"res(st.load(buf({{'a': t('F32', [4], 0, 16)}}, {D16}, n=2**63)))")
addst("header_len_past", f"res(st.load(buf({{'a': t('F32', [4], 0, 16)}}, {D16}, n=10**6)))")
addst("header_len_short", f"res(st.load(buf({{'a': t('F32', [4], 0, 16)}}, {D16}, n=3)))")
addst("header_len_zero", f"res(st.load(buf({{}}, b'', n=0)))")
addst("too_short", "res(st.load(b'\\x01\\x00'))")
addst("empty", "res(st.load(b''))")
addst("dup_key", f"res(st.load(buf('{{\"a\": {{\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}, \"a\": {{\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 16]}}}}', {D16})))")
addst("metadata_int", f"res(st.load(buf({{'__metadata__': {{'x': 1}}, 'a': t('F32', [4], 0, 16)}}, {D16})))")
addst("metadata_list", f"res(st.load(buf({{'__metadata__': [1], 'a': t('F32', [4], 0, 16)}}, {D16})))")
addst("entry_not_dict", f"res(st.load(buf({{'a': 5}}, {D16})))")
addst("padding_spaces", f"res(st.load(buf({{'a': t('F32', [4], 0, 16)}}, {D16}, pad=b'    ')))")
addst("padding_nul", f"res(st.load(buf({{'a': t('F32', [4], 0, 16)}}, {D16}, pad=b'\\x00\\x00')))")
addst("bool_bytes", "res(st.load(buf({'a': t('BOOL', [4], 0, 4)}, bytes([0, 1, 2, 255]))))")
addst("unaligned_f64", "res(st.load(buf({'a': t('U8', [1], 0, 1), 'b': t('F64', [1], 1, 9)}, bytes(range(9)))))")
addst("scalar_shape", "res(st.load(buf({'a': t('F32', [], 0, 4)}, bytes(4))))")
addst("zero_numel", "res(st.load(buf({'a': t('F32', [0, 3], 0, 0)}, b'')))")
addst("f8", "res(st.load(buf({'a': t('F8_E4M3', [4], 0, 4)}, bytes(4))))")
addst("u16", "res(st.load(buf({'a': t('U16', [2], 0, 4)}, bytes(4))))")
addst("save_noncontig", "d = {'a': m.arange(6.).view(2, 3).t()}\nst.save(d)")
addst("save_shared", "x = m.arange(6.)\nst.save({'a': x, 'b': x[:3]})")
addst("save_empty_key", "len(st.save({'': m.ones(2)}))")
addst("save_metadata_key", "st.save({'__metadata__': m.ones(2)})")
addst("save_nontensor", "st.save({'a': 1})")
addst("save_meta_bad", "st.save({'a': m.ones(2)}, metadata={'x': 1})")
addst("roundtrip_bf16", "res(st.load(st.save({'a': m.arange(4.).to(m.bfloat16), 'b': m.ones(2, dtype=m.bool)})))")
addst("load_not_bytes", "st.load('abc')")

# --- part B: checkpoint archives ---
CK = """
import io, pickle, zipfile, struct
def good(obj, **kw):
    b = io.BytesIO(); m.save(obj, b, **kw); return b.getvalue()
def load(data, **kw):
    return m.load(io.BytesIO(data), **kw)
def members(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(n, z.read(n)) for n in z.namelist()]
def rezip(items):
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        for n, d in items:
            z.writestr(n, d)
    return out.getvalue()
def enc(x):
    return pickle.dumps(x, protocol=2)[2:-1]
def zipit(body, data, version='3\\n', prefix='archive'):
    items = [(prefix + '/data.pkl', body), (prefix + '/byteorder', 'little')]
    items += [(prefix + '/data/' + k, v) for k, v in data.items()]
    items.append((prefix + '/version', version))
    return rezip(items)
def st(key, dtype='FloatStorage', nel=4):
    return (b'(X\\x07\\x00\\x00\\x00storage' + b'ctorch\\n' + dtype.encode() + b'\\n' + b'X' +
            struct.pack('<I', len(key)) + key.encode() + b'X\\x03\\x00\\x00\\x00cpu' + enc(nel) + b'tQ')
def rb(storage, offset=0, size=(4,), stride=(1,), rg=b'\\x89'):
    return (b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + storage + enc(offset) + enc(size) + enc(stride) +
            rg + b'ccollections\\nOrderedDict\\n)R' + b'tR')
def summ(r):
    if hasattr(r, 'shape'):
        return (list(r.shape), r.tolist() if r.numel() < 50 else r.numel())
    return type(r).__name__
F4 = struct.pack('<4f', 1, 2, 3, 4)
"""


def addck(c, code):
    add("ck_" + c, CK + code)


# duplicate and absent records
addck("dup_data_pkl", "d = good(m.arange(3.))\nit = members(d)\nit += [(n, b'K\\x05.') for n, x in it if n.endswith('data.pkl')]\nsumm(load(rezip(it)))")
addck("dup_storage", "d = good(m.arange(3.))\nit = members(d)\nit += [(n, x[:4]) for n, x in it if '/data/' in n]\nsumm(load(rezip(it)))")
addck("no_version", "d = good(m.arange(3.))\nsumm(load(rezip([(n, x) for n, x in members(d) if not n.endswith('/version')])))")
addck("no_byteorder", "d = good(m.arange(3.))\nsumm(load(rezip([(n, x) for n, x in members(d) if not n.endswith('/byteorder')])))")
addck("byteorder_big", "d = good(m.arange(3.))\nsumm(load(rezip([(n, b'big' if n.endswith('/byteorder') else x) for n, x in members(d)])))")
addck("byteorder_bad", "d = good(m.arange(3.))\nsumm(load(rezip([(n, b'middle' if n.endswith('/byteorder') else x) for n, x in members(d)])))")
addck("version_huge", "d = good(m.arange(3.))\nsumm(load(rezip([(n, b'999999\\n' if n.endswith('/version') else x) for n, x in members(d)])))")
addck("version_text", "d = good(m.arange(3.))\nsumm(load(rezip([(n, b'abc\\n' if n.endswith('/version') else x) for n, x in members(d)])))")
addck("two_prefixes", "d = good(m.arange(3.))\nit = members(d)\nit += [('other/' + n.split('/', 1)[1], x) for n, x in it]\nsumm(load(rezip(it)))")
addck("prefix_nested", "d = zipit(rb(st('0')), {'0': F4}, prefix='a/b')\nsumm(load(d))")
addck("only_dirs", "summ(load(rezip([('archive/', b'')])))")
addck("empty_zip", "summ(load(rezip([])))")
addck("data_pkl_at_root", "summ(load(rezip([('data.pkl', b'K\\x05.')])))")
# storage keys naming other members, storages used at two dtypes / sizes
addck("key_traversal", "d = zipit(rb(st('../data.pkl', nel=1), size=(1,)), {'0': F4})\nsumm(load(d))")
addck("key_is_pkl", "d = zipit(rb(st('../version', nel=1), size=(1,)), {'0': F4})\nsumm(load(d))")
addck("key_abs", "d = zipit(rb(st('/etc/passwd', nel=1), size=(1,)), {'0': F4})\nsumm(load(d))")
addck("key_empty", "d = zipit(rb(st('', nel=4)), {'0': F4})\nsumm(load(d))")
addck("key_missing", "d = zipit(rb(st('7', nel=4)), {'0': F4})\nsumm(load(d))")
addck("storage_nel_huge", "d = zipit(rb(st('0', nel=2**61)), {'0': F4})\nsumm(load(d))")
addck("storage_nel_neg", "d = zipit(rb(st('0', nel=-4)), {'0': F4})\nsumm(load(d))")
addck("storage_nel_str", "d = zipit(b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + b'(X\\x07\\x00\\x00\\x00storagectorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x03\\x00\\x00\\x00cpuX\\x01\\x00\\x00\\x004tQ' + enc(0) + enc((4,)) + enc((1,)) + b'\\x89ccollections\\nOrderedDict\\n)RtR.', {'0': F4})\nsumm(load(d))")
addck("storage_two_dtypes", "body = b'(' + rb(st('0')) + rb(st('0', 'IntStorage')) + b'l.'\nsumm(load(zipit(body, {'0': F4})))")
addck("storage_two_nels", "body = b'(' + rb(st('0', nel=4)) + rb(st('0', nel=2), size=(2,)) + b'l.'\n[summ(x) for x in load(zipit(body, {'0': F4}))]")
addck("storage_two_nels_big_second", "body = b'(' + rb(st('0', nel=2), size=(2,)) + rb(st('0', nel=4)) + b'l.'\n[summ(x) for x in load(zipit(body, {'0': F4}))]")
addck("storage_bad_location", "d = zipit(rb(st('0')).replace(b'cpu', b'xpu'), {'0': F4})\nsumm(load(d))")
addck("storage_loc_cuda9", "d = zipit(rb(st('0')).replace(b'X\\x03\\x00\\x00\\x00cpu', b'X\\x06\\x00\\x00\\x00cuda:9'), {'0': F4})\nsumm(load(d, map_location='cpu'))")
addck("storage_bad_type", "d = zipit(rb(st('0', 'NoSuchStorage')), {'0': F4})\nsumm(load(d))")
addck("storage_type_os", "d = zipit(rb(b'(X\\x07\\x00\\x00\\x00storagecos\\nsystem\\nX\\x01\\x00\\x00\\x000X\\x03\\x00\\x00\\x00cpuK\\x04tQ'), {'0': F4})\nsumm(load(d))")
addck("persid_short_tuple", "d = zipit(b'(X\\x07\\x00\\x00\\x00storageX\\x01\\x00\\x00\\x000tQ.', {'0': F4})\nsumm(load(d))")
addck("persid_not_tuple", "d = zipit(b'K\\x05Q.', {'0': F4})\nsumm(load(d))")
addck("persid_module", "d = zipit(b'(X\\x06\\x00\\x00\\x00moduletQ.', {'0': F4})\nsumm(load(d))")
addck("rebuild_size_str", "d = zipit(rb(st('0'), size='ab'), {'0': F4})\nsumm(load(d))")
addck("rebuild_size_nested", "d = zipit(rb(st('0'), size=((4,),)), {'0': F4})\nsumm(load(d))")
addck("rebuild_stride_short", "d = zipit(rb(st('0'), size=(2, 2), stride=(1,)), {'0': F4})\nsumm(load(d))")
addck("rebuild_stride_huge", "d = zipit(rb(st('0'), size=(2, 2), stride=(2**62, 1)), {'0': F4})\nsumm(load(d))")
addck("rebuild_offset_huge", "d = zipit(rb(st('0'), offset=2**62), {'0': F4})\nsumm(load(d))")
addck("rebuild_size_zero_off_past", "d = zipit(rb(st('0'), offset=100, size=(0,)), {'0': F4})\nsumm(load(d))")
addck("rebuild_rg_true", "d = zipit(rb(st('0'), rg=b'\\x88'), {'0': F4})\nr = load(d)\n(summ(r), r.requires_grad)")
addck("rebuild_rg_int", "d = zipit(rb(st('0'), rg=b'K\\x07'), {'0': F4})\nr = load(d)\n(summ(r), r.requires_grad)")
addck("rebuild_bwhooks_nonempty", "d = zipit(b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0') + enc(0) + enc((4,)) + enc((1,)) + b'\\x89ccollections\\nOrderedDict\\n)R(K\\x01K\\x02ltR.', {'0': F4})\nsumm(load(d))")
addck("rebuild_extra_arg", "d = zipit(b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0') + enc(0) + enc((4,)) + enc((1,)) + b'\\x89ccollections\\nOrderedDict\\n)RK\\x01K\\x02K\\x03tR.', {'0': F4})\nsumm(load(d))")
addck("rebuild_few_args", "d = zipit(b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0') + enc(0) + b'tR.', {'0': F4})\nsumm(load(d))")
addck("rebuild_storage_int", "d = zipit(b'ctorch._utils\\n_rebuild_tensor_v2\\n(K\\x05' + enc(0) + enc((4,)) + enc((1,)) + b'\\x89ccollections\\nOrderedDict\\n)RtR.', {'0': F4})\nsumm(load(d))")
addck("rebuild_param_of_int", "d = zipit(b'ctorch._utils\\n_rebuild_parameter\\n(K\\x05\\x88ccollections\\nOrderedDict\\n)RtR.', {})\nsumm(load(d))")
addck("rebuild_param_rg_str", "d = zipit(b'ctorch._utils\\n_rebuild_parameter\\n(' + rb(st('0')) + b'X\\x01\\x00\\x00\\x00xccollections\\nOrderedDict\\n)RtR.', {'0': F4})\nr = load(d)\n(summ(r), r.requires_grad)")
# pickles that build odd objects
addck("build_on_tensor", "d = zipit(rb(st('0')) + b'}X\\x01\\x00\\x00\\x00aK\\x01sb.', {'0': F4})\nr = load(d)\n(summ(r), getattr(r, 'a', None))")
addck("build_on_tensor_dict_attr", "d = zipit(rb(st('0')) + b'}X\\x08\\x00\\x00\\x00__dict__K\\x01sb.', {'0': F4})\nsumm(load(d))")
addck("build_tensor_slots", "d = zipit(rb(st('0')) + b'(N}X\\x05\\x00\\x00\\x00shapeK\\x01stb.', {'0': F4})\nsumm(load(d))")
addck("build_on_ordereddict", "d = zipit(b'ccollections\\nOrderedDict\\n)R}X\\x01\\x00\\x00\\x00aK\\x01sb.', {})\nr = load(d)\n(dict(r), getattr(r, 'a', None))")
addck("build_on_int", "d = zipit(b'K\\x05}b.', {})\nsumm(load(d))")
addck("setitems_on_tensor", "d = zipit(rb(st('0')) + b'(K\\x00K\\x01u.', {'0': F4})\nsumm(load(d))")
addck("append_on_tensor", "d = zipit(rb(st('0')) + b'K\\x01a.', {'0': F4})\nsumm(load(d))")
addck("tensor_as_dict_key", "d = zipit(b'}' + rb(st('0')) + b'K\\x01s.', {'0': F4})\nr = load(d)\nsorted(type(k).__name__ for k in r)")
addck("list_self_ref", "d = zipit(b']q\\x00h\\x00a.', {})\nr = load(d)\nr[0] is r")
addck("dict_self_ref", "d = zipit(b'}q\\x00X\\x01\\x00\\x00\\x00ah\\x00s.', {})\nr = load(d)\nr['a'] is r")
addck("memo_huge_idx", "d = zipit(b'K\\x01r\\xff\\xff\\xff\\x7fj\\xff\\xff\\xff\\x7f.', {})\nsumm(load(d))")
addck("memo_get_unset", "d = zipit(b'K\\x01j\\x05\\x00\\x00\\x00.', {})\nsumm(load(d))")
addck("set_additems", "d = zipit(b'\\x80\\x04\\x8f(K\\x01K\\x02\\x90.', {})\nload(d)")
addck("frozenset", "d = zipit(b'\\x80\\x04(K\\x01\\x91.', {})\nload(d)")
addck("bytearray8", "d = zipit(b'\\x80\\x05\\x96\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00ab.', {})\nload(d)")
addck("next_buffer", "d = zipit(b'\\x80\\x05\\x97.', {})\nload(d)")
addck("readonly_buffer", "d = zipit(b'\\x80\\x05C\\x02ab\\x98.', {})\nload(d)")
addck("newobj_ordereddict", "d = zipit(b'\\x80\\x02ccollections\\nOrderedDict\\n)\\x81.', {})\ndict(load(d))")
addck("newobj_ex_tensor", "d = zipit(b'\\x80\\x04ctorch\\nTensor\\n)}\\x92.', {})\nsumm(load(d))")
addck("newobj_tensor", "d = zipit(b'\\x80\\x02ctorch\\nTensor\\n)\\x81.', {})\nsumm(load(d))")
addck("reduce_torch_tensor", "d = zipit(b'ctorch\\ntensor\\n(]K\\x01atR.', {})\nsumm(load(d))")
addck("reduce_torch_ones", "d = zipit(b'ctorch\\nones\\n(K\\x03tR.', {})\nsumm(load(d))")
addck("reduce_torch_device_bad", "d = zipit(b'ctorch\\ndevice\\n(X\\x04\\x00\\x00\\x00nopetR.', {})\nload(d)")
addck("reduce_torch_device_int", "d = zipit(b'ctorch\\ndevice\\n(J\\xff\\xff\\xff\\xfftR.', {})\nload(d)")
addck("reduce_size_neg", "d = zipit(b'ctorch\\nSize\\n((J\\xfe\\xff\\xff\\xffttR.', {})\nload(d)")
addck("reduce_size_str", "d = zipit(b'ctorch\\nSize\\n(X\\x02\\x00\\x00\\x00abtR.', {})\nload(d)")
addck("reduce_dtype_call", "d = zipit(b'ctorch\\nfloat32\\n)R.', {})\nload(d)")
addck("global_torch_load", "d = zipit(b'ctorch\\nload\\n.', {})\nload(d)")
addck("global_torch_save", "d = zipit(b'ctorch\\nsave\\n.', {})\nload(d)")
addck("global_builtins_set", "d = zipit(b'cbuiltins\\nset\\n(]K\\x01atR.', {})\nload(d)")
addck("global_builtins_getattr", "d = zipit(b'cbuiltins\\ngetattr\\n(K\\x01X\\x07\\x00\\x00\\x00__add__tR.', {})\nload(d)")
addck("global_utils_dotted", "d = zipit(b'\\x80\\x04\\x8c\\x0ctorch._utils\\x94\\x8c\\x15_rebuild_tensor_v2.os\\x94\\x93.', {})\nload(d)")
addck("global_np_dtype", "d = zipit(b'\\x80\\x02cnumpy\\ndtype\\nX\\x02\\x00\\x00\\x00f8\\x89\\x88\\x87R.', {})\nstr(load(d))")
addck("global_np_reconstruct_bad", "d = zipit(b'\\x80\\x02cnumpy.core.multiarray\\n_reconstruct\\ncnumpy\\nndarray\\n(K\\x00tC\\x01b\\x87R(K\\x01(J\\xff\\xff\\xff\\x7ftcnumpy\\ndtype\\nX\\x02\\x00\\x00\\x00f8\\x89\\x88\\x87RC\\x00tb.', {})\nload(d)")
addck("long_huge", "d = zipit(b'\\x8a\\x10' + b'\\xff' * 16 + b'.', {})\nload(d)")
addck("float_nan_size", "d = zipit(rb(st('0'), size=(float('nan'),)), {'0': F4})\nsumm(load(d))")
addck("weights_only_none", "d = good(m.arange(3.))\nsumm(load(d, weights_only=None))")
addck("weights_only_str", "d = good(m.arange(3.))\nsumm(load(d, weights_only='yes'))")
addck("weights_only_np_bool", "d = good(m.arange(3.))\nsumm(load(d, weights_only=np.bool_(True)))")
addck("mmap_and_map_location", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nm.save(m.arange(3.), p)\nsumm(m.load(p, mmap=True, map_location='meta'))")
addck("lying_zip_crc", "d = bytearray(good(m.arange(3.)))\ni = d.find(b'PK\\x03\\x04', d.find(b'/data/0'))\nj = d.find(b'/data/0')\nk = d.rfind(b'PK\\x03\\x04', 0, j)\nd[k + 14] ^= 0xff\nsumm(load(bytes(d)))")
addck("lying_zip_size", "d = bytearray(good(m.arange(3.)))\nj = d.find(b'/data/0')\nk = d.rfind(b'PK\\x03\\x04', 0, j)\nd[k + 18:k + 22] = struct.pack('<I', 2**31)\nd[k + 22:k + 26] = struct.pack('<I', 2**31)\nsumm(load(bytes(d)))")
addck("lying_cd_size", "d = bytearray(good(m.arange(3.)))\nk = d.find(b'PK\\x01\\x02', d.find(b'/data/0') + 1)\nk = d.rfind(b'PK\\x01\\x02', 0, d.rfind(b'/data/0'))\nd[k + 20:k + 24] = struct.pack('<I', 2**31)\nd[k + 24:k + 28] = struct.pack('<I', 2**31)\nsumm(load(bytes(d)))")
addck("lying_cd_offset", "d = bytearray(good(m.arange(3.)))\nk = d.rfind(b'PK\\x01\\x02', 0, d.rfind(b'/data/0'))\nd[k + 42:k + 46] = struct.pack('<I', 2**31)\nsumm(load(bytes(d)))")
addck("lying_eocd_count", "d = bytearray(good(m.arange(3.)))\nk = d.rfind(b'PK\\x05\\x06')\nd[k + 8:k + 12] = struct.pack('<HH', 60000, 60000)\nsumm(load(bytes(d)))")
addck("lying_eocd_cd_offset", "d = bytearray(good(m.arange(3.)))\nk = d.rfind(b'PK\\x05\\x06')\nd[k + 16:k + 20] = struct.pack('<I', 2**31)\nsumm(load(bytes(d)))")
addck("deflated_member", "d = good(m.arange(3.))\nout = io.BytesIO()\nwith zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:\n    [z.writestr(n, x) for n, x in members(d)]\nsumm(load(out.getvalue()))")
addck("legacy_tar", "import tarfile\nb = io.BytesIO()\nwith tarfile.open(fileobj=b, mode='w') as tf:\n    ti = tarfile.TarInfo('storages'); ti.size = 3; tf.addfile(ti, io.BytesIO(b'abc'))\nsumm(load(b.getvalue()))")
addck("save_to_readonly", "import tempfile, os\np = tempfile.mkdtemp()\nos.chmod(p, 0o500)\nm.save(m.ones(2), os.path.join(p, 'x', 'y.pt'))")

# --- part C: shrunk storages under views ---
SH = "t = m.arange(12.).view(3, 4)\nv = t[1:]\nt.untyped_storage().resize_(8)\n"
SHZ = "t = m.arange(12.).view(3, 4)\nv = t.t()\nt.untyped_storage().resize_(0)\n"
for c, op in [("index_tensor", "v[m.tensor([0, 1])]"), ("index_bool", "v[v.new_ones(v.shape, dtype=m.bool)]"),
              ("index_add_", "v.index_add_(0, m.tensor([0]), m.ones(1, v.shape[1]))"),
              ("index_copy_", "v.index_copy_(0, m.tensor([0]), m.ones(1, v.shape[1]))"),
              ("index_fill_", "v.index_fill_(0, m.tensor([1]), 2.)"), ("scatter_", "v.scatter_(0, m.zeros(1, 2, dtype=m.long), 1.)"),
              ("gather", "m.gather(v, 0, m.zeros(1, 2, dtype=m.long))"), ("masked_fill_", "v.masked_fill_(m.ones((), dtype=m.bool), 1.)"),
              ("masked_select", "m.masked_select(v, m.ones((), dtype=m.bool))"), ("nonzero", "m.nonzero(v)"),
              ("sort", "m.sort(v)"), ("topk", "m.topk(v, 1)"), ("cumsum", "m.cumsum(v, 0)"), ("flip", "m.flip(v, [0])"),
              ("roll", "m.roll(v, 1)"), ("unique", "m.unique(v)"), ("copy_from", "m.zeros(2, 4).copy_(v)"),
              ("copy_into", "v.copy_(m.zeros(v.shape))"), ("to_f64", "v.to(m.float64)"), ("to_int", "v.int()"),
              ("contiguous", "v.contiguous()"), ("numpy", "v.numpy()"), ("dlpack", "np.from_dlpack(v)"),
              ("dunder_dlpack", "v.__dlpack__()"), ("array", "np.asarray(v)"), ("tolist", "v.tolist()"),
              ("pickle", "import pickle\npickle.dumps(v)"), ("save", "m.save(v, io.BytesIO())"),
              ("repr", "repr(v)"), ("eq", "v == v"), ("equal", "m.equal(v, v)"), ("allclose", "m.allclose(v, v)"),
              ("matmul", "v @ m.ones(v.shape[1], 2)"), ("mv", "m.mv(v, m.ones(v.shape[1]))"),
              ("softmax", "m.softmax(v, -1)"), ("layer_norm", "m.nn.functional.layer_norm(v, v.shape[-1:])"),
              ("where", "m.where(m.ones((), dtype=m.bool), v, 0.)"), ("clamp_", "v.clamp_(0, 1)"),
              ("add_", "v.add_(1)"), ("mul_scalar", "v * 2"), ("fill_", "v.fill_(3)"), ("zero_", "v.zero_()"),
              ("setitem_slice", "v[0] = 5\n0"), ("setitem_tensor", "v[m.tensor([0])] = 5\n0"),
              ("index_put_acc", "v.index_put_((m.tensor([0]),), m.ones(1), accumulate=True)"),
              ("put_", "v.put_(m.tensor([0]), m.ones(1))"), ("take", "m.take(v, m.tensor([0]))"),
              ("diag", "m.diag(v)"), ("tril_", "v.tril_()"), ("clone_fmt", "v.clone(memory_format=m.contiguous_format)"),
              ("max", "v.max()"), ("argmax", "v.argmax()"), ("std", "v.std()"), ("norm", "v.norm()"),
              ("cat", "m.cat([v, v])"), ("stack", "m.stack([v, v])"), ("bool", "bool(v[0, 0])"),
              ("item", "v[0, 0].item()"), ("hash_data_ptr", "v.data_ptr() >= 0"),
              ("storage_tolist", "v.untyped_storage().tolist()"), ("resize_grow", "v.resize_(3, 4)\nv.shape"),
              ("set_same", "v.set_(v.untyped_storage(), 0, (2, 4), (4, 1))"),
              ("grad", "w = v.clone().requires_grad_()\nw.sum().backward()\nw.grad")]:
    add(f"shrunk_{c}", SH + op)
    add(f"shrunk0_{c}", SHZ + op)

# --- part D: views with huge or negative sizes and strides ---
for c, op in [("as_strided_huge_size", "m.ones(4).as_strided((2**62,), (1,))"),
              ("as_strided_huge_stride", "m.ones(4).as_strided((2,), (2**62,))"),
              ("as_strided_neg_stride", "m.ones(4).as_strided((2,), (-1,))"),
              ("as_strided_neg_size", "m.ones(4).as_strided((-2,), (1,))"),
              ("as_strided_size_stride_len", "m.ones(4).as_strided((2, 2), (1,))"),
              ("as_strided_stride_overflow", "m.ones(4).as_strided((3, 3), (2**62, 2**62))"),
              ("as_strided_0size_neg_stride", "m.ones(4).as_strided((0,), (-1,)).shape"),
              ("as_strided_offset_neg", "m.ones(4).as_strided((1,), (1,), -1)"),
              ("as_strided_offset_int64max", "m.ones(4).as_strided((1,), (1,), 2**63 - 1)"),
              ("as_strided_float_size", "m.ones(4).as_strided((2.0,), (1,))"),
              ("as_strided_bool_size", "m.ones(4).as_strided((True,), (1,)).shape"),
              ("as_strided_tensor_size", "m.ones(4).as_strided((m.tensor(2),), (1,)).shape"),
              ("as_strided_np_size", "m.ones(4).as_strided((np.int64(2),), (np.int64(1),)).tolist()"),
              ("as_strided_on_shrunk", "x = m.ones(4)\nx.untyped_storage().resize_(4)\nx.as_strided((1,), (1,)).tolist()"),
              ("as_strided__huge", "m.ones(4).as_strided_((2**40,), (1,))"),
              ("as_strided__ok_then_sum", "x = m.arange(4.)\nx.as_strided_((2, 2), (1, 1))\nx.sum().item()"),
              ("view_huge_neg1", "m.ones(0).view(-1, 2**62).shape"),
              ("view_huge_product", "m.ones(4).view(2**32, 2**32)"),
              ("view_neg_other", "m.ones(4).view(-2, 2)"),
              ("view_zero_neg1", "m.ones(0).view(0, -1)"),
              ("view_bool_arg", "m.ones(4).view(True, 4).shape"),
              ("view_float", "m.ones(4).view(4.0)"),
              ("reshape_huge", "m.ones(4).reshape(2**62, 4)"),
              ("unfold_huge_size", "m.ones(4).unfold(0, 2**62, 1)"),
              ("unfold_size_neg", "m.ones(4).unfold(0, -1, 1)"),
              ("unfold_step_huge", "m.ones(4).unfold(0, 2, 2**62).tolist()"),
              ("unfold_dim_oob", "m.ones(4).unfold(3, 2, 1)"),
              ("unfold_0d", "m.tensor(1.).unfold(0, 1, 1).tolist()"),
              ("unfold_0d_size2", "m.tensor(1.).unfold(0, 2, 1)"),
              ("unfold_empty", "m.ones(0).unfold(0, 0, 1).shape"),
              ("unfold_twice_huge", "m.ones(2**20).expand(2**40, 2**20).unfold(0, 2**39, 2**39).shape"),
              ("expand_neg_new", "m.ones(2).expand(-1, 2)"),
              ("expand_huge_then_sum", "m.ones(1).expand(2**62).sum()"),
              ("expand_huge_then_mean", "m.ones(()).expand(2**40).mean()"),
              ("expand_huge_then_contig", "m.ones(1).expand(2**62).contiguous()"),
              ("expand_huge_then_tolist", "m.ones(1).expand(2**62).tolist()"),
              ("expand_huge_then_numpy", "m.ones(1).expand(2**62).numpy().shape"),
              ("expand_huge_then_str", "len(str(m.ones(1).expand(2**62)))"),
              ("expand_huge_then_index", "m.ones(1).expand(2**62)[2**61].item()"),
              ("expand_huge_then_neg_index", "m.ones(1).expand(2**62)[-1].item()"),
              ("expand_huge_then_clone", "m.ones(1).expand(2**62).clone()"),
              ("expand_huge_then_nonzero", "m.ones(1).expand(2**40).nonzero()"),
              ("expand_huge_then_argmax", "m.ones(1).expand(2**35).argmax().item()"),
              ("expand_huge_2d_t_matmul", "m.ones(1, 1).expand(2**31, 2**31) @ m.ones(2**31, 1).as_strided((2**31, 1), (0, 0))"),
              ("narrow_huge", "m.ones(4).narrow(0, 2**62, 1)"),
              ("narrow_neg_len", "m.ones(4).narrow(0, 1, -1)"),
              ("narrow_tensor_start", "m.ones(4).narrow(0, m.tensor(1), 2).tolist()"),
              ("select_int64min", "m.ones(4).select(0, -2**63)"),
              ("diagonal_offset_huge", "m.ones(3, 3).diagonal(2**62).shape"),
              ("diagonal_offset_int64min", "m.ones(3, 3).diagonal(-2**63).shape"),
              ("movedim_dup", "m.ones(2, 3).movedim((0, 0), (1, 0))"),
              ("permute_huge", "m.ones(2, 3).permute(2**62, 0)"),
              ("split_size_zero", "m.ones(4).split(0)"),
              ("split_size_neg", "m.ones(4).split(-1)"),
              ("chunk_zero", "m.ones(4).chunk(0)"),
              ("tensor_split_huge", "[x.shape for x in m.ones(4).tensor_split(2**62)][:3]"),
              ("tensor_split_neg", "m.ones(4).tensor_split(-1)"),
              ("squeeze_huge_dim", "m.ones(4).squeeze(2**62)"),
              ("unsqueeze_int64min", "m.ones(4).unsqueeze(-2**63)"),
              ("flatten_bad", "m.ones(2, 3).flatten(1, 0)"),
              ("unflatten_huge", "m.ones(4).unflatten(0, (2**62, 4))"),
              ("unflatten_neg2", "m.ones(4).unflatten(0, (-1, -1))"),
              ("view_as_real_huge_stride", "m.ones(2, dtype=m.complex64).as_strided((2,), (2**61,)).shape"),
              ("swapdims_oob", "m.ones(2).swapdims(0, 5)")]:
    add(f"view_{c}", op)

# --- part E: out= tensors aliasing inputs ---
for c, op in [("add_self", "a = m.arange(4.)\nm.add(a, 1, out=a)\na"),
              ("add_partial", "a = m.arange(6.)\nm.add(a[:4], 1, out=a[2:])\na"),
              ("add_partial_rev", "a = m.arange(6.)\nm.add(a[2:], 1, out=a[:4])\na"),
              ("mul_bcast_out_self", "a = m.arange(4.)\nb = m.arange(2.).view(2, 1)\nm.mul(b, a, out=a)"),
              ("mm_out_is_input", "a = m.ones(2, 2)\nm.mm(a, a, out=a)\na"),
              ("matmul_out_is_input", "a = m.arange(4.).view(2, 2)\nm.matmul(a, a, out=a)\na"),
              ("bmm_out_is_input", "a = m.arange(8.).view(2, 2, 2)\nm.bmm(a, a, out=a)\na"),
              ("addmm_out_self", "a = m.ones(2, 2)\nm.addmm(a, a, a, out=a)\na"),
              ("cumsum_out_self", "a = m.arange(4.)\nm.cumsum(a, 0, out=a)\na"),
              ("cumsum_out_shifted", "a = m.arange(6.)\nm.cumsum(a[:4], 0, out=a[1:5])\na"),
              ("sort_out_values_input", "a = m.tensor([3., 1., 2.])\ni = m.empty(3, dtype=m.long)\nm.sort(a, out=(a, i))\n(a, i)"),
              ("sort_out_same", "a = m.empty(3)\nm.sort(m.tensor([3., 1., 2.]), out=(a, a))"),
              ("topk_out_input", "a = m.tensor([3., 1., 2.])\ni = m.empty(2, dtype=m.long)\nm.topk(a, 2, out=(a, i))\n(a, i)"),
              ("cat_out_input", "a = m.ones(2)\nm.cat([a, a], out=a)"),
              ("cat_out_view_input", "a = m.ones(4)\nm.cat([a[:2], a[:2]], out=a)\na"),
              ("stack_out_input", "a = m.ones(2, 2)\nm.stack([a[0], a[1]], out=a)"),
              ("index_select_out_src", "a = m.arange(4.)\nm.index_select(a, 0, m.tensor([3, 2, 1, 0]), out=a)\na"),
              ("index_select_out_idx", "i = m.tensor([0, 1])\nm.index_select(m.arange(4), 0, i, out=i)\ni"),
              ("gather_out_src", "a = m.arange(4.)\nm.gather(a, 0, m.tensor([3, 2, 1, 0]), out=a)\na"),
              ("gather_out_idx", "i = m.tensor([1, 0])\nm.gather(m.arange(4), 0, i, out=i)\ni"),
              ("take_out_src", "a = m.arange(4.)\nm.take(a, m.tensor([3, 2, 1, 0]), out=a)\na"),
              ("where_out_input", "a = m.arange(4.)\nm.where(a > 1, a.flip(0), a, out=a)\na"),
              ("clamp_out_min_tensor", "a = m.arange(4.)\nm.clamp(m.zeros(4), min=a, out=a)\na"),
              ("pow_out_self", "a = m.arange(4.)\nm.pow(a, a, out=a)\na"),
              ("div_out_expand", "a = m.ones(1).expand(3)\nm.div(m.ones(3), 2, out=a)"),
              ("linspace_out_self", "a = m.empty(4)\nm.linspace(0, 1, 4, out=a[::2])"),
              ("arange_out_noncontig", "a = m.zeros(8)\nm.arange(4., out=a[::2])\na"),
              ("sum_out_input", "a = m.arange(4.)\nm.sum(a.view(2, 2), 0, out=a[:2])\na"),
              ("prod_out_input_overlap", "a = m.arange(1., 5.)\nm.prod(a.view(2, 2), 1, out=a[1:3])\na"),
              ("max_dim_out_input", "a = m.arange(4.)\ni = m.empty(2, dtype=m.long)\nm.max(a.view(2, 2), 1, out=(a[:2], i))\n(a, i)"),
              ("cross_out_input", "a = m.eye(3)\nm.linalg.cross(a, a.flip(0), out=a)\na"),
              ("einsum_like_outer_out", "a = m.arange(2.)\nm.outer(a, a, out=m.empty(2, 2))"),
              ("mv_out_vec", "v = m.ones(2)\nm.mv(m.ones(2, 2), v, out=v)\nv"),
              ("addcmul_out_self", "a = m.arange(4.)\nm.addcmul(a, a, a, value=2, out=a)\na"),
              ("lerp_out_self", "a = m.arange(4.)\nm.lerp(a, a.flip(0), 0.5, out=a)\na"),
              ("neg_out_flip", "a = m.arange(4.)\nm.neg(a.flip(0), out=a)\na"),
              ("abs_out_int_overlap", "a = m.arange(-3, 3)\nm.abs(a[1:], out=a[:-1])\na"),
              ("exp_out_transposed", "a = m.arange(4.).view(2, 2)\nm.exp(a, out=a.t())\na"),
              ("mul_out_transposed_self", "a = m.arange(4.).view(2, 2)\nm.mul(a, 1, out=a.t())\na"),
              ("copy_self_transposed", "a = m.arange(4.).view(2, 2)\na.copy_(a.t())\na"),
              ("copy_self_overlap", "a = m.arange(6.)\na[1:].copy_(a[:-1])\na"),
              ("add_inplace_overlap", "a = m.arange(6.)\na[1:].add_(a[:-1])\na"),
              ("polar_out_input", "a = m.ones(2)\nm.polar(a, a, out=m.empty(2, dtype=m.complex64))"),
              ("nonzero_out_input", "a = m.tensor([0, 1, 1])\nm.nonzero(a, out=a)"),
              ("bincount_like_histc_out", "a = m.arange(4.)\nm.histc(a, 4, out=a)\na"),
              ("searchsorted_out_input", "a = m.tensor([0, 1, 2])\nm.searchsorted(a, a, out=a)\na"),
              ("cummax_out_input", "a = m.tensor([1., 3., 2.])\ni = m.empty(3, dtype=m.long)\nm.cummax(a, 0, out=(a, i))\n(a, i)"),
              ("kthvalue_out_input", "a = m.tensor([[1., 3., 2.]])\nm.kthvalue(a, 2, out=(a, m.empty(1, dtype=m.long)))"),
              ("mode_out_alias", "a = m.tensor([1., 1., 2.])\nm.mode(a, out=(a[:1], m.empty((), dtype=m.long)))")]:
    add(f"out_{c}", op)

# --- part F: int64 overflow in factories and repeats ---
for c, op in [("arange_huge", "m.arange(2**62)"),
              ("arange_span_overflow", "m.arange(-2**63, 2**63 - 1, 2**62).tolist()"),
              ("arange_span_overflow_step1", "m.arange(-2**63, 2**63 - 1)"),
              ("arange_end_past_int64", "m.arange(0, 2**64, 2**62)"),
              ("arange_step_past_int64", "m.arange(0, 10, 2**64)"),
              ("arange_int64_neg_step", "m.arange(2**63 - 1, -2**63, -2**62).tolist()"),
              ("arange_int32_overflow", "m.arange(2**31 - 2, 2**31 + 2, dtype=m.int32)"),
              ("arange_uint8_neg", "m.arange(-3, 3, dtype=m.uint8)"),
              ("arange_float_huge_count", "m.arange(0., 1e30, 1e-30)"),
              ("arange_f16_count", "m.arange(0, 70000, dtype=m.float16)"),
              ("arange_tiny_step", "m.arange(0., 1., 5e-324)"),
              ("arange_nan_end", "m.arange(0., float('nan'))"),
              ("arange_inf_end", "m.arange(0., float('inf'))"),
              ("linspace_huge_steps", "m.linspace(0, 1, 2**62)"),
              ("linspace_steps_int64max", "m.linspace(0, 1, 2**63 - 1)"),
              ("linspace_steps_neg", "m.linspace(0, 1, -1)"),
              ("linspace_int_dtype_huge", "m.linspace(-2**62, 2**62, 5, dtype=m.int64).tolist()"),
              ("linspace_int_dtype_extreme", "m.linspace(-2**63, 2**63 - 1, 3, dtype=m.int64).tolist()"),
              ("linspace_uint8", "m.linspace(-10, 300, 4, dtype=m.uint8).tolist()"),
              ("logspace_base_neg", "m.logspace(0, 2, 3, base=-2.).tolist()"),
              ("logspace_int_overflow", "m.logspace(0, 70, 3, base=2, dtype=m.int64).tolist()"),
              ("empty_dims_product_overflow", "m.empty(2**32, 2**32)"),
              ("empty_three_overflow", "m.empty(2**21, 2**21, 2**22)"),
              ("empty_nbytes_overflow_f64", "m.empty(2**61)"),
              ("full_huge", "m.full((2**62,), 1.)"),
              ("eye_huge", "m.eye(2**32)"),
              ("eye_neg", "m.eye(-1)"),
              ("eye_huge_m_zero_n", "m.eye(2**40, 0).shape"),
              ("tri_indices_huge", "m.tril_indices(2**32, 2**32)"),
              ("tri_indices_neg", "m.triu_indices(-1, 3)"),
              ("tri_indices_offset_huge", "m.tril_indices(3, 3, 2**62).shape"),
              ("tri_indices_offset_int64min", "m.tril_indices(3, 3, -2**63).shape"),
              ("randperm_huge", "m.randperm(2**62)"),
              ("randperm_neg", "m.randperm(-1)"),
              ("randint_range_overflow", "m.randint(-2**63, 2**63 - 1, (3,)).shape"),
              ("randint_high_past", "m.randint(0, 2**64, (3,))"),
              ("randint_low_eq_high", "m.randint(5, 5, (3,))"),
              ("repeat_overflow", "m.ones(2**31).expand(2**31, 2**31).repeat(2, 2)"),
              ("repeat_overflow2", "m.ones(3).repeat(2**62)"),
              ("repeat_neg", "m.ones(3).repeat(-1)"),
              ("repeat_fewer", "m.ones(2, 3).repeat(2)"),
              ("repeat_zero_huge", "m.ones(3).repeat(0, 2**62).shape"),
              ("tile_overflow", "m.ones(3).tile(2**62)"),
              ("tile_neg", "m.ones(3).tile(-2)"),
              ("tile_zero_huge", "m.ones(3).tile(0, 2**62).shape"),
              ("kron_overflow", "m.ones(2**31).expand(2**31, 2**31).kron(m.ones(2**31).expand(2**31, 2**31)[:4, :4])"),
              ("kron_overflow2", "m.kron(m.ones(1).expand(2**40), m.ones(1).expand(2**40))"),
              ("kron_zero_huge", "m.kron(m.ones(0), m.ones(1).expand(2**62)).shape"),
              ("cartesian_overflow", "m.cartesian_prod(m.ones(1).expand(2**32), m.ones(1).expand(2**32))"),
              ("cartesian_zero_huge", "m.cartesian_prod(m.ones(0), m.ones(1).expand(2**62)).shape"),
              ("combinations_huge", "m.combinations(m.ones(1).expand(2**32), 2)"),
              ("combinations_r_neg", "m.combinations(m.ones(3), -1)"),
              ("combinations_r_big", "m.combinations(m.ones(3), 5).shape"),
              ("block_diag_huge", "m.block_diag(m.ones(1, 1).expand(2**31, 2**31), m.ones(1, 1).expand(2**31, 2**31))"),
              ("outer_overflow", "m.outer(m.ones(1).expand(2**32), m.ones(1).expand(2**32))"),
              ("repeat_interleave_sum_overflow", "m.repeat_interleave(m.ones(2), m.tensor([2**62, 2**62]))"),
              ("new_full_huge", "m.ones(1).new_full((2**62,), 1.)"),
              ("zeros_like_expanded_huge", "m.zeros_like(m.ones(1).expand(2**62))"),
              ("empty_like_expanded_huge", "m.empty_like(m.ones(1).expand(2**62)).shape"),
              ("ones_like_expanded_huge_0", "m.ones_like(m.ones(0, 1).expand(0, 2**62)).shape"),
              ("pad_huge", "m.nn.functional.pad(m.ones(2), (2**62, 0))"),
              ("pad_neg_all", "m.nn.functional.pad(m.ones(2), (-3, 0))"),
              ("pad_neg_huge", "m.nn.functional.pad(m.ones(2), (-2**62, 0))"),
              ("one_hot_huge", "m.nn.functional.one_hot(m.tensor([0]), 2**62)"),
              ("bincount_minlength_huge", "m.bincount(m.tensor([0]), minlength=2**62)"),
              ("histc_bins_huge", "m.histc(m.ones(2), bins=2**62)"),
              ("multinomial_huge_n", "m.multinomial(m.ones(2), 2**62, replacement=True)"),
              ("tensor_huge_int", "m.tensor([2**63])"),
              ("tensor_int64min", "m.tensor([-2**63]).tolist()"),
              ("full_int_overflow", "m.full((2,), 2**63, dtype=m.int64)"),
              ("fill_int_overflow", "m.zeros(2, dtype=m.int64).fill_(2**64)"),
              ("fill_int8_overflow", "m.zeros(2, dtype=m.int8).fill_(300)"),
              ("add_int_scalar_overflow", "m.ones(2, dtype=m.int64) + 2**64"),
              ("mul_int_scalar_overflow", "(m.ones(2, dtype=m.int64) * (2**63 - 1) * 2).tolist()"),
              ("int_pow_overflow", "(m.tensor([3]) ** 100).tolist()"),
              ("int_neg_min", "(-m.tensor([-2**63])).tolist()"),
              ("int_abs_min", "m.tensor([-2**63]).abs().tolist()"),
              ("int_div_min_neg1", "m.div(m.tensor([-2**63]), m.tensor([-1]), rounding_mode='floor').tolist()"),
              ("int_rem_min_neg1", "m.remainder(m.tensor([-2**63]), m.tensor([-1])).tolist()"),
              ("int_fmod_min_neg1", "m.fmod(m.tensor([-2**63]), m.tensor([-1])).tolist()"),
              ("int_trunc_div_min_neg1", "m.div(m.tensor([-2**63]), -1, rounding_mode='trunc').tolist()"),
              ("int32_div_min_neg1", "m.div(m.tensor([-2**31], dtype=m.int32), m.tensor([-1], dtype=m.int32), rounding_mode='floor').tolist()"),
              ("int8_floor_div_min_neg1", "m.floor_divide(m.tensor([-128], dtype=m.int8), m.tensor([-1], dtype=m.int8)).tolist()"),
              ("int_gcd_min", "m.gcd(m.tensor([-2**63]), m.tensor([0])).tolist()"),
              ("int_lcm_overflow", "m.lcm(m.tensor([2**62]), m.tensor([3])).tolist()"),
              ("int_cumsum_overflow", "m.cumsum(m.tensor([2**62, 2**62, 2**62]), 0).tolist()"),
              ("int_sum_overflow", "m.tensor([2**62] * 4).sum().item()"),
              ("int_prod_overflow", "m.tensor([2**32, 2**32]).prod().item()"),
              ("int_shift_huge", "(m.tensor([1]) << 64).tolist()"),
              ("int_shift_neg", "(m.tensor([8]) >> -1).tolist()"),
              ("int_shift_tensor_huge", "(m.tensor([1]) << m.tensor([2**40])).tolist()"),
              ("float_to_int_nan", "m.tensor([float('nan'), float('inf'), 1e30]).long().shape"),
              ("int_mean", "m.tensor([1, 2]).mean()")]:
    add(f"ovf_{c}", op)

# --- part G: out-of-range indices on every indexing op ---
for bad in ["3", "-4", "2**62", "-2**63"]:
    for c, op in [("index_add_", "m.zeros(3).index_add_(0, m.tensor([{b}]), m.ones(1))"),
                  ("index_add_2d", "m.zeros(3, 2).index_add_(1, m.tensor([{b}]), m.ones(3, 1))"),
                  ("index_copy_", "m.zeros(3).index_copy_(0, m.tensor([{b}]), m.ones(1))"),
                  ("index_fill_", "m.zeros(3).index_fill_(0, m.tensor([{b}]), 1.)"),
                  ("index_reduce_", "m.zeros(3).index_reduce_(0, m.tensor([{b}]), m.ones(1), 'prod')"),
                  ("index_select", "m.zeros(3).index_select(0, m.tensor([{b}]))"),
                  ("scatter_", "m.zeros(3).scatter_(0, m.tensor([{b}]), m.ones(1))"),
                  ("scatter_add_", "m.zeros(3).scatter_add_(0, m.tensor([{b}]), m.ones(1))"),
                  ("scatter_reduce_amax", "m.zeros(3).scatter_reduce(0, m.tensor([{b}]), m.ones(1), 'amax')"),
                  ("scatter_reduce_mean", "m.zeros(3).scatter_reduce(0, m.tensor([{b}]), m.ones(1), 'mean', include_self=False)"),
                  ("scatter_value_reduce", "m.zeros(3).scatter_(0, m.tensor([{b}]), 2., reduce='multiply')"),
                  ("gather", "m.zeros(3).gather(0, m.tensor([{b}]))"),
                  ("take", "m.zeros(3).take(m.tensor([{b}]))"),
                  ("take_along_dim", "m.take_along_dim(m.zeros(3), m.tensor([{b}]), 0)"),
                  ("take_along_dim_none", "m.take_along_dim(m.zeros(3, 2), m.tensor([{b}]))"),
                  ("put_", "m.zeros(3).put_(m.tensor([{b}]), m.ones(1))"),
                  ("put_acc", "m.zeros(3).put_(m.tensor([{b}]), m.ones(1), accumulate=True)"),
                  ("index_put_acc", "m.zeros(3).index_put_((m.tensor([{b}]),), m.ones(1), accumulate=True)"),
                  ("index_put_acc_2d", "m.zeros(3, 3).index_put_((m.tensor([0]), m.tensor([{b}])), m.ones(1), accumulate=True)"),
                  ("index_put", "m.zeros(3).index_put_((m.tensor([{b}]),), m.ones(1))"),
                  ("getitem_list", "m.zeros(3)[[{b}]]"),
                  ("getitem_2d_second", "m.zeros(3, 3)[:, m.tensor([{b}])]"),
                  ("setitem_tensor", "t = m.zeros(3)\nt[m.tensor([{b}])] = 1.\nt"),
                  ("setitem_int", "t = m.zeros(3)\nt[{b}] = 1.\nt"),
                  ("embedding", "m.nn.functional.embedding(m.tensor([{b}]), m.ones(3, 2))"),
                  ("embedding_bag_sum", "m.nn.functional.embedding_bag(m.tensor([{b}]), m.ones(3, 2), m.tensor([0]), mode='sum')"),
                  ("embedding_bag_max", "m.nn.functional.embedding_bag(m.tensor([{b}]), m.ones(3, 2), m.tensor([0]), mode='max')"),
                  ("embedding_bag_offsets", "m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([0, {b}]), mode='sum')"),
                  ("embedding_bag_psw", "m.nn.functional.embedding_bag(m.tensor([{b}]), m.ones(3, 2), m.tensor([0]), mode='sum', per_sample_weights=m.ones(1))"),
                  ("one_hot", "m.nn.functional.one_hot(m.tensor([{b}]), 3)"),
                  ("nll_loss", "m.nn.functional.nll_loss(m.zeros(1, 3), m.tensor([{b}]))"),
                  ("cross_entropy_ls", "m.nn.functional.cross_entropy(m.zeros(1, 3), m.tensor([{b}]), label_smoothing=0.1)"),
                  ("multi_margin", "m.nn.functional.multi_margin_loss(m.zeros(1, 3), m.tensor([{b}]))"),
                  ("multilabel_margin", "m.nn.functional.multilabel_margin_loss(m.zeros(1, 3), m.tensor([[{b}, -1, 0]]))"),
                  ("index_select_out", "m.index_select(m.zeros(3), 0, m.tensor([{b}]), out=m.empty(1))"),
                  ("diagonal_scatter_off", "m.diagonal_scatter(m.zeros(3, 3), m.ones(1), {b})"),
                  ("select_scatter", "m.select_scatter(m.zeros(3, 2), m.ones(2), 0, {b})"),
                  ("slice_scatter_start", "m.slice_scatter(m.zeros(3), m.ones(0), 0, {b}).tolist()"),
                  ("index_add_cuda_like_alpha", "m.zeros(3).index_add_(0, m.tensor([0, {b}]), m.ones(2), alpha=2)"),
                  ("max_unpool1d", "m.nn.functional.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, {b}]]]), 2)"),
                  ("gather_grad", "x = m.zeros(3, requires_grad=True)\nx.gather(0, m.tensor([{b}])).sum().backward()\nx.grad"),
                  ("sparse_index_select", "m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2), (3,)).index_select(0, m.tensor([{b}])).to_dense()"),
                  ("unravel_index", "m.unravel_index(m.tensor([{b}]), (3,))")]:
        add(f"idx_{c}_{bad.replace('*', '').replace('-', 'm')}", op.format(b=bad))
for c, op in [("index_add_wrong_len", "m.zeros(3).index_add_(0, m.tensor([0, 1]), m.ones(1))"),
              ("index_add_idx_2d", "m.zeros(3).index_add_(0, m.tensor([[0]]), m.ones(1))"),
              ("index_add_idx_float", "m.zeros(3).index_add_(0, m.tensor([0.]), m.ones(1))"),
              ("index_add_idx_int32", "m.zeros(3).index_add_(0, m.tensor([2], dtype=m.int32), m.ones(1))"),
              ("index_add_idx_uint8", "m.zeros(3).index_add_(0, m.tensor([2], dtype=m.uint8), m.ones(1))"),
              ("index_add_src_dtype", "m.zeros(3).index_add_(0, m.tensor([2]), m.ones(1, dtype=m.float64))"),
              ("index_add_dup_int", "m.zeros(3, dtype=m.int64).index_add_(0, m.tensor([1, 1, 1]), m.ones(3, dtype=m.int64)).tolist()"),
              ("index_add_0d", "m.zeros(()).index_add_(0, m.tensor([0]), m.ones(1)).tolist()"),
              ("index_add_dim_oob", "m.zeros(3).index_add_(1, m.tensor([0]), m.ones(1))"),
              ("scatter_reduce_bad_reduce", "m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1), 'median')"),
              ("scatter_reduce_int_mean", "m.zeros(3, dtype=m.int64).scatter_reduce(0, m.tensor([0, 0]), m.tensor([1, 2]), 'mean').tolist()"),
              ("scatter_reduce_idx_bigger", "m.zeros(3).scatter_reduce(0, m.tensor([0, 1, 2, 0]), m.ones(2), 'sum')"),
              ("scatter_src_smaller", "m.zeros(3, 3).scatter_(0, m.zeros(3, 3, dtype=m.long), m.ones(1, 1))"),
              ("take_along_dim_bcast", "m.take_along_dim(m.arange(6.).view(2, 3), m.tensor([[0], [2]]), 1).tolist()"),
              ("take_along_dim_dtype", "m.take_along_dim(m.zeros(3), m.tensor([0.]), 0)"),
              ("take_along_dim_ndim", "m.take_along_dim(m.zeros(3, 3), m.tensor([0]), 0)"),
              ("embedding_bag_offsets_dec", "m.nn.functional.embedding_bag(m.tensor([0, 1, 2]), m.ones(3, 2), m.tensor([0, 2, 1]), mode='sum')"),
              ("embedding_bag_offsets_2d", "m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([[0]]), mode='sum')"),
              ("embedding_bag_2d_input_offsets", "m.nn.functional.embedding_bag(m.tensor([[0, 1]]), m.ones(3, 2), m.tensor([0]), mode='sum')"),
              ("embedding_bag_include_last", "m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([0, 1]), mode='mean', include_last_offset=True).tolist()"),
              ("embedding_bag_include_last_one", "m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([0]), mode='mean', include_last_offset=True).shape"),
              ("embedding_bag_offsets_past_end", "m.nn.functional.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([0, 5]), mode='sum', include_last_offset=True)"),
              ("index_put_acc_bool_mask", "m.zeros(3).index_put_((m.tensor([True, False, True]),), m.ones(2), accumulate=True).tolist()"),
              ("index_put_acc_bool_short", "m.zeros(3).index_put_((m.tensor([True, False]),), m.ones(1), accumulate=True)"),
              ("index_put_acc_vals_shape", "m.zeros(3).index_put_((m.tensor([0, 1]),), m.ones(3), accumulate=True)"),
              ("index_put_acc_int_dup", "m.zeros(3, dtype=m.int32).index_put_((m.tensor([1, 1]),), m.tensor([2**31 - 1, 1], dtype=m.int32), accumulate=True).tolist()"),
              ("index_put_acc_bool_dtype", "m.zeros(3, dtype=m.bool).index_put_((m.tensor([1, 1]),), m.tensor([True, True]), accumulate=True).tolist()"),
              ("masked_scatter_short", "m.zeros(3).masked_scatter_(m.tensor([True, True, True]), m.ones(2))"),
              ("masked_scatter_bcast_mask", "m.zeros(2, 3).masked_scatter_(m.tensor([True, False, True]), m.arange(6.)).tolist()"),
              ("masked_fill_mask_bigger", "m.zeros(3).masked_fill_(m.ones(2, 3, dtype=m.bool), 1.)"),
              ("masked_fill_mask_int", "m.zeros(3).masked_fill_(m.ones(3, dtype=m.int64), 1.)"),
              ("masked_fill_value_tensor_1d", "m.zeros(3).masked_fill_(m.ones(3, dtype=m.bool), m.ones(1))"),
              ("index_fill_value_tensor_1d", "m.zeros(3).index_fill_(0, m.tensor([0]), m.ones(1))"),
              ("put_empty_source_nonempty_idx", "m.zeros(3).put_(m.tensor([0]), m.ones(0))"),
              ("put_idx_shape_mismatch", "m.zeros(3).put_(m.tensor([0, 1]), m.ones(3))"),
              ("index_copy_dup", "m.zeros(3).index_copy_(0, m.tensor([1, 1]), m.tensor([1., 2.])).tolist()"),
              ("getitem_int64min_slice", "m.arange(5)[-2**63:2**63 - 1:2**62].tolist()"),
              ("getitem_slice_step_huge", "m.arange(5)[::2**63 - 1].tolist()"),
              ("getitem_bool_list_wrong_len", "m.zeros(3)[[True, False]]"),
              ("getitem_bool_tensor_2d_wrong", "m.zeros(3, 2)[m.ones(2, 2, dtype=m.bool)]"),
              ("getitem_tensor_int8", "m.arange(5)[m.tensor([1, 2], dtype=m.int8)].tolist()"),
              ("getitem_tensor_uint8_mask", "m.arange(3)[m.tensor([1, 0, 1], dtype=m.uint8)].tolist()"),
              ("setitem_value_bigger", "t = m.zeros(3)\nt[m.tensor([0])] = m.ones(2)\nt"),
              ("setitem_mask_values_wrong", "t = m.zeros(3)\nt[m.tensor([True, True, False])] = m.ones(3)\nt")]:
    add(f"idx_{c}", op)

# --- part H: zero-size dims ---
for shp in ["(0,)", "(0, 3)", "(3, 0)", "(2, 0, 3)"]:
    for c, op in [("sum", "x.sum(-1)"), ("prod", "x.prod(-1)"), ("amax", "x.amax(-1)"), ("max_dim", "x.max(-1)"),
                  ("argmax", "x.argmax(-1)"), ("min_all", "x.min()"), ("mean", "x.mean(-1)"), ("std", "x.std(-1)"),
                  ("var_mean", "m.var_mean(x, -1)"), ("logsumexp", "x.logsumexp(-1)"), ("norm", "x.norm(dim=-1)"),
                  ("cumsum", "x.cumsum(-1)"), ("cumprod", "x.cumprod(0)"), ("cummax", "x.cummax(-1)"),
                  ("logcumsumexp", "x.logcumsumexp(-1)"), ("sort", "x.sort(-1)"), ("argsort", "x.argsort(0)"),
                  ("topk0", "x.topk(0, -1)"), ("topk1", "x.topk(1, -1)"), ("kthvalue", "x.kthvalue(1, -1)"),
                  ("median_dim", "x.median(-1)"), ("median_all", "x.median()"), ("nanmedian", "x.nanmedian()"),
                  ("mode", "x.mode(-1)"), ("unique", "m.unique(x, return_counts=True)"),
                  ("unique_dim", "m.unique(x, dim=0)"), ("unique_consecutive", "m.unique_consecutive(x, dim=-1)"),
                  ("softmax", "x.softmax(-1)"), ("log_softmax", "x.log_softmax(0)"), ("matmul_t", "x @ x.transpose(-1, -2)"),
                  ("matmul_tt", "x.transpose(-1, -2) @ x"), ("flip", "x.flip(-1)"), ("roll", "x.roll(1, -1)"),
                  ("roll_flat", "x.roll(2)"), ("repeat", "x.repeat(*([2] * x.dim()))"), ("tile", "x.tile(3)"),
                  ("diff", "x.diff(dim=-1)"), ("nonzero", "x.nonzero()"), ("argwhere", "m.argwhere(x)"),
                  ("where1", "m.where(x > 0)"), ("masked_select", "x[x > 0]"), ("chunk", "[c.shape for c in x.chunk(2, -1)]"),
                  ("split", "[c.shape for c in x.split(1, -1)]"), ("tensor_split", "[c.shape for c in x.tensor_split(3, -1)]"),
                  ("unbind", "[c.shape for c in x.unbind(-1)]"), ("stack", "m.stack([x, x], -1)"), ("cat", "m.cat([x, x], -1)"),
                  ("pad", "m.nn.functional.pad(x, (1, 1))"), ("pad_reflect", "m.nn.functional.pad(x.unsqueeze(0) if x.dim() < 2 else x, (1, 1), mode='reflect')"),
                  ("pad_replicate", "m.nn.functional.pad(x.unsqueeze(0) if x.dim() < 2 else x, (1, 1), mode='replicate')"),
                  ("pad_circular", "m.nn.functional.pad(x.unsqueeze(0) if x.dim() < 2 else x, (1, 1), mode='circular')"),
                  ("layer_norm", "m.nn.functional.layer_norm(x, x.shape[-1:])"),
                  ("rms_norm", "m.nn.functional.rms_norm(x, x.shape[-1:])"),
                  ("normalize", "m.nn.functional.normalize(x, dim=-1)"), ("cdist", "m.cdist(x.view(1, -1, 1), x.view(1, -1, 1))"),
                  ("histc", "m.histc(x, 4)"), ("bincount", "m.bincount(x.long().flatten())"),
                  ("searchsorted", "m.searchsorted(m.tensor([1., 2.]), x)"), ("bucketize", "m.bucketize(x, m.tensor([1., 2.]))"),
                  ("searchsorted_empty_seq", "m.searchsorted(x.flatten(), m.ones(2))"),
                  ("trace_like_diag", "m.diagonal(x, 0, 0, -1) if x.dim() > 1 else m.diag(x)"),
                  ("einsum", "m.einsum('...i,...i->...', x, x)"), ("kron", "m.kron(x, m.ones(2, 2))"),
                  ("outer_flat", "m.outer(x.flatten(), m.ones(2))"), ("cartesian", "m.cartesian_prod(x.flatten(), m.ones(2))"),
                  ("tril", "m.tril(x) if x.dim() > 1 else x"), ("trace", "m.trace(x) if x.dim() == 2 else 0"),
                  ("det", "m.linalg.det(x) if x.dim() >= 2 and x.shape[-1] == x.shape[-2] else 0"),
                  ("inv", "m.linalg.inv(x.reshape(-1, 0, 0)) if x.numel() == 0 else 0"),
                  ("svd", "m.linalg.svdvals(x) if x.dim() >= 2 else 0"), ("qr", "m.linalg.qr(x) if x.dim() >= 2 else 0"),
                  ("pinv", "m.linalg.pinv(x) if x.dim() >= 2 else 0"), ("lstsq", "m.linalg.lstsq(x, x).solution if x.dim() >= 2 else 0"),
                  ("fft", "m.fft.fft(x, dim=0) if x.shape[0] else 0"), ("rfft_n", "m.fft.rfft(x, n=4, dim=-1)"),
                  ("conv1d", "m.nn.functional.conv1d(x.reshape(-1, 1, x.shape[-1]), m.ones(1, 1, 1)) if x.dim() >= 1 else 0"),
                  ("index_select", "x.index_select(-1, m.tensor([], dtype=m.long))"),
                  ("gather_empty", "x.gather(-1, m.zeros(x.shape[:-1] + (0,), dtype=m.long))"),
                  ("scatter_empty", "x.scatter(-1, m.zeros(x.shape, dtype=m.long), 1.)"),
                  ("index_add_empty", "x.index_add(0, m.tensor([], dtype=m.long), x[:0])"),
                  ("put_empty", "x.put(m.tensor([], dtype=m.long), m.ones(0))"),
                  ("mv", "m.mv(x, m.ones(x.shape[-1])) if x.dim() == 2 else 0"), ("addmm", "m.addmm(m.ones(()), x, x.t()) if x.dim() == 2 else 0"),
                  ("baddbmm", "m.baddbmm(m.ones(()), x, x.transpose(1, 2)) if x.dim() == 3 else 0"),
                  ("interpolate", "m.nn.functional.interpolate(x.reshape(1, 1, -1), size=3) if x.numel() else 0"),
                  ("max_pool1d", "m.nn.functional.max_pool1d(x.reshape(x.shape[0], 1, -1), 1) if x.dim() >= 2 else 0"),
                  ("adaptive_avg", "m.nn.functional.adaptive_avg_pool1d(x.reshape(-1, 1, x.shape[-1]), 2)"),
                  ("embedding_bag", "m.nn.functional.embedding_bag(x.long().flatten(), m.ones(3, 2), m.tensor([0]))"),
                  ("ctc_len0", "0"),
                  ("multinomial", "m.multinomial(x.abs() + 1, 1) if x.dim() <= 2 else 0"),
                  ("std_unbiased_all", "x.std()"), ("quantile", "m.quantile(x, 0.5, dim=-1)"),
                  ("nanquantile_all", "m.nanquantile(x, 0.5)"), ("corrcoef", "m.corrcoef(x) if x.dim() <= 2 else 0"),
                  ("cov", "m.cov(x) if x.dim() <= 2 else 0"), ("tolist", "x.tolist()"), ("numpy", "x.numpy().shape"),
                  ("dlpack", "np.from_dlpack(x).shape"), ("item", "x.item()"), ("bool", "bool(x)"),
                  ("to_sparse", "x.to_sparse().to_dense()"), ("save_load", "b = io.BytesIO()\nm.save(x, b)\nb.seek(0)\nm.load(b)")]:
        add(f"zero_{c}_{shp.replace('(', '').replace(')', '').replace(', ', 'x').replace(',', '')}",
            f"x = m.zeros{shp}\n" + op)

# --- part I: non-contiguous, strided, overlapping inputs to fast paths ---
NC = {"t": "x = m.arange(1., 13.).view(3, 4).t()", "step": "x = m.arange(1., 25.).view(4, 6)[::2, ::2]",
      "flipcopy": "x = m.arange(1., 13.).view(3, 4).flip(0)", "exp0": "x = m.arange(1., 5.).view(1, 4).expand(3, 4)",
      "overlap": "x = m.arange(1., 7.).as_strided((3, 4), (1, 1))", "neg_off": "x = m.arange(1., 13.).view(3, 4)[1:, 1:]",
      "f64t": "x = m.arange(1., 13., dtype=m.float64).view(3, 4).t()", "int_t": "x = m.arange(1, 13).view(3, 4).t()",
      "cl": "x = m.arange(1., 49.).view(1, 3, 4, 4).to(memory_format=m.channels_last)"}
for nk, pre in NC.items():
    for c, op in [("sum", "x.sum(0)"), ("sum_all", "x.sum()"), ("mean1", "x.float().mean(-1)"), ("amax", "x.amax(-1)"),
                  ("argmax", "x.argmax(-1)"), ("cumsum", "x.cumsum(-1)"), ("cumsum0", "x.cumsum(0)"),
                  ("sort", "x.sort(-1)"), ("topk", "x.topk(2, -1)"), ("softmax", "x.float().softmax(-1)"),
                  ("log_softmax0", "x.float().log_softmax(0)"), ("exp", "x.float().exp()"), ("add_self", "x + x"),
                  ("mul_t", "x * x.transpose(-1, -2).transpose(-1, -2)"), ("matmul", "x.float() @ x.float().transpose(-1, -2)"),
                  ("mm_vec", "x.float() @ m.ones(x.shape[-1])"), ("clone", "x.clone()"), ("contig", "x.contiguous()"),
                  ("copy_into", "m.zeros(x.shape, dtype=x.dtype).copy_(x)"), ("to_f16", "x.to(m.float16)"),
                  ("to_int8", "x.to(m.int8)"), ("where", "m.where(x > 3, x, -x)"), ("clamp", "x.clamp(2, 5)"),
                  ("layer_norm", "m.nn.functional.layer_norm(x.float(), x.shape[-1:])"),
                  ("gelu", "m.nn.functional.gelu(x.float())"), ("relu_", "x.clone().relu_()"),
                  ("index_select", "x.index_select(-1, m.tensor([0, 2]))"), ("gather", "x.gather(-1, m.zeros(x.shape, dtype=m.long))"),
                  ("masked", "x[x > 4]"), ("nonzero", "(x > 4).nonzero()"), ("getitem_idx", "x[m.tensor([0, 1])]"),
                  ("unique", "m.unique(x)"), ("flip", "x.flip(-1)"), ("roll", "x.roll(1, 0)"), ("diff", "x.diff(dim=-1)"),
                  ("norm", "x.float().norm(dim=-1)"), ("var", "x.float().var(-1)"), ("prod", "x.float().prod(0)"),
                  ("logsumexp", "x.float().logsumexp(-1)"), ("cat", "m.cat([x, x], -1)"), ("stack", "m.stack([x, x])"),
                  ("tolist", "x.tolist()"), ("numpy", "x.numpy().tolist()"), ("dlpack", "np.from_dlpack(x).tolist()"),
                  ("eq", "(x == x.clone()).all()"), ("equal", "m.equal(x, x.clone())"), ("cumprod", "x.double().cumprod(-1)"),
                  ("max_pool", "m.nn.functional.max_pool1d(x.float().reshape(1, -1, x.shape[-1]), 2)"),
                  ("avg_pool", "m.nn.functional.avg_pool1d(x.float().reshape(1, -1, x.shape[-1]), 2)"),
                  ("conv1d", "m.nn.functional.conv1d(x.float().reshape(1, -1, x.shape[-1]), m.ones(2, x.reshape(-1, x.shape[-1]).shape[0], 2))"),
                  ("linear", "m.nn.functional.linear(x.float(), m.ones(2, x.shape[-1]))"),
                  ("embedding", "m.nn.functional.embedding(m.tensor([0, 1]), x.float().reshape(-1, x.shape[-1]))"),
                  ("addmm_", "x.float().reshape(-1, x.shape[-1])[:2].clone().addmm_(m.ones(2, 2), m.ones(2, x.shape[-1]))"),
                  ("inplace_add_self_t", "y = x.clone()\ny.add_(y.flip(0))\ny"),
                  ("pow_int", "x ** 2"), ("bitwise", "x.long() & 3"), ("floor_div", "x // 3"), ("fmod", "m.fmod(x, 3)"),
                  ("inplace_on_overlap", "x.add_(1)")]:
        add(f"nc_{nk}_{c}", pre + "\n" + op)

# --- part J: threads racing on one tensor (must not crash; results not compared) ---
TH = """
import threading
def race(fns, n=200):
    errs = []
    def run(f):
        for _ in range(n):
            try:
                f()
            except Exception as e:
                errs.append(type(e).__name__)
    ts = [threading.Thread(target=run, args=(f,)) for f in fns]
    [t.start() for t in ts]
    [t.join() for t in ts]
    return 'done'
"""
for c, fns in [("resize_vs_sum", "[lambda: t.resize_(int(np.random.randint(0, 2000))), lambda: t.sum(), lambda: t.tolist()]"),
               ("storage_resize_vs_read", "[lambda: t.untyped_storage().resize_(int(np.random.randint(0, 8000))), lambda: t.clone(), lambda: t[3:].sum()]"),
               ("set_vs_add", "[lambda: t.set_(m.ones(int(np.random.randint(0, 1000)))), lambda: t.add_(1), lambda: t.numpy().sum()]"),
               ("inplace_vs_index", "[lambda: t.mul_(1.0), lambda: t[m.tensor([0, 1])], lambda: t.index_add_(0, m.tensor([0]), m.ones(1))]"),
               ("resize_vs_matmul", "[lambda: t.resize_(int(np.random.randint(0, 40)), 40), lambda: t @ m.ones(40), lambda: t.t().contiguous()]"),
               ("resize_vs_copy", "[lambda: t.resize_(int(np.random.randint(0, 2000))), lambda: m.zeros(1000).copy_(t[:1000]) if t.numel() >= 1000 else None]"),
               ("requires_grad_toggle", "[lambda: t.requires_grad_(True), lambda: t.requires_grad_(False), lambda: (t * 2).sum()]"),
               ("dlpack_vs_resize", "[lambda: np.from_dlpack(t).sum(), lambda: t.resize_(int(np.random.randint(0, 2000)))]"),
               ("set_storage_vs_sort", "[lambda: t.set_(m.arange(float(np.random.randint(0, 500)))), lambda: t.sort(), lambda: t.cumsum(0)]")]:
    add(f"thread_{c}", TH + "t = m.ones(1000)\nrace(" + fns + ")")

# --- part K: torch.jit.load of crafted archives ---
GOOD_JIT = (
    'UEsDBBQAAAAAAEIzfl2C+36bEAAAABAAAAAOAAAAYXJjaGl2ZS9kYXRhLzAiea27nDbCPrH8FL8dOAW/UEsDBBQAAAAAAEIz'
    'fl2pTyY+CAAAAAgAAAAOAAAAYXJjaGl2ZS9kYXRhLzHWcIu+qypCPlBLAwQUAAAAAABCM35dLPCSMzkBAAA5AQAAEAAAAGFy'
    'Y2hpdmUvZGF0YS5wa2yAAmNfX3RvcmNoX18udG9yY2gubm4ubW9kdWxlcy5saW5lYXIKTGluZWFyCnEAKYF9KFgGAAAAd2Vp'
    'Z2h0cQFjdG9yY2guX3V0aWxzCl9yZWJ1aWxkX3RlbnNvcl92MgpxAigoWAcAAABzdG9yYWdlcQNjdG9yY2gKRmxvYXRTdG9y'
    'YWdlCnEEWAEAAAAwcQVYAwAAAGNwdXEGSwR0UXEHSwAoSwJLAnQoSwJLAXSIY2NvbGxlY3Rpb25zCk9yZGVyZWREaWN0CnEI'
    'KVJ0UnEJWAQAAABiaWFzcQpoAigoaANoBFgBAAAAMXELaAZLAnRRcQxLAChLAnQoSwF0iGgIKVJ0UnENWAgAAAB0cmFpbmlu'
    'Z3EOiFgWAAAAX2lzX2Z1bGxfYmFja3dhcmRfaG9va3EPTnVicRAuUEsDBBQAAAAAAEIzfl2vItk4ZgEAAGYBAAAxAAAAYXJj'
    'aGl2ZS9jb2RlL19fdG9yY2hfXy90b3JjaC9ubi9tb2R1bGVzL2xpbmVhci5weWNsYXNzIExpbmVhcihNb2R1bGUpOgogIF9f'
    'cGFyYW1ldGVyc19fID0gWyJ3ZWlnaHQiLCAiYmlhcyIsIF0KICBfX2J1ZmZlcnNfXyA9IFtdCiAgd2VpZ2h0IDogVGVuc29y'
    'CiAgYmlhcyA6IFRlbnNvcgogIHRyYWluaW5nIDogYm9vbAogIF9pc19mdWxsX2JhY2t3YXJkX2hvb2sgOiBPcHRpb25hbFti'
    'b29sXQogIGRlZiBmb3J3YXJkKHNlbGY6IF9fdG9yY2hfXy50b3JjaC5ubi5tb2R1bGVzLmxpbmVhci5MaW5lYXIsCiAgICBp'
    'bnB1dDogVGVuc29yKSAtPiBUZW5zb3I6CiAgICBiaWFzID0gc2VsZi5iaWFzCiAgICB3ZWlnaHQgPSBzZWxmLndlaWdodAog'
    'ICAgcmV0dXJuIHRvcmNoLmxpbmVhcihpbnB1dCwgd2VpZ2h0LCBiaWFzKQpQSwMEFAAAAAAAQjN+XW0vCVcEAAAABAAAABUA'
    'AABhcmNoaXZlL2NvbnN0YW50cy5wa2yAAikuUEsDBBQAAAAAAEIzfl0AAAAAAAAAAAAAAAAXAAAAYXJjaGl2ZS90cmFjZWRf'
    'aW5wdXRzLzBQSwMEFAAAAAAAQjN+XbJb3mIBAQAAAQEAABkAAABhcmNoaXZlL3RyYWNlZF9pbnB1dHMucGtsgAJjdG9yY2gu'
    'aml0Ll9waWNrbGUKcmVzdG9yZV90eXBlX3RhZwpxAH0oWAcAAABmb3J3YXJkcQFoAF0oY3RvcmNoLl91dGlscwpfcmVidWls'
    'ZF90ZW5zb3JfdjIKcQIoKFgHAAAAc3RvcmFnZXEDY3RvcmNoCkZsb2F0U3RvcmFnZQpxBFgBAAAAMHEFWAMAAABjcHVxBksC'
    'dFFxB0sAKEsBSwJ0KEsCSwF0iWNjb2xsZWN0aW9ucwpPcmRlcmVkRGljdApxCClSdFJxCWVYCQAAAExpc3RbQW55XXEKhlJ1'
    'WBQAAABEaWN0W3N0ciwgTGlzdFtBbnldXXELhlJxDC5QSwMEFAAAAAAAQjN+XdGeZ1UCAAAAAgAAAA8AAABhcmNoaXZlL3Zl'
    'cnNpb24zClBLAwQUAAAAAABCM35dhT3jGQYAAAAGAAAAEQAAAGFyY2hpdmUvYnl0ZW9yZGVybGl0dGxlUEsDBBQAAAAAAEIz'
    'fl2gFm2bKAAAACgAAAAeAAAAYXJjaGl2ZS8uZGF0YS9zZXJpYWxpemF0aW9uX2lkMTc2NTY5OTYyNzAxNTQ5OTM0NDExODE3'
    'MDMwMjkyNTI1NzkwNDE1MVBLAQIUAxQAAAAAAEIzfl2C+36bEAAAABAAAAAOAAAAAAAAAAAAAACAAQAAAABhcmNoaXZlL2Rh'
    'dGEvMFBLAQIUAxQAAAAAAEIzfl2pTyY+CAAAAAgAAAAOAAAAAAAAAAAAAACAATwAAABhcmNoaXZlL2RhdGEvMVBLAQIUAxQA'
    'AAAAAEIzfl0s8JIzOQEAADkBAAAQAAAAAAAAAAAAAACAAXAAAABhcmNoaXZlL2RhdGEucGtsUEsBAhQDFAAAAAAAQjN+Xa8i'
    '2ThmAQAAZgEAADEAAAAAAAAAAAAAAIAB1wEAAGFyY2hpdmUvY29kZS9fX3RvcmNoX18vdG9yY2gvbm4vbW9kdWxlcy9saW5l'
    'YXIucHlQSwECFAMUAAAAAABCM35dbS8JVwQAAAAEAAAAFQAAAAAAAAAAAAAAgAGMAwAAYXJjaGl2ZS9jb25zdGFudHMucGts'
    'UEsBAhQDFAAAAAAAQjN+XQAAAAAAAAAAAAAAABcAAAAAAAAAAAAAAIABwwMAAGFyY2hpdmUvdHJhY2VkX2lucHV0cy8wUEsB'
    'AhQDFAAAAAAAQjN+XbJb3mIBAQAAAQEAABkAAAAAAAAAAAAAAIAB+AMAAGFyY2hpdmUvdHJhY2VkX2lucHV0cy5wa2xQSwEC'
    'FAMUAAAAAABCM35d0Z5nVQIAAAACAAAADwAAAAAAAAAAAAAAgAEwBQAAYXJjaGl2ZS92ZXJzaW9uUEsBAhQDFAAAAAAAQjN+'
    'XYU94xkGAAAABgAAABEAAAAAAAAAAAAAAIABXwUAAGFyY2hpdmUvYnl0ZW9yZGVyUEsBAhQDFAAAAAAAQjN+XaAWbZsoAAAA'
    'KAAAAB4AAAAAAAAAAAAAAIABlAUAAGFyY2hpdmUvLmRhdGEvc2VyaWFsaXphdGlvbl9pZFBLBQYAAAAACgAKAKwCAAD4BQAA'
    'AAA=')
JL = f"""
GOOD = {GOOD_JIT!r}
import io, zipfile
def jl(data):
    return m.jit.load(io.BytesIO(data))
def zipit(items):
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        for n, d in items:
            z.writestr(n, d)
    return out.getvalue()
def good():
    # what torch.jit.save wrote for torch.jit.trace(torch.nn.Linear(2, 2), ...) after
    # manual_seed(0), its debug records left out (ptcore.jit.load reads such archives
    # without running them)
    import base64
    return base64.b64decode(GOOD)
CODE = (b'class Linear(Module):|  __parameters__ = ["weight", "bias", ]|  __buffers__ = []|  weight : Tensor|'
        b'  bias : Tensor|  training : bool|  _is_full_backward_hook : Optional[bool]|'
        b'  def forward(self: __torch__.torch.nn.modules.linear.Linear,|    input: Tensor) -> Tensor:|'
        b'    BODY|').replace(b'|', bytes([10]))
def code(body):
    d = good()
    return jl(zipit([(n, CODE.replace(b'BODY', body) if n.endswith('linear.py') else x) for n, x in members(d)]))
def members(d):
    z = zipfile.ZipFile(io.BytesIO(d))
    return [(n, z.read(n)) for n in z.namelist()]
"""
for c, op in [("garbage", "jl(b'\\x00' * 64)"), ("empty", "jl(b'')"), ("empty_zip", "jl(zipit([]))"),
              ("data_pkl_only", "jl(zipit([('archive/data.pkl', b'K\\x05.')]))"),
              ("code_os_system", "jl(zipit([('archive/data.pkl', b'K\\x05.'), ('archive/code/__torch__.py', 'import os\\nos.system(\"echo pwned\")\\n'), ('archive/version', '6\\n')]))"),
              ("roundtrip", "jl(good())(m.ones(2)).shape"),
              ("truncated", "jl(good()[:200])"),
              ("code_import_os", 'code(b"return __import__(\'os\').system(\'echo pwned\')")(m.ones(2))'),
              ("code_eval", 'code(b"return eval(\'1\')")(m.ones(2))'),
              ("code_getattr_dunder", "code(b'return input.__class__.__subclasses__()')(m.ones(2))"),
              ("code_open", 'code(b"return open(\'/etc/passwd\')")(m.ones(2))'),
              ("code_while_true", "code(b'while True:\\n      pass\\n    return input')"),
              ("code_unknown_op", "code(b'return torch.no_such_op(input)')(m.ones(2))"),
              ("code_ops_os", 'code(b"return ops.os.system(\'true\')")(m.ones(2))'),
              ("code_huge_alloc", "code(b'return torch.zeros([4611686018427387904])')(m.ones(2))"),
              ("code_garbage", "code(b'\\xff\\xfe(((')"),
              ("code_deep_nesting", "code(b'return ' + b'(' * 5000 + b'input' + b')' * 5000)(m.ones(2))"),
              ("code_deep_expr", "code(b'return input' + b' + input' * 20000)(m.ones(2)).shape"),
              ("constants_bad", "d = good()\njl(zipit([(n, b'cos\\nsystem\\n(S\"true\"\\ntR.' if n.endswith('constants.pkl') else x) for n, x in members(d)]))"),
              ("data_pkl_os", "d = good()\njl(zipit([(n, b'cos\\nsystem\\n(S\"true\"\\ntR.' if n.endswith('data.pkl') else x) for n, x in members(d)]))"),
              ("version_huge", "d = good()\njl(zipit([(n, b'99999\\n' if n.endswith('/version') else x) for n, x in members(d)]))"),
              ("no_code", "d = good()\njl(zipit([(n, x) for n, x in members(d) if '/code/' not in n]))"),
              ("no_data_pkl", "d = good()\njl(zipit([(n, x) for n, x in members(d) if not n.endswith('data.pkl')]))"),
              ("state_dict_file", "b = io.BytesIO()\nm.save({'a': m.ones(2)}, b)\njl(b.getvalue())"),
              ("path_missing", "m.jit.load('/nonexistent/x.pt')"),
              ("map_location_bad", "m.jit.load(io.BytesIO(good()), map_location='nosuch')")]:
    add(f"jit_{c}", JL + op)

# --- part L: DataLoader workers that die or hang ---
DLP = """
import os, signal, time
class DS(m.utils.data.Dataset):
    def __init__(self, mode): self.mode = mode
    def __len__(self): return 8
    def __getitem__(self, i):
        if i == 3:
            if self.mode == 'exit': os._exit(3)
            if self.mode == 'kill': os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == 'segv': os.kill(os.getpid(), signal.SIGSEGV)
            if self.mode == 'raise': raise KeyError('boom')
            if self.mode == 'sleep': time.sleep(30)
            if self.mode == 'sysexit': raise SystemExit(2)
            if self.mode == 'kbd': raise KeyboardInterrupt()
            if self.mode == 'unpicklable': return lambda: 0
            if self.mode == 'huge_shape': return m.ones(1).expand(2**40)
        return m.tensor([i])
def run(mode, **kw):
    dl = m.utils.data.DataLoader(DS(mode), batch_size=2, num_workers=2, **kw)
    return [b.tolist() for b in dl]
"""
for c, op in [("worker_exit", "run('exit')"), ("worker_kill", "run('kill')"), ("worker_segv", "run('segv')"),
              ("worker_raise", "run('raise')"), ("worker_sysexit", "run('sysexit')"),
              ("worker_timeout", "run('sleep', timeout=2)"), ("worker_unpicklable", "run('unpicklable')"),
              ("worker_init_raises", "run('ok', worker_init_fn=lambda i: 1 / 0)"),
              ("worker_init_exits", "run('ok', worker_init_fn=lambda i: os._exit(1))"),
              ("timeout_neg", "run('ok', timeout=-1)"), ("prefetch_zero", "run('ok', prefetch_factor=0)"),
              ("prefetch_neg", "run('ok', prefetch_factor=-1)"), ("workers_neg", "m.utils.data.DataLoader(DS('ok'), num_workers=-1)"),
              ("persistent_exit", "run('exit', persistent_workers=True)"),
              ("collate_raises", "run('ok', collate_fn=lambda b: 1 / 0)"),
              ("collate_exits_in_worker", "run('ok', collate_fn=lambda b: os._exit(4))"),
              ("sampler_bad_index", "m.utils.data.DataLoader(DS('ok'), sampler=[0, 100], num_workers=2).__iter__().__next__()"),
              ("iterable_worker_exit", "class IT(m.utils.data.IterableDataset):\n    def __iter__(self):\n        yield m.tensor([1])\n        os._exit(5)\n[b.tolist() for b in m.utils.data.DataLoader(IT(), num_workers=1)]"),
              ("break_early_then_gc", "dl = m.utils.data.DataLoader(DS('sleep'), batch_size=1, num_workers=2)\nit = iter(dl)\nnext(it).tolist()")]:
    add(f"dl_{c}", DLP + op)
