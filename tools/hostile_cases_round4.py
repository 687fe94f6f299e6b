"""Hostile and odd inputs of hardening round 4, for tools/hostile_probe.py: torch.compile,
fx, _dynamo/_inductor helpers, distributed without a process group and the profiler with odd
arguments (part A); as_strided/set_/resize_ and shrunk storages on the CPU and on a device,
unfold/as_strided_scatter/narrow_copy, index_put_ with accumulate, scatter_reduce and index
kernels with bad indices (part B); pooling/convolution/interpolate/embedding_bag/ctc_loss/
searchsorted/histc/bincount with odd arguments (part C); crafted checkpoint pickles and
archives (part D); NumPy arrays, __array_interface__, DLPack, pinned memory, Size, shapes and
range factories (part E); dtype promotion over the limited and float8 dtypes, DTensor
and distributed odd arguments (part F); in-place writes through overlapping views, frombuffer/
from_file, set_ with odd sources, storage slices, view(dtype) and odd indices (part G).  Device cases use ``dev``: run them on the emulated CUDA device with

    PROBE_DEV=cuda PTCORE_CUDA_EMULATE=1 PYTHONPATH=$PWD python tools/hostile_probe.py \
        tools/hostile_cases_round4.py
"""
CASES = []


def add(cid, code):
    CASES.append((cid, code))


# --- part A ---
# compile odd args
add("compile_backend_int", "m.compile(lambda x: x+1, backend=3)(m.ones(2))")
add("compile_backend_unknown", "m.compile(lambda x: x+1, backend='nope')(m.ones(2))")
add("compile_backend_none", "m.compile(lambda x: x+1, backend=None)(m.ones(2))")
add("compile_backend_empty", "m.compile(lambda x: x+1, backend='')(m.ones(2))")
add("compile_mode_bad", "m.compile(lambda x: x+1, mode='fastest')(m.ones(2))")
add("compile_mode_int", "m.compile(lambda x: x+1, mode=3)(m.ones(2))")
add("compile_mode_and_options", "m.compile(lambda x: x+1, mode='default', options={})(m.ones(2))")
add("compile_options_list", "m.compile(lambda x: x+1, options=[1,2])(m.ones(2))")
add("compile_options_badkey", "m.compile(lambda x: x+1, options={'no_such_option': 1})(m.ones(2))")
add("compile_options_badval", "m.compile(lambda x: x+1, options={'max_autotune': 'yes'})(m.ones(2))")
add("compile_options_nonstr_key", "m.compile(lambda x: x+1, options={1: 2})(m.ones(2))")
add("compile_not_callable", "m.compile(3)")
add("compile_none", "m.compile(None)")
add("compile_fullgraph_str", "m.compile(lambda x: x+1, fullgraph='yes')(m.ones(2))")
add("compile_dynamic_str", "m.compile(lambda x: x+1, dynamic='yes')(m.ones(2))")
add("compile_fullgraph_datadep", "def f(x):\n    if x.sum() > 0:\n        return x+1\n    return x-1\nm.compile(f, fullgraph=True, backend='eager')(m.ones(2))")
add("compile_fullgraph_item", "def f(x):\n    return x * x.sum().item()\nm.compile(f, fullgraph=True, backend='eager')(m.ones(2))")
add("compile_fullgraph_nonzero", "def f(x):\n    return x.nonzero()\nm.compile(f, fullgraph=True, backend='eager')(m.ones(2))")
add("compile_fullgraph_print", "def f(x):\n    print('', end='')\n    return x+1\nm.compile(f, fullgraph=True, backend='eager')(m.ones(2))")
add("compile_backend_raises", "def bk(gm, ex):\n    raise ValueError('boom')\nm.compile(lambda x: x+1, backend=bk)(m.ones(2))")
add("compile_backend_returns_none", "def bk(gm, ex):\n    return None\nm.compile(lambda x: x+1, backend=bk)(m.ones(2))")
add("compile_backend_returns_int", "def bk(gm, ex):\n    return 3\nm.compile(lambda x: x+1, backend=bk)(m.ones(2))")
add("compile_backend_wrong_arity", "def bk(gm):\n    return gm\nm.compile(lambda x: x+1, backend=bk)(m.ones(2))")
add("compile_fn_raises", "def f(x):\n    raise KeyError('k')\nm.compile(f, backend='eager')(m.ones(2))")
add("compile_fn_raises_inductor", "def f(x):\n    raise KeyError('k')\nm.compile(f)(m.ones(2))")
add("compile_recursive", "def f(x, n):\n    return x if n == 0 else f(x+1, n-1)\nm.compile(f, backend='eager')(m.ones(2), 50)")
add("compile_generator", "def f(x):\n    yield x\nlist(m.compile(f, backend='eager')(m.ones(2)))")
add("compile_bad_shape_op", "def f(x):\n    return x.view(3)\nm.compile(f)(m.ones(2))")
add("compile_bad_shape_op_eager", "def f(x):\n    return x @ x.T @ m.ones(5)\nm.compile(f)(m.ones(2,3))")
add("compile_module_disable", "m.compile(m.nn.Linear(2,2), disable=True)(m.ones(2)).shape")
add("compile_disable_str", "m.compile(lambda x: x, disable='x')(m.ones(2))")
add("compile_kwargs_only", "m.compile(lambda *, x: x+1)(x=m.ones(2))")
add("compile_dict_input", "m.compile(lambda d: d['a']+1)({'a': m.ones(2)})")
add("compile_set_grad_inside", "def f(x):\n    with m.no_grad():\n        return x*2\nm.compile(f)(m.ones(2, requires_grad=True)).requires_grad")
add("compile_list_backends_bad", "m._dynamo.list_backends(exclude_tags=3)")
add("compile_lookup_backend", "m._dynamo.lookup_backend('nope')")
add("compile_reset", "m._dynamo.reset()")
add("dynamo_explain_bad", "m._dynamo.explain(3)()")
add("dynamo_mark_dynamic_bad", "m._dynamo.mark_dynamic(m.ones(2), 5)")
add("dynamo_mark_dynamic_neg", "m._dynamo.mark_dynamic(m.ones(2), -1)")
add("dynamo_mark_static_bad", "m._dynamo.mark_static(m.ones(2), 5)")
add("dynamo_allow_in_graph_int", "m._dynamo.allow_in_graph(3)")
add("dynamo_disable_int", "m._dynamo.disable(3)")
add("dynamo_optimize_bad", "m._dynamo.optimize('nope')")
add("compiler_disable_nested", "f = m.compiler.disable(lambda x: x+1)\nm.compile(lambda x: f(x)*2, backend='eager')(m.ones(2))")
add("compiler_allow_in_graph", "m.compiler.allow_in_graph(None)")
add("compiler_is_compiling", "m.compiler.is_compiling()")
add("compile_config_bad", "m._dynamo.config.cache_size_limit = 'x'\nm.compile(lambda x: x+1, backend='eager')(m.ones(2))")
add("compile_cache_limit_0", "m._dynamo.config.cache_size_limit = 0\nr = m.compile(lambda x: x+1, backend='eager')(m.ones(2))\nm._dynamo.config.cache_size_limit = 8\nr")
add("inductor_config_bad", "m._inductor.config.no_such_thing")
add("inductor_config_patch_bad", "m._inductor.config.patch(no_such_thing=1)")
add("dynamo_config_patch_bad", "m._dynamo.config.patch(no_such_thing=1)")
add("inductor_list_options", "type(m._inductor.list_options())")
add("inductor_list_mode_options_bad", "m._inductor.list_mode_options('nope')")
add("inductor_list_mode_options", "sorted(m._inductor.list_mode_options('max-autotune'))")

# fx odd graphs
add("fx_gm_empty_graph", "g = m.fx.Graph()\ngm = m.fx.GraphModule(m.nn.Module(), g)\ngm()")
add("fx_gm_no_output", "g = m.fx.Graph()\nx = g.placeholder('x')\ngm = m.fx.GraphModule(m.nn.Module(), g)\ngm(1)")
add("fx_gm_two_outputs", "g = m.fx.Graph()\nx = g.placeholder('x')\ng.output(x)\ng.output(x)\nm.fx.GraphModule(m.nn.Module(), g)")
add("fx_gm_bad_target", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_module('nope', (x,))\ng.output(y)\nm.fx.GraphModule(m.nn.Module(), g)")
add("fx_gm_bad_attr", "g = m.fx.Graph()\ny = g.get_attr('nope')\ng.output(y)\nm.fx.GraphModule(m.nn.Module(), g)")
add("fx_gm_root_dict", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_module('lin', (x,))\ng.output(y)\nm.fx.GraphModule({'lin': m.nn.Identity()}, g)(m.ones(2))")
add("fx_gm_root_int", "g = m.fx.Graph()\nx = g.placeholder('x')\ng.output(x)\nm.fx.GraphModule(3, g)")
add("fx_gm_graph_int", "m.fx.GraphModule(m.nn.Module(), 3)")
add("fx_gm_call_function_int", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_function(3, (x,))\ng.output(y)\nm.fx.GraphModule(m.nn.Module(), g)(1)")
add("fx_node_use_before_def", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_function(m.add, (x, x))\ng.output(y)\nx2 = g.placeholder('z')\ng.lint()")
add("fx_graph_lint_cycle", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_function(m.add, (x, x))\ny.args = (y, x)\ng.output(y)\ng.lint()")
add("fx_graph_eliminate_cycle", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_function(m.add, (x, x))\ny.args = (y, x)\ng.output(y)\nm.fx.GraphModule(m.nn.Module(), g)(1)")
add("fx_erase_used_node", "g = m.fx.Graph()\nx = g.placeholder('x')\ny = g.call_function(m.add, (x, x))\ng.output(y)\ng.erase_node(x)")
add("fx_placeholder_keyword_name", "g = m.fx.Graph()\nx = g.placeholder('def')\ng.output(x)\nm.fx.GraphModule(m.nn.Module(), g)(5)")
add("fx_placeholder_bad_name", "g = m.fx.Graph()\nx = g.placeholder('a b; import os')\ng.output(x)\nm.fx.GraphModule(m.nn.Module(), g)(5)")
add("fx_placeholder_dup_name", "g = m.fx.Graph()\nx = g.placeholder('x')\nx2 = g.placeholder('x')\ng.output((x, x2))\nm.fx.GraphModule(m.nn.Module(), g)(5, 6)")
add("fx_get_attr_inject", "g = m.fx.Graph()\ny = g.get_attr('__class__')\ng.output(y)\nm.fx.GraphModule(m.nn.Module(), g)")
add("fx_symbolic_trace_int", "m.fx.symbolic_trace(3)")
add("fx_symbolic_trace_datadep", "def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\nm.fx.symbolic_trace(f)")
add("fx_symbolic_trace_len", "def f(x):\n    return len(x)\nm.fx.symbolic_trace(f)")
add("fx_symbolic_trace_iter", "def f(x):\n    a, b = x\n    return a\nm.fx.symbolic_trace(f)")
add("fx_symbolic_trace_concrete_bad", "def f(x, y):\n    return x + y\nm.fx.symbolic_trace(f, concrete_args={'z': 1})")
add("fx_interp_wrong_nargs", "gm = m.fx.symbolic_trace(lambda x, y: x + y)\nm.fx.Interpreter(gm).run(m.ones(2))")
add("fx_gm_wrong_nargs", "gm = m.fx.symbolic_trace(lambda x, y: x + y)\ngm(m.ones(2))")
add("fx_node_bad_op", "g = m.fx.Graph()\ng.create_node('bogus', 'x')")
add("fx_recompile_after_bad_edit", "gm = m.fx.symbolic_trace(lambda x: x + 1)\nn = list(gm.graph.nodes)[1]\nn.target = 'no_such_fn'\ngm.recompile()\ngm(m.ones(2))")

# distributed without a process group
add("dist_all_reduce_nopg", "m.distributed.all_reduce(m.ones(2))")
add("dist_get_rank_nopg", "m.distributed.get_rank()")
add("dist_get_world_size_nopg", "m.distributed.get_world_size()")
add("dist_barrier_nopg", "m.distributed.barrier()")
add("dist_broadcast_nopg", "m.distributed.broadcast(m.ones(2), 0)")
add("dist_is_initialized", "m.distributed.is_initialized()")
add("dist_new_group_nopg", "m.distributed.new_group([0])")
add("dist_destroy_nopg", "m.distributed.destroy_process_group()")
add("dist_nn_all_reduce_nopg", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.nn.functional').all_reduce(m.ones(2))")
add("dist_nn_all_gather_nopg", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.nn.functional').all_gather(m.ones(2))")
add("dist_nn_broadcast_nopg", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.nn.functional').broadcast(m.ones(2), 0)")
add("dist_init_bad_backend", "m.distributed.init_process_group('nope', rank=0, world_size=1, store=m.distributed.HashStore())")
add("dist_init_bad_rank", "m.distributed.init_process_group('gloo', rank=5, world_size=1, store=m.distributed.HashStore())")
add("dist_init_neg_world", "m.distributed.init_process_group('gloo', rank=0, world_size=-1, store=m.distributed.HashStore())")
add("dist_hashstore_get_missing", "s = m.distributed.HashStore()\ns.set_timeout(__import__('datetime').timedelta(seconds=0.1))\ns.get('x')")
add("dist_hashstore_add_nonint", "s = m.distributed.HashStore()\ns.add('x', 'y')")
add("dist_hashstore_set_int", "s = m.distributed.HashStore()\ns.set('x', 5)\ns.get('x')")
add("dist_device_mesh_nopg", "m.distributed.device_mesh.init_device_mesh('cpu', (2,))")
add("dist_device_mesh_bad_shape", "m.distributed.device_mesh.init_device_mesh('cpu', (-1,))")

# profiler
add("profiler_bad_activity", "with m.profiler.profile(activities=[3]):\n    pass\n1")
add("profiler_schedule_neg", "m.profiler.schedule(wait=-1, warmup=0, active=1)")
add("profiler_schedule_zero_active", "m.profiler.schedule(wait=0, warmup=0, active=0)")
add("profiler_step_outside", "p = m.profiler.profile()\np.step()\n1")
add("profiler_nested", "with m.profiler.profile() as p:\n    with m.profiler.profile() as q:\n        m.ones(2)+1\n1")
add("profiler_export_bad_path", "with m.profiler.profile() as p:\n    m.ones(2)+1\np.export_chrome_trace('/nonexistent/dir/x.json')")
add("profiler_key_averages_before", "p = m.profiler.profile()\np.key_averages()")
add("profiler_record_function_int", "with m.profiler.record_function(3):\n    pass\n1")
add("profiler_record_function_none", "with m.profiler.record_function(None):\n    pass\n1")
add("profiler_table_bad_sort", "with m.profiler.profile() as p:\n    m.ones(2)+1\np.key_averages().table(sort_by='nope')")
add("profiler_table_row_neg", "with m.profiler.profile() as p:\n    m.ones(2)+1\ntype(p.key_averages().table(row_limit=-5))")
add("autograd_profiler_exit_twice", "p = m.autograd.profiler.profile()\np.__enter__()\np.__exit__(None, None, None)\np.__exit__(None, None, None)")

# --- part B ---
H = [2**31, 2**62, 2**63-1, -1, -2**63, 0]
# as_strided on device
for dt in ["float32", "int64", "uint8", "complex64", "bool", "float16"]:
    add(f"dev_as_strided_past_{dt}", f"m.zeros(4, dtype=m.{dt}, device=dev).as_strided([3],[2])")
    add(f"dev_as_strided_negoff_{dt}", f"m.zeros(4, dtype=m.{dt}, device=dev).as_strided([2],[1],-1)")
    add(f"dev_as_strided_hugeoff_{dt}", f"m.zeros(4, dtype=m.{dt}, device=dev).as_strided([1],[1],2**62).sum()")
    add(f"dev_as_strided_hugestride_{dt}", f"m.zeros(4, dtype=m.{dt}, device=dev).as_strided([2],[2**62])")
    add(f"dev_as_strided_neg_{dt}", f"m.zeros(4, dtype=m.{dt}, device=dev).as_strided([2],[-1], 3)")
    add(f"dev_set_huge_{dt}", f"t=m.zeros(4, dtype=m.{dt}, device=dev)\nm.zeros(1, dtype=m.{dt}, device=dev).set_(t.untyped_storage(), 2**62, (2,), (1,))")
    add(f"dev_set_negstride_{dt}", f"t=m.zeros(4, dtype=m.{dt}, device=dev)\nm.zeros(1, dtype=m.{dt}, device=dev).set_(t.untyped_storage(), 2, (2,), (-1,))")
    add(f"dev_resize_huge_{dt}", f"m.zeros(2, dtype=m.{dt}, device=dev).resize_(2**61)")
    add(f"dev_resize_neg_{dt}", f"m.zeros(2, dtype=m.{dt}, device=dev).resize_(-1)")
    add(f"dev_empty_huge_{dt}", f"m.empty((2**40, 2**40), dtype=m.{dt}, device=dev)")
    add(f"dev_empty_strided_huge_{dt}", f"m.empty_strided((2, 2), (2**62, 1), dtype=m.{dt}, device=dev)")
    add(f"dev_empty_strided_neg_{dt}", f"m.empty_strided((2, 2), (-1, 1), dtype=m.{dt}, device=dev)")
# shrunk storages on device
SHR = ["t.sum()", "t.tolist()", "t.clone()", "t.add_(1)", "t[3]", "t.fill_(2)", "t.cpu()", "t.to(m.float64)",
       "t[m.tensor([1, 2], device=dev)]", "t.index_fill_(0, m.tensor([1], device=dev), 3.)", "t.sort()", "t.cumsum(0)",
       "t.copy_(m.ones(10))", "m.ones(10, device=dev).copy_(t)", "t.view(2, 5).t().contiguous()", "t.max()",
       "t.nonzero()", "m.cat([t, t])", "t.masked_fill_(m.ones(10, dtype=m.bool, device=dev), 1.)", "t.unique()",
       "t.scatter_(0, m.tensor([1], device=dev), 5.)", "t.flip(0)", "t[t > 0]", "repr(t)[:6]", "t.item()"]
for i, op in enumerate(SHR):
    add(f"dev_shrunk0_{i}", f"t=m.arange(10., device=dev)\nv=t[2:]\nt.untyped_storage().resize_(0)\nt=v\n{op}")
    add(f"dev_shrunk12_{i}", f"t=m.arange(10., device=dev)\nt.untyped_storage().resize_(12)\n{op}")
# shrink then grow then read (new storage contents)
add("shrink_grow_read", "t=m.arange(10.)\ns=t.untyped_storage()\ns.resize_(0)\ns.resize_(40)\nt.shape")
add("dev_shrink_grow_read", "t=m.arange(10., device=dev)\ns=t.untyped_storage()\ns.resize_(0)\ns.resize_(40)\nt.shape")
add("shrink_then_set_", "t=m.arange(10.)\nu=m.empty(0).set_(t.untyped_storage(), 0, (10,), (1,))\nt.untyped_storage().resize_(8)\nu.sum()")
add("shrink_then_grad", "w=m.arange(10., requires_grad=True)\ny=(w*2)\ny.untyped_storage().resize_(0)\ny.sum().backward()\nw.grad")
add("shrink_saved_tensor", "w=m.arange(10., requires_grad=True)\nx=w*1\ny=x*x\nx.untyped_storage().resize_(0)\ny.sum().backward()\nw.grad")
add("shrink_typed_storage", "t=m.arange(10.)\nt.storage().resize_(1)\nt.sum()")
add("shrink_numpy_view_then", "t=m.arange(10.)\na=t.numpy()\nt.untyped_storage().resize_(0)\na.sum()")
add("shrink_dlpack_then", "t=m.arange(10.)\nimport numpy\na=numpy.from_dlpack(t)\nt.untyped_storage().resize_(0)\nfloat(a.sum())")
add("shrink_storage_of_numpy", "a=np.arange(10.)\nt=m.from_numpy(a)\nt.untyped_storage().resize_(0)")
add("shrink_storage_of_numpy_grow", "a=np.arange(10.)\nt=m.from_numpy(a)\nt.untyped_storage().resize_(160)")
add("shrink_storage_of_frombuffer", "b=bytearray(40)\nt=m.frombuffer(b, dtype=m.float32)\nt.untyped_storage().resize_(0)")
add("shrink_storage_pinned", "t=m.arange(10.).pin_memory()\nt.untyped_storage().resize_(0)\nt.sum()")
# unfold / as_strided_scatter / narrow_copy
for a in ["(0, 2, 0)", "(0, 2, -1)", "(0, 11, 1)", "(0, -1, 1)", "(0, 2**62, 1)", "(0, 2, 2**63-1)", "(1, 2, 1)", "(-2, 2, 1)", "(0, 0, 1)"]:
    add(f"unfold_{a}", f"m.arange(10.).unfold{a}")
    add(f"dev_unfold_{a}", f"m.arange(10., device=dev).unfold{a}")
for a in ["([2],[1],2**62)", "([2],[2**62])", "([2],[-1], 3)", "([2],[1],-1)", "([20],[1])", "([0],[2**62], 2**62)", "([3],[0])", "([2,2],[1,1])"]:
    add(f"as_strided_scatter_{a}", f"m.as_strided_scatter(m.zeros(10), m.ones(*{a}[0]), *{a})")
for a in ["(0, 0, 11)", "(0, -11, 1)", "(0, 2**63-1, 1)", "(0, 5, -1)", "(1, 0, 1)", "(0, 10, 0)", "(0, -2**63, 1)"]:
    add(f"narrow_copy_{a}", f"m.arange(10.).narrow_copy{a}")
    add(f"dev_narrow_copy_{a}", f"m.arange(10., device=dev).narrow_copy{a}")
# index_put_ accumulate
IPV = [("m.tensor([10])", "m.ones(1)"), ("m.tensor([-11])", "m.ones(1)"), ("m.tensor([2**62])", "m.ones(1)"),
       ("m.tensor([-2**63])", "m.ones(1)"), ("m.tensor([1.])", "m.ones(1)"), ("m.tensor([True]*10)", "m.ones(10)"),
       ("m.tensor([True]*9)", "m.ones(9)"), ("m.tensor([1], dtype=m.int32)", "m.ones(1)"), ("m.tensor([1], dtype=m.uint8)", "m.ones(1)"),
       ("m.tensor([1, 1, 1])", "m.ones(2)"), ("m.tensor([1, 1])", "m.ones(3)"), ("m.tensor([[1, 1]])", "m.ones(2, 2)"),
       ("m.tensor([1, 2])", "m.ones(2, dtype=m.float64)"), ("m.tensor([1, 2])", "m.ones(2, dtype=m.int64)"), ("m.tensor([], dtype=m.long)", "m.ones(0)"),
       ("m.tensor([1, 2], dtype=m.int16)", "m.ones(2)"), ("m.tensor([1, 2], dtype=m.int8)", "m.ones(2)"), ("m.tensor([-1, -1])", "m.tensor([1., 2.])")]
for i, (ix, v) in enumerate(IPV):
    for acc in (True, False):
        add(f"index_put_{i}_{acc}", f"t=m.zeros(10)\nt.index_put_(({ix},), {v}, accumulate={acc})")
        add(f"dev_index_put_{i}_{acc}", f"t=m.zeros(10, device=dev)\nt.index_put_(({ix}.to(dev),), {v}.to(dev), accumulate={acc})")
add("index_put_2d_acc_oob", "t=m.zeros(3, 4)\nt.index_put_((m.tensor([0, 2]), m.tensor([1, 4])), m.ones(2), accumulate=True)")
add("index_put_2d_acc_bcast", "t=m.zeros(3, 4)\nt.index_put_((m.tensor([[0], [2]]), m.tensor([1, 3])), m.ones(2, 2), accumulate=True)")
add("index_put_too_many", "t=m.zeros(3)\nt.index_put_((m.tensor([0]), m.tensor([0])), m.ones(1), accumulate=True)")
add("index_put_none_index", "t=m.zeros(3, 4)\nt.index_put_((None, m.tensor([1])), m.ones(3, 1), accumulate=True)")
add("index_put_empty_tuple", "t=m.zeros(3)\nt.index_put_((), m.ones(3), accumulate=True)")
add("index_put_bool_acc_int", "t=m.zeros(3, dtype=m.int64)\nt.index_put_((m.tensor([0, 0]),), m.tensor([2**62, 2**62]), accumulate=True)")
add("index_put_acc_bool_self", "t=m.zeros(3, dtype=m.bool)\nt.index_put_((m.tensor([0, 0]),), m.tensor([True, True]), accumulate=True)")
add("index_put_acc_complex", "t=m.zeros(3, dtype=m.complex64)\nt.index_put_((m.tensor([0, 0]),), m.tensor([1j, 1j], dtype=m.complex64), accumulate=True)")
add("index_put_acc_expanded_self", "t=m.zeros(1).expand(3)\nt.index_put_((m.tensor([0, 1]),), m.ones(2), accumulate=True)")
add("index_put_acc_self_alias", "t=m.arange(4.)\nt.index_put_((m.tensor([0, 1, 2, 3]),), t.flip(0), accumulate=True)")
# scatter_reduce bad shapes
SR = [("m.zeros(3, dtype=m.long)", "m.ones(3)"), ("m.zeros(5, dtype=m.long)", "m.ones(3)"), ("m.zeros(3, 2, dtype=m.long)", "m.ones(3)"),
      ("m.zeros(3)", "m.ones(3)"), ("m.tensor([10, 0, 0])", "m.ones(3)"), ("m.tensor([-1, 0, 0])", "m.ones(3)"),
      ("m.tensor([-11, 0, 0])", "m.ones(3)"), ("m.zeros(3, dtype=m.int32)", "m.ones(3)"), ("m.zeros(0, dtype=m.long)", "m.ones(0)"),
      ("m.zeros(3, dtype=m.long)", "m.ones(3, dtype=m.float64)"), ("m.zeros((), dtype=m.long)", "m.ones(())"), ("m.zeros(12, dtype=m.long)", "m.ones(12)")]
for i, (ix, src) in enumerate(SR):
    for red in ("sum", "prod", "mean", "amax", "amin", "bad"):
        add(f"scatter_reduce_{i}_{red}", f"m.zeros(10).scatter_reduce(0, {ix}, {src}, '{red}')")
    add(f"dev_scatter_reduce_{i}", f"m.zeros(10, device=dev).scatter_reduce(0, {ix}.to(dev), {src}.to(dev), 'amax', include_self=False)")
add("scatter_reduce_dim_oob", "m.zeros(10).scatter_reduce(1, m.zeros(3, dtype=m.long), m.ones(3), 'sum')")
add("scatter_reduce_dim_huge", "m.zeros(10).scatter_reduce(2**62, m.zeros(3, dtype=m.long), m.ones(3), 'sum')")
add("scatter_reduce_2d_idx_bigger_than_src", "m.zeros(4, 4).scatter_reduce(0, m.zeros(4, 4, dtype=m.long), m.ones(2, 2), 'sum')")
add("scatter_reduce_2d_idx_dim1_big", "m.zeros(4, 2).scatter_reduce(0, m.zeros(2, 3, dtype=m.long), m.ones(4, 4), 'sum')")
add("scatter_2d_idx_dim1_big", "m.zeros(4, 2).scatter(0, m.zeros(2, 3, dtype=m.long), m.ones(4, 4))")
add("scatter_add_2d_idx_dim1_big", "m.zeros(4, 2).scatter_add(0, m.zeros(2, 3, dtype=m.long), m.ones(4, 4))")
add("dev_scatter_reduce_2d_idx_dim1_big", "m.zeros(4, 2, device=dev).scatter_reduce(0, m.zeros(2, 3, dtype=m.long, device=dev), m.ones(4, 4, device=dev), 'sum')")
add("dev_scatter_2d_idx_dim1_big", "m.zeros(4, 2, device=dev).scatter(0, m.zeros(2, 3, dtype=m.long, device=dev), m.ones(4, 4, device=dev))")
add("dev_gather_2d_idx_dim1_big", "m.zeros(4, 2, device=dev).gather(0, m.zeros(2, 3, dtype=m.long, device=dev))")
add("gather_2d_idx_dim1_big", "m.zeros(4, 2).gather(0, m.zeros(2, 3, dtype=m.long))")
add("dev_index_select_oob", "m.zeros(4, device=dev).index_select(0, m.tensor([4], device=dev))")
add("dev_take_oob", "m.zeros(4, device=dev).take(m.tensor([4], device=dev))")
add("dev_take_neg_oob", "m.zeros(4, device=dev).take(m.tensor([-5], device=dev))")
add("dev_gather_oob", "m.zeros(4, device=dev).gather(0, m.tensor([4], device=dev))")
add("dev_scatter_oob", "m.zeros(4, device=dev).scatter(0, m.tensor([4], device=dev), 1.)")
add("dev_index_add_oob", "m.zeros(4, device=dev).index_add(0, m.tensor([4], device=dev), m.ones(1, device=dev))")
add("dev_index_copy_oob", "m.zeros(4, device=dev).index_copy(0, m.tensor([-5], device=dev), m.ones(1, device=dev))")
add("dev_put_oob", "m.zeros(4, device=dev).put_(m.tensor([4], device=dev), m.ones(1, device=dev), accumulate=True)")
add("dev_embedding_oob", "m.nn.functional.embedding(m.tensor([4], device=dev), m.ones(4, 2, device=dev))")
add("dev_embedding_neg", "m.nn.functional.embedding(m.tensor([-1], device=dev), m.ones(4, 2, device=dev))")
add("dev_one_hot_oob", "m.nn.functional.one_hot(m.tensor([4], device=dev), 3)")
add("dev_nll_oob", "m.nn.functional.nll_loss(m.zeros(2, 3, device=dev), m.tensor([3, 0], device=dev))")
add("dev_nll_neg", "m.nn.functional.nll_loss(m.zeros(2, 3, device=dev), m.tensor([-5, 0], device=dev))")
add("dev_ce_oob", "m.nn.functional.cross_entropy(m.zeros(2, 3, device=dev), m.tensor([3, 0], device=dev))")
add("dev_bincount_neg", "m.bincount(m.tensor([-1], device=dev))")
add("dev_multinomial_neg", "m.multinomial(m.tensor([-1., 1.], device=dev), 1)")
add("dev_histc_huge", "m.histc(m.ones(3, device=dev), bins=2**40)")
add("dev_index_oob_getitem", "m.zeros(4, device=dev)[m.tensor([4], device=dev)]")
add("dev_index_oob_setitem", "t=m.zeros(4, device=dev)\nt[m.tensor([4], device=dev)] = 1.\nt")
add("dev_max_unpool_oob", "m.nn.functional.max_unpool1d(m.ones(1, 1, 2, device=dev), m.tensor([[[0, 9]]], device=dev), 2)")
add("max_unpool_oob", "m.nn.functional.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, 9]]]), 2)")
add("max_unpool_neg", "m.nn.functional.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, -1]]]), 2)")
add("max_unpool2d_oob", "m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.tensor([[[[0, 99], [1, 2]]]]), 2)")
add("max_unpool3d_oob", "m.nn.functional.max_unpool3d(m.ones(1, 1, 1, 1, 2), m.tensor([[[[[0, 99]]]]]), (1, 1, 2))")
add("dev_max_unpool2d_oob", "m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2, device=dev), m.tensor([[[[0, 99], [1, 2]]]], device=dev), 2)")

# --- part C ---
F = "m.nn.functional"
# conv / pool with odd params
for fn, x, w in [("conv1d", "m.ones(1, 2, 5)", "m.ones(2, 2, 3)"), ("conv2d", "m.ones(1, 2, 5, 5)", "m.ones(2, 2, 3, 3)"), ("conv3d", "m.ones(1, 2, 4, 4, 4)", "m.ones(2, 2, 3, 3, 3)")]:
    for kw in ["dilation=0", "dilation=-1", "stride=0", "stride=-1", "padding=-1", "groups=0", "groups=-1", "groups=3", "padding='same', stride=2",
               "padding='valid', dilation=2**62", "padding='same', dilation=2**40", "padding='bogus'", "dilation=2**62", "padding=2**40"]:
        add(f"{fn}_{kw}", f"{F}.{fn}({x}, {w}, {kw})")
    add(f"{fn}_zero_w", f"{F}.{fn}({x}, {w}[:0])")
    add(f"{fn}_zero_in", f"{F}.{fn}({x}[:0], {w})")
    add(f"{fn}_zero_ch", f"{F}.{fn}({x}[:, :0], {w}[:, :0])")
    add(f"{fn}_huge_kernel", f"{F}.{fn}({x}, {w}.expand(*{w}.shape[:2], *[2**31]*({w}.dim()-2)))")
    add(f"{fn}_transpose_outpad_big", f"{F}.{fn.replace('conv', 'conv_transpose')}({x}, {w}, stride=2, output_padding=2)")
    add(f"{fn}_transpose_outpad_neg", f"{F}.{fn.replace('conv', 'conv_transpose')}({x}, {w}, output_padding=-1)")
    add(f"{fn}_transpose_dil0", f"{F}.{fn.replace('conv', 'conv_transpose')}({x}, {w}, dilation=0)")
    add(f"{fn}_transpose_pad_huge", f"{F}.{fn.replace('conv', 'conv_transpose')}({x}, {w}, padding=2**40)")
    add(f"{fn}_transpose_stride_huge", f"{F}.{fn.replace('conv', 'conv_transpose')}({x}, {w}, stride=2**40)")
for fn, x in [("max_pool1d", "m.ones(1, 1, 5)"), ("max_pool2d", "m.ones(1, 1, 5, 5)"), ("max_pool3d", "m.ones(1, 1, 4, 4, 4)"),
              ("avg_pool1d", "m.ones(1, 1, 5)"), ("avg_pool2d", "m.ones(1, 1, 5, 5)"), ("avg_pool3d", "m.ones(1, 1, 4, 4, 4)"),
              ("lp_pool1d", "m.ones(1, 1, 5)"), ("lp_pool2d", "m.ones(1, 1, 5, 5)")]:
    pre = "2, " if fn.startswith("lp") else ""
    for kw in ["0", "-1", "2**40", "2, stride=0", "2, stride=-1", "2, stride=2**62", "2, padding=-1", "2, padding=2", "3, padding=2", "2, dilation=0" if fn.startswith("max") else "2, ceil_mode=True, padding=1", "2**62, stride=2**62"]:
        add(f"{fn}_{kw}", f"{F}.{fn}({x}, {pre}{kw})")
    add(f"{fn}_empty", f"{F}.{fn}({x}[:0], {pre}2)")
for fn, x in [("adaptive_avg_pool1d", "m.ones(1, 1, 5)"), ("adaptive_max_pool1d", "m.ones(1, 1, 5)"), ("adaptive_avg_pool2d", "m.ones(1, 1, 5, 5)"), ("adaptive_max_pool2d", "m.ones(1, 1, 5, 5)"), ("adaptive_avg_pool3d", "m.ones(1, 1, 3, 3, 3)")]:
    for o in ["0", "-1", "2**40", "2**62", "None"]:
        add(f"{fn}_{o}", f"{F}.{fn}({x}, {o})")
    add(f"{fn}_empty_in", f"{F}.{fn}({x}[..., :0], 2)")
# interpolate
for mode in ["nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact"]:
    dims = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode, 2)
    x = "m.ones(1, 1" + ", 3" * dims + ")"
    for sf in ["0.", "-1.", "1e-10", "float('nan')", "float('inf')", "2**40", "1e300", "0.3", "-0.", "2**-1074"]:
        add(f"interp_{mode}_sf_{sf}", f"{F}.interpolate({x}, scale_factor={sf}, mode='{mode}').shape")
    for sz in ["0", "-1", "2**62", "2**31", "1.5"]:
        add(f"interp_{mode}_size_{sz}", f"{F}.interpolate({x}, size={sz}, mode='{mode}').shape")
    add(f"interp_{mode}_both", f"{F}.interpolate({x}, size=2, scale_factor=2., mode='{mode}')")
    add(f"interp_{mode}_none", f"{F}.interpolate({x}, mode='{mode}')")
    add(f"interp_{mode}_empty", f"{F}.interpolate(m.ones(0, 1" + ", 3" * dims + f"), scale_factor=2., mode='{mode}').shape")
    add(f"interp_{mode}_recompute", f"{F}.interpolate({x}, scale_factor=0.7, mode='{mode}', recompute_scale_factor=True).shape")
    add(f"interp_{mode}_sf_list_wrong", f"{F}.interpolate({x}, scale_factor=[2.]*({dims}+1), mode='{mode}')")
add("interp_bad_mode", f"{F}.interpolate(m.ones(1, 1, 3), scale_factor=2., mode='bogus')")
add("interp_align_nearest", f"{F}.interpolate(m.ones(1, 1, 3), scale_factor=2., mode='nearest', align_corners=True)")
add("interp_antialias_nearest", f"{F}.interpolate(m.ones(1, 1, 3, 3), scale_factor=2., mode='nearest', antialias=True)")
add("interp_antialias_bilinear_tiny", f"{F}.interpolate(m.ones(1, 1, 30, 30), scale_factor=0.01, mode='bilinear', antialias=True).shape")
add("interp_int_input", f"{F}.interpolate(m.ones(1, 1, 3, dtype=m.int64), scale_factor=2.)")
add("interp_uint8_bilinear", f"{F}.interpolate(m.ones(1, 1, 3, 3, dtype=m.uint8), scale_factor=2., mode='bilinear')")
add("interp_2d_input", f"{F}.interpolate(m.ones(3), scale_factor=2.)")
add("upsample_nearest_huge_out", f"{F}.interpolate(m.ones(1, 1, 3), size=2**40)")
# embedding_bag offsets
EB = ["m.tensor([0, 5])", "m.tensor([1, 0])", "m.tensor([0, 2, 1])", "m.tensor([0, 3])", "m.tensor([3])", "m.tensor([], dtype=m.long)",
      "m.tensor([0.])", "m.tensor([[0, 1]])", "m.tensor([0, 1], dtype=m.int32)", "m.tensor([2**62])", "m.tensor([0, 2**62])"]
for i, off in enumerate(EB):
    for mode in ("sum", "mean", "max"):
        add(f"embbag_{i}_{mode}", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), {off}, mode='{mode}')")
        add(f"embbag_last_{i}_{mode}", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), {off}, mode='{mode}', include_last_offset=True)")
add("embbag_psw_mismatch", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), m.tensor([0]), per_sample_weights=m.ones(2))")
add("embbag_psw_max", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), m.tensor([0]), mode='max', per_sample_weights=m.ones(3))")
add("embbag_psw_dtype", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), m.tensor([0]), per_sample_weights=m.ones(3, dtype=m.float64))")
add("embbag_padidx_oob", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), m.tensor([0]), padding_idx=10)")
add("embbag_padidx_neg", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3), m.tensor([0]), padding_idx=-11)")
add("embbag_weight_1d", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10), m.tensor([0]))")
add("embbag_int_weight", f"{F}.embedding_bag(m.tensor([0, 1, 2]), m.ones(10, 3, dtype=m.int64), m.tensor([0]))")
add("embbag_float_idx", f"{F}.embedding_bag(m.tensor([0., 1.]), m.ones(10, 3), m.tensor([0]))")
add("embbag_offsets_idx_dtype_mismatch", f"{F}.embedding_bag(m.tensor([0, 1], dtype=m.int32), m.ones(10, 3), m.tensor([0]))")
add("embbag_max_norm_neg", f"{F}.embedding_bag(m.tensor([0, 1]), m.ones(10, 3), m.tensor([0]), max_norm=-1.)")
add("embedding_max_norm_dup", f"w=m.ones(10, 3)*5\n{F}.embedding(m.tensor([0, 0, 1]), w, max_norm=1.)\nw[:2]")
add("embedding_padidx_oob", f"{F}.embedding(m.tensor([0]), m.ones(10, 3), padding_idx=10)")
add("embedding_float_idx", f"{F}.embedding(m.tensor([0.]), m.ones(10, 3))")
add("embedding_bool_idx", f"{F}.embedding(m.tensor([True]), m.ones(10, 3))")
add("embedding_uint8_idx", f"{F}.embedding(m.tensor([1], dtype=m.uint8), m.ones(10, 3))")
add("embedding_weight_0d", f"{F}.embedding(m.tensor([0]), m.tensor(1.))")
# ctc_loss bad lengths
LP = "m.randn(5, 2, 4).log_softmax(2)"
CT = [("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[2, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[6, 5]", "[2, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[3, 2]"),
      ("m.tensor([[1, 2], [1, 1]])", "[-1, 5]", "[2, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[-1, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[0, 5]", "[2, 2]"),
      ("m.tensor([[1, 2], [1, 1]])", "[5]", "[2, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[2]"), ("m.tensor([[1, 4], [1, 1]])", "[5, 5]", "[2, 2]"),
      ("m.tensor([[1, -1], [1, 1]])", "[5, 5]", "[2, 2]"), ("m.tensor([[0, 1], [1, 1]])", "[5, 5]", "[2, 2]"), ("m.tensor([1, 2, 1])", "[5, 5]", "[2, 2]"),
      ("m.tensor([1, 2, 1, 1])", "[5, 5]", "[2, 3]"), ("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[2**62, 2]"), ("m.tensor([[1, 2], [1, 1]])", "[2**62, 5]", "[2, 2]"),
      ("m.tensor([[1, 2], [1, 1]])", "[5, 5]", "[0, 0]"), ("m.tensor([[1., 2.], [1., 1.]])", "[5, 5]", "[2, 2]"), ("m.tensor([[1, 2, 3, 1, 2, 3]]*2)", "[5, 5]", "[6, 6]"),
      ("m.zeros(2, 0, dtype=m.long)", "[5, 5]", "[0, 0]")]
for i, (tg, il, tl) in enumerate(CT):
    for blank in (0, 3, 4, -1):
        add(f"ctc_{i}_b{blank}", f"{F}.ctc_loss({LP}, {tg}, {il}, {tl}, blank={blank}).isfinite().tolist()")
    add(f"ctc_t_{i}", f"{F}.ctc_loss({LP}, {tg}, m.tensor({il}), m.tensor({tl})).isfinite().tolist()")
    add(f"dev_ctc_t_{i}", f"{F}.ctc_loss({LP}.to(dev), {tg}.to(dev), m.tensor({il}, device=dev), m.tensor({tl}, device=dev)).isfinite().tolist()")
add("ctc_lp_wrong_dim", f"{F}.ctc_loss(m.ones(5, 4), m.tensor([[1]]), [5], [1])")
add("ctc_lp_int", f"{F}.ctc_loss(m.ones(5, 2, 4, dtype=m.int64), m.tensor([[1], [1]]), [5, 5], [1, 1])")
add("ctc_lp_empty_T", f"{F}.ctc_loss(m.ones(0, 2, 4), m.tensor([[1], [1]]), [0, 0], [1, 1]).tolist()")
add("ctc_lp_empty_C", f"{F}.ctc_loss(m.ones(5, 2, 0), m.tensor([[1], [1]]), [5, 5], [1, 1])")
add("ctc_bad_reduction", f"{F}.ctc_loss({LP}, m.tensor([[1], [1]]), [5, 5], [1, 1], reduction='bogus')")
# bucketize / searchsorted
for side in ("'left'", "'right'", "'bogus'", "None"):
    add(f"ss_side_{side}", f"m.searchsorted(m.tensor([1., 2., 3.]), m.tensor([2.]), side={side})")
    add(f"ss_side_right_{side}", f"m.searchsorted(m.tensor([1., 2., 3.]), m.tensor([2.]), right=False, side={side})")
    add(f"ss_side_rightT_{side}", f"m.searchsorted(m.tensor([1., 2., 3.]), m.tensor([2.]), right=True, side={side})")
add("ss_unsorted", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2., 0., 5.]))")
add("ss_unsorted_nan", "m.searchsorted(m.tensor([float('nan'), 1., 2.]), m.tensor([2., float('nan')]))")
add("ss_sorter_oob", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([0, 1, 5]))")
add("ss_sorter_neg", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([0, 1, -1]))")
add("ss_sorter_shape", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([0, 1]))")
add("ss_sorter_dtype", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([0., 1., 2.]))")
add("ss_sorter_int32", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([1, 2, 0], dtype=m.int32))")
add("ss_sorter_dup", "m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.]), sorter=m.tensor([0, 0, 0]))")
add("dev_ss_sorter_oob", "m.searchsorted(m.tensor([3., 1., 2.], device=dev), m.tensor([2.], device=dev), sorter=m.tensor([0, 1, 5], device=dev))")
add("ss_batch_mismatch", "m.searchsorted(m.tensor([[1., 2.], [3., 4.]]), m.tensor([[2.], [3.], [4.]]))")
add("ss_dtype_mismatch", "m.searchsorted(m.tensor([1., 2.]), m.tensor([1, 2]))")
add("ss_scalar", "m.searchsorted(m.tensor([1., 2.]), 1.5)")
add("ss_scalar_sorted_0d", "m.searchsorted(m.tensor(1.), 1.5)")
add("ss_empty_sorted", "m.searchsorted(m.tensor([]), m.tensor([1.]))")
add("ss_out_int32_big", "m.searchsorted(m.zeros(3), m.tensor([1.]), out_int32=True)")
add("ss_bool", "m.searchsorted(m.tensor([False, True]), m.tensor([True]))")
add("ss_complex", "m.searchsorted(m.tensor([1j, 2j]), m.tensor([1j]))")
add("bucketize_2d_bounds", "m.bucketize(m.tensor([1.]), m.tensor([[1., 2.]]))")
add("bucketize_unsorted", "m.bucketize(m.tensor([1., 2.5, 10.]), m.tensor([3., 1., 2.]))")
add("bucketize_scalar", "m.bucketize(2., m.tensor([1., 3.]))")
add("bucketize_empty", "m.bucketize(m.tensor([2.]), m.tensor([]))")
add("bucketize_dtype_mix", "m.bucketize(m.tensor([2]), m.tensor([1., 3.]))")
# histc / bincount / histogram
for b in ["0", "-1", "2**31", "2**40", "2**62", "1.5", "True"]:
    add(f"histc_bins_{b}", f"m.histc(m.ones(3), bins={b}).shape")
add("histc_min_gt_max", "m.histc(m.ones(3), bins=3, min=5, max=1)")
add("histc_min_eq_max", "m.histc(m.tensor([1., 2.]), bins=3, min=1, max=1)")
add("histc_int", "m.histc(m.ones(3, dtype=m.int64), bins=3)")
add("histc_huge_range", "m.histc(m.tensor([-1e308, 1e308], dtype=m.float64), bins=3, min=-1.7e308, max=1.7e308)")
add("histc_f16", "m.histc(m.ones(3, dtype=m.float16), bins=3)")
add("bincount_minlength_neg", "m.bincount(m.tensor([1]), minlength=-1)")
add("bincount_minlength_huge", "m.bincount(m.tensor([1]), minlength=2**62)")
add("bincount_weights_shape", "m.bincount(m.tensor([1, 2]), weights=m.ones(3))")
add("bincount_weights_2d", "m.bincount(m.tensor([1, 2]), weights=m.ones(2, 1))")
add("bincount_float", "m.bincount(m.tensor([1.]))")
add("bincount_2d", "m.bincount(m.tensor([[1]]))")
add("bincount_bool", "m.bincount(m.tensor([True]))")
add("bincount_uint8", "m.bincount(m.tensor([255], dtype=m.uint8)).shape")
add("bincount_weights_int", "m.bincount(m.tensor([1, 2]), weights=m.tensor([1, 2]))")
add("bincount_weights_bool", "m.bincount(m.tensor([1, 2]), weights=m.tensor([True, False]))")
add("bincount_weights_f16", "m.bincount(m.tensor([1, 2]), weights=m.tensor([1., 2.], dtype=m.float16))")
add("histogram_bins_neg", "m.histogram(m.ones(3), bins=-1)")
add("histogram_bins_0", "m.histogram(m.ones(3), bins=0)")
add("histogram_bins_huge", "m.histogram(m.ones(3), bins=2**40)")
add("histogram_bins_unsorted", "m.histogram(m.ones(3), bins=m.tensor([3., 1., 2.]))")
add("histogram_range_bad", "m.histogram(m.ones(3), bins=3, range=(5., 1.))")
add("histogram_range_nan", "m.histogram(m.ones(3), bins=3, range=(float('nan'), 1.))")
add("histogram_weight_shape", "m.histogram(m.ones(3), bins=3, weight=m.ones(2))")
add("histogramdd_bins_neg", "m.histogramdd(m.ones(3, 2), bins=[-1, 2])")
add("histogramdd_bins_wrong_len", "m.histogramdd(m.ones(3, 2), bins=[2, 2, 2])")
add("histogramdd_1d", "m.histogramdd(m.ones(3), bins=2)")

# --- part D ---
PRE = """
import io, pickle, zipfile, struct
def enc(x):
    return pickle.dumps(x, protocol=2)[2:-1]
def zipit(body, data, version='3\\n'):
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        z.writestr('archive/data.pkl', body)
        z.writestr('archive/byteorder', 'little')
        for k, v in data.items():
            z.writestr('archive/data/' + k, v)
        z.writestr('archive/version', version)
    return out.getvalue()
def st(key, dtype, nel):
    return b'(X\\x07\\x00\\x00\\x00storage' + b'ctorch\\n' + dtype.encode() + b'\\n' + b'X' + struct.pack('<I', len(key)) + key.encode() + b'X\\x03\\x00\\x00\\x00cpu' + enc(nel) + b'tQ'
def rb(storage, offset, size, stride):
    return b'ctorch._utils\\n_rebuild_tensor_v2\\n(' + storage + enc(offset) + enc(size) + enc(stride) + b'\\x89' + b'ccollections\\nOrderedDict\\n)R' + b'tR'
def load(d, **kw):
    return m.load(io.BytesIO(d), **kw)
"""
def addp(cid, code): add(cid, PRE + code)
addp("two_refs_diff_dtype", "b = b'\\x80\\x02(' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + rb(st('0', 'DoubleStorage', 2), 0, (2,), (1,)) + b't.'\nr = load(zipit(b, {'0': b'\\x00' * 16}))\n[x.tolist() for x in r]")
addp("two_refs_diff_nel", "b = b'\\x80\\x02(' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + rb(st('0', 'FloatStorage', 8), 0, (8,), (1,)) + b't.'\nr = load(zipit(b, {'0': b'\\x00' * 16}))\n[x.tolist() for x in r]")
addp("two_refs_diff_nel_rev", "b = b'\\x80\\x02(' + rb(st('0', 'FloatStorage', 2), 0, (2,), (1,)) + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b't.'\nr = load(zipit(b, {'0': b'\\x00' * 16}))\n[x.tolist() for x in r]")
addp("two_refs_diff_nel_big_view", "b = b'\\x80\\x02(' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + rb(st('0', 'FloatStorage', 2), 0, (4,), (1,)) + b't.'\nr = load(zipit(b, {'0': b'\\x00' * 16}))\n[x.tolist() for x in r]")
addp("nel_huge", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 2**62), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("nel_neg", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', -1), 0, (0,), (1,)) + b'.'\nload(zipit(b, {'0': b''})).tolist()")
addp("nel_float", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4.0), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("nel_str", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', '4'), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("key_path", "b = b'\\x80\\x02' + rb(st('../data.pkl', 'ByteStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("key_abs", "b = b'\\x80\\x02' + rb(st('/etc/passwd', 'ByteStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("key_pkl", "b = b'\\x80\\x02' + rb(st('../version', 'ByteStorage', 2), 0, (2,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("key_empty", "b = b'\\x80\\x02' + rb(st('', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("dtype_storage_unknown", "b = b'\\x80\\x02' + rb(st('0', 'NopeStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("dtype_storage_notstorage", "b = b'\\x80\\x02' + rb(st('0', 'Tensor', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("dtype_storage_float32", "b = b'\\x80\\x02' + rb(st('0', 'float32', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("size_float", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4.0,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("size_huge_stride0", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (2**62,), (0,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("size_overflow_prod", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (2**40, 2**40), (0, 0)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("stride_overflow", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (3, 3), (2**62, 2**62)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("size_stride_len_mismatch", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (2, 2), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("size_none", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, None, None) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("offset_str", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), '1', (2,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("param_bad_rg", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_parameter\\n(' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'K\\x05' + b'ccollections\\nOrderedDict\\n)R' + b'tR.'\nload(zipit(b, {'0': b'\\x00' * 16})).requires_grad")
addp("param_int_tensor_rg", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_parameter\\n(' + rb(st('0', 'LongStorage', 2), 0, (2,), (1,)) + b'\\x88' + b'ccollections\\nOrderedDict\\n)R' + b'tR.'\nload(zipit(b, {'0': b'\\x00' * 16})).requires_grad")
addp("param_not_tensor", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_parameter\\n(K\\x05\\x89ccollections\\nOrderedDict\\n)RtR.'\nload(zipit(b, {}))")
addp("rebuild_v2_hooks_nonempty", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0', 'FloatStorage', 4) + enc(0) + enc((4,)) + enc((1,)) + b'\\x89' + b'ccollections\\nOrderedDict\\n)R}X\\x01\\x00\\x00\\x00aK\\x01sb' + b'tR.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("rebuild_v2_metadata", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0', 'FloatStorage', 4) + enc(0) + enc((4,)) + enc((1,)) + b'\\x89' + b'ccollections\\nOrderedDict\\n)R' + enc({'x': 1}) + b'tR.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("rebuild_v2_too_few", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_tensor_v2\\n(' + st('0', 'FloatStorage', 4) + enc(0) + b'tR.'\nload(zipit(b, {'0': b'\\x00' * 16})).shape")
addp("rebuild_v2_storage_int", "b = b'\\x80\\x02ctorch._utils\\n_rebuild_tensor_v2\\n(K\\x05' + enc(0) + enc((4,)) + enc((1,)) + b'\\x89' + b'ccollections\\nOrderedDict\\n)R' + b'tR.'\nload(zipit(b, {})).shape")
addp("device_bad", "b = b'\\x80\\x02ctorch\\ndevice\\nX\\x05\\x00\\x00\\x00bogus\\x85R.'\nload(zipit(b, {}))")
addp("device_cuda_huge", "b = b'\\x80\\x02ctorch\\ndevice\\nX\\x0e\\x00\\x00\\x00cuda:999999999\\x85R.'\nstr(load(zipit(b, {})))")
addp("storage_cuda_loc", "b = b'\\x80\\x02(X\\x07\\x00\\x00\\x00storagectorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x06\\x00\\x00\\x00cuda:0K\\x04tQ.'\nload(zipit(b, {'0': b'\\x00' * 16}))")
addp("storage_bad_loc", "b = b'\\x80\\x02(X\\x07\\x00\\x00\\x00storagectorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x04\\x00\\x00\\x00nopeK\\x04tQ.'\nload(zipit(b, {'0': b'\\x00' * 16}))")
addp("storage_bad_loc_maplocation", "b = b'\\x80\\x02(X\\x07\\x00\\x00\\x00storagectorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x04\\x00\\x00\\x00nopeK\\x04tQ.'\nload(zipit(b, {'0': b'\\x00' * 16}), map_location='cpu')")
addp("persid_not_tuple", "b = b'\\x80\\x02X\\x01\\x00\\x00\\x00xQ.'\nload(zipit(b, {}))")
addp("persid_short_tuple", "b = b'\\x80\\x02(X\\x07\\x00\\x00\\x00storagetQ.'\nload(zipit(b, {}))")
addp("persid_long_tuple", "b = b'\\x80\\x02(X\\x07\\x00\\x00\\x00storagectorch\\nFloatStorage\\nX\\x01\\x00\\x00\\x000X\\x03\\x00\\x00\\x00cpuK\\x04K\\x04K\\x04tQ.'\nload(zipit(b, {'0': b'\\x00' * 16}))")
addp("persid_typename_bad", "b = b'\\x80\\x02(X\\x03\\x00\\x00\\x00foo' + b'tQ.'\nload(zipit(b, {}))")
addp("nested_pickle_bytes", "inner = pickle.dumps(__import__('os').getcwd)\nb = b'\\x80\\x02' + pickle.dumps(inner, protocol=2)[2:]\ntype(load(zipit(b, {}))).__name__")
addp("pickle_set", "b = pickle.dumps({1, 2}, protocol=4)\nload(zipit(b, {}))")
addp("pickle_frozenset", "b = pickle.dumps(frozenset({1, 2}), protocol=4)\nload(zipit(b, {}))")
addp("pickle_bytearray", "b = pickle.dumps(bytearray(b'ab'), protocol=5)\nload(zipit(b, {}))")
addp("pickle_complex", "b = pickle.dumps(1+2j, protocol=2)\nload(zipit(b, {}))")
addp("pickle_slice", "b = pickle.dumps(slice(1, 2), protocol=2)\nload(zipit(b, {}))")
addp("pickle_range", "b = pickle.dumps(range(3), protocol=2)\nload(zipit(b, {}))")
addp("pickle_torch_size", "b = b'\\x80\\x02ctorch\\nSize\\n(K\\x01K\\x02\\x86\\x85R.'\nload(zipit(b, {}))")
addp("pickle_torch_size_huge", "b = b'\\x80\\x02ctorch\\nSize\\n(' + enc((2**64,)) + b'\\x85R.'\nload(zipit(b, {}))")
addp("pickle_torch_size_neg", "b = b'\\x80\\x02ctorch\\nSize\\n(' + enc((-5,)) + b'\\x85R.'\nload(zipit(b, {}))")
addp("pickle_torch_size_str", "b = b'\\x80\\x02ctorch\\nSize\\n(' + enc(('a',)) + b'\\x85R.'\nload(zipit(b, {}))")
addp("pickle_dtype_bad", "b = b'\\x80\\x02ctorch\\nnope_dtype\\n.'\nload(zipit(b, {}))")
addp("pickle_torch_load", "b = b'\\x80\\x02ctorch\\nload\\nX\\x03\\x00\\x00\\x00x.p\\x85R.'\nload(zipit(b, {}))")
addp("pickle_torch_tensor_ctor", "b = b'\\x80\\x02ctorch\\ntensor\\n]K\\x01a\\x85R.'\nload(zipit(b, {}))")
addp("pickle_ordereddict_setitem", "b = b'\\x80\\x02ccollections\\nOrderedDict\\n)R(K\\x01K\\x02u.'\nload(zipit(b, {}))")
addp("pickle_defaultdict", "import collections\nb = pickle.dumps(collections.defaultdict(list), protocol=2)\nload(zipit(b, {}))")
addp("pickle_getattr_tensor", "b = b'\\x80\\x02cbuiltins\\ngetattr\\nctorch\\nTensor\\nX\\x03\\x00\\x00\\x00add\\x86R.'\nload(zipit(b, {}))")
addp("pickle_numpy_dtype", "import numpy\nb = pickle.dumps(numpy.dtype('float32'), protocol=2)\nload(zipit(b, {}))")
addp("pickle_numpy_array", "import numpy\nb = pickle.dumps(numpy.arange(3), protocol=2)\nload(zipit(b, {}))")
addp("pickle_numpy_scalar", "import numpy\nb = pickle.dumps(numpy.float64(1.5), protocol=2)\nload(zipit(b, {}))")
addp("zip64_and_names_dup", "out = io.BytesIO()\nz = zipfile.ZipFile(out, 'w')\nz.writestr('archive/data.pkl', pickle.dumps(1, protocol=2))\nimport warnings\nwarnings.simplefilter('ignore')\nz.writestr('archive/data.pkl', pickle.dumps(2, protocol=2))\nz.writestr('archive/version', '3\\n')\nz.close()\nload(out.getvalue())")
addp("zip_no_archive_prefix", "out = io.BytesIO()\nz = zipfile.ZipFile(out, 'w')\nz.writestr('data.pkl', pickle.dumps(1, protocol=2))\nz.writestr('version', '3\\n')\nz.close()\nload(out.getvalue())")
addp("zip_deep_prefix", "out = io.BytesIO()\nz = zipfile.ZipFile(out, 'w')\nz.writestr('a/b/data.pkl', pickle.dumps(1, protocol=2))\nz.writestr('a/b/version', '3\\n')\nz.close()\nload(out.getvalue())")
addp("zip_compressed", "out = io.BytesIO()\nz = zipfile.ZipFile(out, 'w', compression=zipfile.ZIP_DEFLATED)\nz.writestr('archive/data.pkl', pickle.dumps(7, protocol=2))\nz.writestr('archive/version', '3\\n')\nz.close()\nload(out.getvalue())")
addp("zip_compressed_storage", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nout = io.BytesIO()\nz = zipfile.ZipFile(out, 'w', compression=zipfile.ZIP_DEFLATED)\nz.writestr('archive/data.pkl', b)\nz.writestr('archive/data/0', b'\\x00' * 16)\nz.writestr('archive/version', '3\\n')\nz.close()\nload(out.getvalue()).tolist()")
addp("zip_bomb_declared", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 2**28), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16})).tolist()")
addp("mmap_crafted_huge", "import tempfile, os\nb = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 2**40), 0, (4,), (1,)) + b'.'\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nopen(p, 'wb').write(zipit(b, {'0': b'\\x00' * 16}))\nm.load(p, mmap=True).tolist()")
addp("mmap_crafted_view_past", "import tempfile, os\nb = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 2, (4,), (1,)) + b'.'\np = os.path.join(tempfile.mkdtemp(), 'x.pt')\nopen(p, 'wb').write(zipit(b, {'0': b'\\x00' * 16}))\nm.load(p, mmap=True).tolist()")
addp("legacy_tar_garbage", "import tarfile\nout = io.BytesIO()\nt = tarfile.open(fileobj=out, mode='w')\nti = tarfile.TarInfo('storages')\nti.size = 4\nt.addfile(ti, io.BytesIO(b'abcd'))\nt.close()\nload(out.getvalue())")
addp("load_weights_only_str", "load(zipit(pickle.dumps(1, protocol=2), {}), weights_only='yes')")
addp("load_map_location_bad", "load(zipit(pickle.dumps(1, protocol=2), {}), map_location=5)")
addp("load_map_location_dict_bad", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16}), map_location={'cpu': 'bogus'}).tolist()")
addp("load_map_location_fn_none", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16}), map_location=lambda s, l: None).tolist()")
addp("load_map_location_fn_int", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16}), map_location=lambda s, l: 5).tolist()")
addp("load_map_location_fn_raises", "b = b'\\x80\\x02' + rb(st('0', 'FloatStorage', 4), 0, (4,), (1,)) + b'.'\nload(zipit(b, {'0': b'\\x00' * 16}), map_location=lambda s, l: 1/0).tolist()")
addp("load_pickle_module_bad", "load(zipit(pickle.dumps(1, protocol=2), {}), pickle_module=5)")
addp("load_pickle_module_wo", "load(zipit(pickle.dumps(1, protocol=2), {}), pickle_module=pickle, weights_only=True)")
addp("load_nonseekable", "class R:\n    def __init__(s, d): s.b = io.BytesIO(d)\n    def read(s, n=-1): return s.b.read(n)\n    def readline(s): return s.b.readline()\nload_r = m.load(R(zipit(pickle.dumps(1, protocol=2), {})))\nload_r")
addp("load_bytes_arg", "m.load(zipit(pickle.dumps(1, protocol=2), {}))")
addp("load_int_arg", "m.load(5)")
addp("load_none_arg", "m.load(None)")
addp("load_dir", "import tempfile\nm.load(tempfile.mkdtemp())")
addp("load_missing", "m.load('/nonexistent/file.pt')")
addp("save_to_dir", "import tempfile\nm.save(m.ones(2), tempfile.mkdtemp())")
addp("save_bad_obj", "m.save(lambda: 1, io.BytesIO())")
addp("save_int_target", "m.save(m.ones(2), 5)")
addp("save_protocol_bad", "m.save(m.ones(2), io.BytesIO(), pickle_protocol=99)")
addp("save_protocol_neg", "b = io.BytesIO()\nm.save(m.ones(2), b, pickle_protocol=-1)\nm.load(io.BytesIO(b.getvalue())).tolist()")
addp("save_protocol_1", "b = io.BytesIO()\nm.save(m.ones(2), b, pickle_protocol=1)\nm.load(io.BytesIO(b.getvalue())).tolist()")
addp("save_protocol_0", "b = io.BytesIO()\nm.save(m.ones(2), b, pickle_protocol=0)\nm.load(io.BytesIO(b.getvalue())).tolist()")
addp("save_selfref", "l = []\nl.append(l)\nb = io.BytesIO()\nm.save(l, b)\nr = m.load(io.BytesIO(b.getvalue()))\nr[0] is r")
addp("save_recursion", "l = []\nx = l\nfor _ in range(100000):\n    x.append([])\n    x = x[0]\nm.save(l, io.BytesIO())")
addp("load_recursion", "b = b'\\x80\\x02' + b']' * 200000 + b'.'\nload(zipit(b, {}))")
addp("load_recursion_deep_list", "b = b'\\x80\\x02' + b'](' * 200000 + b'.'\nload(zipit(b, {}))")

# --- part E ---
# from_numpy oddities
NP = {
 "negstride": "np.arange(6.)[::-1]", "negstride2d": "np.arange(6.).reshape(2, 3)[:, ::-1]", "bigendian": "np.arange(3, dtype='>f4')",
 "bigendian_i8": "np.arange(3, dtype='>i8')", "object": "np.array([1, 'a'], dtype=object)", "object_num": "np.array([1, 2], dtype=object)",
 "readonly": "np.frombuffer(b'\\x00' * 16, dtype=np.float32)", "str": "np.array(['a', 'b'])", "bytes": "np.array([b'a'])", "void": "np.zeros(2, dtype='V4')",
 "structured": "np.zeros(2, dtype=[('a', 'f4'), ('b', 'i4')])", "datetime": "np.array(['2020-01-01'], dtype='datetime64[D]')", "timedelta": "np.array([1], dtype='timedelta64[s]')",
 "float128": "np.zeros(2, dtype=np.longdouble)", "complex256": "np.zeros(2, dtype=np.clongdouble)", "uint16": "np.arange(3, dtype=np.uint16)", "uint32": "np.arange(3, dtype=np.uint32)",
 "uint64": "np.array([2**64-1], dtype=np.uint64)", "float16": "np.arange(3, dtype=np.float16)", "bool": "np.array([True, False])", "int8": "np.arange(3, dtype=np.int8)",
 "zero_stride": "np.broadcast_to(np.arange(3.), (4, 3))", "unaligned": "np.frombuffer(b'\\x00' * 17, dtype=np.uint8)[1:].view(np.float64)",
 "nonmultiple_stride": "np.lib.stride_tricks.as_strided(np.zeros(8, dtype=np.uint8), shape=(3,), strides=(3,)).view(np.uint8)",
 "odd_stride_f4": "np.lib.stride_tricks.as_strided(np.zeros(16, dtype=np.uint8).view(np.float32), shape=(2,), strides=(6,))",
 "zero_size_negstride": "np.zeros((0, 3))[:, ::-1]", "zero_dim": "np.array(5.)", "big_ndim": "np.zeros([1] * 32)", "big_ndim_64": "np.zeros([1] * 64)",
 "fortran": "np.asfortranarray(np.arange(6.).reshape(2, 3))", "matrix": "np.matrix([[1., 2.]])", "masked": "np.ma.array([1., 2.], mask=[0, 1])",
 "memmap_like_subclass": "np.arange(3.).view(type('Sub', (np.ndarray,), {}))", "int_c": "np.arange(3, dtype=np.intc)", "longlong": "np.arange(3, dtype=np.longlong)", "ulonglong": "np.arange(3, dtype=np.ulonglong)",
}
for k, v in NP.items():
    add(f"from_numpy_{k}", f"a = {v}\nm.from_numpy(a)")
    add(f"as_tensor_{k}", f"a = {v}\nm.as_tensor(a)")
    add(f"tensor_{k}", f"a = {v}\nm.tensor(a)")
add("from_numpy_list", "m.from_numpy([1, 2])")
add("from_numpy_scalar", "m.from_numpy(np.float64(1.))")
add("from_numpy_readonly_write", "a = np.frombuffer(bytearray(16), dtype=np.float32)\na.flags.writeable = False\nt = m.from_numpy(a)\nt.add_(1)\na.tolist()")
add("from_numpy_resize_np", "a = np.arange(4.)\nt = m.from_numpy(a)\na.resize(100, refcheck=False)\nt.shape")
add("from_numpy_then_resize_t", "a = np.arange(4.)\nt = m.from_numpy(a)\nt.resize_(100)")
add("from_numpy_then_set", "a = np.arange(4.)\nt = m.from_numpy(a)\nt.set_(m.zeros(3, dtype=m.float64))\n(a.tolist(), t.tolist())")
add("from_numpy_del_keep", "a = np.arange(4.)\nt = m.from_numpy(a)\ndel a\nimport gc\ngc.collect()\nt.tolist()")
add("numpy_view_roundtrip_del", "t = m.arange(4.)\na = t.numpy()\ndel t\nimport gc\ngc.collect()\na.tolist()")
add("numpy_of_view", "t = m.arange(12.).view(3, 4)[:, 1::2]\na = t.numpy()\na[0, 0] = 99\n(a.strides, t.tolist())")
add("numpy_of_neg_view", "t = m.arange(12.).flip(0)\nt.numpy().strides")
add("numpy_of_expand", "a = m.arange(3.).expand(4, 3).numpy()\n(a.strides, a.flags.writeable)")
add("numpy_of_expand_write", "a = m.arange(3.).expand(4, 3).numpy()\na[0, 0] = 7\na.tolist()")
add("numpy_requires_grad", "m.ones(2, requires_grad=True).numpy()")
add("numpy_force", "m.ones(2, requires_grad=True).numpy(force=True).tolist()")
add("numpy_conj", "m.tensor([1j]).conj().numpy()")
add("numpy_neg", "m.tensor([1j]).conj().imag.neg().numpy() if False else m.tensor([1.]).neg().numpy()")
add("numpy_bf16", "m.ones(2, dtype=m.bfloat16).numpy()")
add("numpy_uint16", "m.ones(2, dtype=m.uint16).numpy().dtype.str")
add("numpy_uint64", "m.ones(2, dtype=m.uint64).numpy().dtype.str")
add("numpy_complex32", "m.ones(2, dtype=m.complex32).numpy()")
add("numpy_meta", "m.ones(2, device='meta').numpy()")
add("numpy_zero_dim", "m.tensor(3.).numpy().shape")
add("numpy_huge_stride_0size", "m.empty(0, 3).as_strided((0, 3), (2**62, 1)).numpy().shape")
add("numpy_sparse", "m.ones(2).to_sparse().numpy()")
add("np_asarray_view", "a = np.asarray(m.arange(6.).view(2, 3).t())\n(a.strides, a.tolist())")
add("np_asarray_bf16", "np.asarray(m.ones(2, dtype=m.bfloat16))")
add("np_asarray_requires_grad", "np.asarray(m.ones(2, requires_grad=True))")
add("np_array_dtype_arg", "np.array(m.ones(2), dtype=np.int32).tolist()")
add("np_add_tensor", "type(np.float64(1.) + m.ones(2)).__name__")
add("np_array_plus_tensor", "type(np.ones(2) + m.ones(2)).__name__")
add("np_ufunc_on_tensor", "type(np.sin(m.ones(2))).__name__")
# __array_interface__ oddities
AI = {
 "bad_typestr": "{'shape': (2,), 'typestr': 'zz', 'data': (0, True), 'version': 3}",
 "null_data": "{'shape': (2,), 'typestr': '<f4', 'data': (0, True), 'version': 3}",
 "neg_shape": "{'shape': (-2,), 'typestr': '<f4', 'data': bytearray(8), 'version': 3}",
 "strides_bad": "{'shape': (2,), 'typestr': '<f4', 'data': bytearray(8), 'strides': (400,), 'version': 3}",
 "huge_shape": "{'shape': (2**62,), 'typestr': '<f4', 'data': bytearray(8), 'version': 3}",
 "buffer_short": "{'shape': (20,), 'typestr': '<f4', 'data': bytearray(8), 'version': 3}",
 "be": "{'shape': (2,), 'typestr': '>f4', 'data': bytearray(8), 'version': 3}",
 "no_version": "{'shape': (2,), 'typestr': '<f4', 'data': bytearray(8)}",
 "shape_str": "{'shape': 'ab', 'typestr': '<f4', 'data': bytearray(8), 'version': 3}",
 "obj_typestr": "{'shape': (2,), 'typestr': '|O', 'data': bytearray(16), 'version': 3}",
 "missing_typestr": "{'shape': (2,), 'data': bytearray(8), 'version': 3}",
 "data_int_ptr": "{'shape': (0,), 'typestr': '<f4', 'data': (12345, True), 'version': 3}",
 "descr_struct": "{'shape': (2,), 'typestr': '|V8', 'descr': [('a', '<f4'), ('b', '<f4')], 'data': bytearray(16), 'version': 3}",
}
for k, v in AI.items():
    add(f"array_interface_{k}", f"class A:\n    __array_interface__ = {v}\nm.as_tensor(A())")
    add(f"array_interface_tensor_{k}", f"class A:\n    __array_interface__ = {v}\nm.tensor(A())")
add("array_interface_raises", "class A:\n    @property\n    def __array_interface__(self):\n        raise ValueError('x')\nm.tensor(A())")
add("array_method_raises", "class A:\n    def __array__(self, dtype=None, copy=None):\n        raise KeyError('x')\nm.tensor(A())")
add("array_method_returns_list", "class A:\n    def __array__(self, dtype=None, copy=None):\n        return [1, 2]\nm.tensor(A())")
add("array_method_ok", "class A:\n    def __array__(self, dtype=None, copy=None):\n        return np.arange(3.)\nm.tensor(A()).tolist()")
add("len_lies", "class A:\n    def __len__(self): return 5\n    def __getitem__(self, i):\n        if i >= 2: raise IndexError\n        return 1.\nm.tensor(A())")
add("len_neg", "class A:\n    def __len__(self): return -1\n    def __getitem__(self, i): return 1.\nm.tensor(A())")
add("seq_self_ref", "l = [1.]\nl.append(l)\nm.tensor(l)")
add("seq_ragged", "m.tensor([[1.], [2., 3.]])")
add("seq_deep", "x = 1.\nfor _ in range(100): x = [x]\nm.tensor(x).shape")
add("seq_deep_1000", "x = 1.\nfor _ in range(1000): x = [x]\nm.tensor(x).shape")
add("seq_mixed_tensor", "m.tensor([m.ones(2), [1., 2.]])")
add("seq_tensor_list_req_grad", "m.tensor([m.ones(1, requires_grad=True)]).requires_grad")
add("seq_huge_int", "m.tensor([2**64])")
add("seq_huge_int_float", "m.tensor([2**64, 1.5]).tolist()")
add("seq_huge_int_1e400", "m.tensor([10**400, 1.5])")
add("seq_nan_int", "m.tensor([float('nan')], dtype=m.int64)")
add("seq_bool_str", "m.tensor(['a'])")
add("seq_none", "m.tensor([None])")
add("seq_complex_int", "m.tensor([1j], dtype=m.int64)")
# DLPack
add("dlpack_capsule_twice", "t = m.arange(3.)\nc = t.__dlpack__()\na = m.from_dlpack(c)\nm.from_dlpack(c)")
add("dlpack_capsule_np_twice", "t = np.arange(3.)\nc = t.__dlpack__()\na = m.from_dlpack(c)\nm.from_dlpack(c)")
add("dlpack_stale_capsule_after_del", "t = m.arange(3.)\nc = t.__dlpack__()\ndel t\nimport gc\ngc.collect()\nm.from_dlpack(c).tolist()")
add("dlpack_unconsumed_del", "t = m.arange(3.)\nc = t.__dlpack__()\ndel c\nimport gc\ngc.collect()\nt.tolist()")
add("dlpack_from_np_readonly", "a = np.arange(3.)\na.flags.writeable = False\nm.from_dlpack(a)")
add("dlpack_from_np_bigendian", "m.from_dlpack(np.arange(3, dtype='>f4'))")
add("dlpack_from_np_negstride", "m.from_dlpack(np.arange(6.)[::-1]).tolist()")
add("dlpack_from_np_zerosize", "m.from_dlpack(np.zeros((0, 3))).shape")
add("dlpack_from_np_bool", "m.from_dlpack(np.array([True, False])).tolist()")
add("dlpack_from_np_complex", "m.from_dlpack(np.array([1j])).tolist()")
add("dlpack_from_np_f16", "m.from_dlpack(np.ones(2, dtype=np.float16)).tolist()")
add("dlpack_from_np_u64", "m.from_dlpack(np.ones(2, dtype=np.uint64)).dtype")
add("dlpack_to_np_bf16", "np.from_dlpack(m.ones(2, dtype=m.bfloat16))")
add("dlpack_to_np_neg_view", "np.from_dlpack(m.arange(6.).flip(0)).tolist()")
add("dlpack_to_np_expand", "np.from_dlpack(m.arange(3.).expand(2, 3)).strides")
add("dlpack_to_np_conj", "np.from_dlpack(m.tensor([1j]).conj())")
add("dlpack_to_np_neg", "np.from_dlpack(m.tensor([1j]).conj().imag)")
add("dlpack_to_np_requires_grad", "np.from_dlpack(m.ones(2, requires_grad=True))")
add("dlpack_bad_version", "m.arange(3.).__dlpack__(max_version=(99, 0))")
add("dlpack_bad_version_type", "m.arange(3.).__dlpack__(max_version='x')")
add("dlpack_max_version_short", "m.arange(3.).__dlpack__(max_version=(1,))")
add("dlpack_copy_true", "type(m.arange(3.).__dlpack__(copy=True)).__name__")
add("dlpack_copy_bad", "m.arange(3.).__dlpack__(copy='x')")
add("dlpack_dl_device_bad", "m.arange(3.).__dlpack__(dl_device=(99, 0))")
add("dlpack_dl_device_cpu", "type(m.arange(3.).__dlpack__(dl_device=(1, 0))).__name__")
add("dlpack_device", "m.arange(3.).__dlpack_device__()")
add("dlpack_object_no_device", "class A:\n    def __dlpack__(self, **kw): return m.arange(3.).__dlpack__()\nm.from_dlpack(A())")
add("dlpack_object_returns_int", "class A:\n    def __dlpack__(self, **kw): return 5\n    def __dlpack_device__(self): return (1, 0)\nm.from_dlpack(A())")
add("dlpack_object_bad_device", "class A:\n    def __dlpack__(self, **kw): return m.arange(3.).__dlpack__()\n    def __dlpack_device__(self): return (99, 0)\nm.from_dlpack(A())")
add("dlpack_object_device_str", "class A:\n    def __dlpack__(self, **kw): return m.arange(3.).__dlpack__()\n    def __dlpack_device__(self): return 'cpu'\nm.from_dlpack(A())")
add("dlpack_from_torch_capsule_name", "import ctypes\nc = m.arange(3.).__dlpack__()\nctypes.pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p\nctypes.pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]\nctypes.pythonapi.PyCapsule_GetName(c)")
add("dlpack_versioned_capsule_from_np", "c = np.arange(3.).__dlpack__(max_version=(1, 0))\nm.from_dlpack(c).tolist()")
add("dlpack_sparse", "m.ones(2).to_sparse().__dlpack__()")
add("dlpack_meta", "m.ones(2, device='meta').__dlpack__()")
add("dlpack_bf16_roundtrip", "m.from_dlpack(m.ones(2, dtype=m.bfloat16)).dtype")
add("dlpack_zero_dim", "m.from_dlpack(m.tensor(3.)).shape")
add("dlpack_capsule_then_resize", "t = m.arange(3.)\nc = t.__dlpack__()\nt.resize_(1000)\nm.from_dlpack(c).tolist()")
add("dlpack_consume_then_resize_src", "t = m.arange(3.)\nu = m.from_dlpack(t)\nt.resize_(1000)\nu.tolist()")
add("dlpack_consume_then_resize_dst", "t = m.arange(3.)\nu = m.from_dlpack(t)\nu.resize_(1000)")
# pinned memory
add("pin_memory", "m.ones(2).pin_memory().is_pinned()")
add("pin_memory_bad_device", "m.ones(2).pin_memory(device='bogus')")
add("pin_memory_meta", "m.ones(2, device='meta').pin_memory()")
add("pin_memory_sparse", "m.ones(2).to_sparse().pin_memory().is_pinned()")
add("empty_pin_memory", "m.empty(3, pin_memory=True).is_pinned()")
add("zeros_pin_memory_meta", "m.zeros(3, pin_memory=True, device='meta')")
add("pin_memory_view", "t = m.arange(6.)[::2].pin_memory()\n(t.is_pinned(), t.stride())")
add("pin_memory_resize", "t = m.arange(6.).pin_memory()\nt.resize_(100)\nt.is_pinned()")
add("pin_memory_storage", "m.ones(2).untyped_storage().pin_memory().is_pinned()")
add("pin_memory_share", "m.ones(2).pin_memory().share_memory_().is_pinned()")
# torch.Size / shapes
add("Size_huge", "m.Size([2**63])")
add("Size_neg", "m.Size([-1]).numel()")
add("Size_numel_overflow", "m.Size([2**62, 4]).numel()")
add("Size_numel_overflow2", "m.Size([2**32, 2**32]).numel()")
add("Size_float", "m.Size([1.5])")
add("Size_tensor", "m.Size([m.tensor(3)])")
add("Size_tensor_float", "m.Size([m.tensor(3.)])")
add("Size_np", "m.Size([np.int64(3)])")
add("Size_bool", "m.Size([True])")
add("Size_str", "m.Size('ab')")
add("Size_none", "m.Size([None])")
add("Size_mul", "m.Size([2]) * 2")
add("Size_add_tuple", "m.Size([2]) + (3,)")
add("Size_radd", "(3,) + m.Size([2])")
add("Size_getitem_slice", "type(m.Size([2, 3])[1:]).__name__")
add("Size_repr", "repr(m.Size([2**63-1]))")
add("Size_int64_min", "m.Size([-2**63])")
add("Size_int64_min_numel", "m.Size([-2**63, -1]).numel()")
add("view_int64_min", "m.ones(2).view(-2**63)")
add("reshape_int64_max", "m.ones(2).reshape(2**63-1)")
add("reshape_two_neg1", "m.ones(2).reshape(-1, -1)")
add("reshape_neg2", "m.ones(2).reshape(-2)")
add("reshape_zero_neg1", "m.ones(0).reshape(0, -1)")
add("reshape_zero_neg1_b", "m.ones(0).reshape(-1, 0)")
add("view_int64_min_2", "m.ones(2).view(-2**63, -1)")
add("expand_int64_min", "m.ones(1).expand(-2**63)")
add("expand_neg2", "m.ones(1).expand(-2)")
add("expand_neg1_new", "m.ones(1).expand(-1, 2)")
add("new_empty_int64_min", "m.ones(1).new_empty((-2**63,))")
add("zeros_int64_min", "m.zeros(-2**63)")
add("zeros_int64_max", "m.zeros(2**63-1)")
add("zeros_numel_overflow", "m.zeros(2**32, 2**32)")
add("zeros_numel_overflow_0", "m.zeros(2**62, 2**62, 0).shape")
add("zeros_numel_overflow_0b", "m.zeros(0, 2**62, 2**62).stride()")
add("empty_nbytes_overflow", "m.empty(2**61, dtype=m.float64)")
add("empty_nbytes_overflow_c128", "m.empty(2**60, dtype=m.complex128)")
add("ones_like_huge_stride", "m.ones_like(m.empty(0).as_strided((2, 2), (0, 0))).stride()")
add("empty_like_preserve_huge", "m.empty_like(m.zeros(3, 1).as_strided((3, 1), (1, 2**62))).stride()")
add("empty_like_preserve_neg", "m.empty_like(m.arange(6.).flip(0)).stride()")
add("randn_int64_min", "m.randn(-2**63)")
add("full_size_bool", "m.full((True,), 1.).shape")
add("ones_size_tensor", "m.ones(m.tensor(3)).shape")
add("ones_size_tensor_2d", "m.ones(m.tensor([2, 3])).shape")
add("ones_size_np", "m.ones(np.array([2, 3])).shape")
add("ones_size_np_int", "m.ones(np.int32(3)).shape")
add("ones_size_np_float", "m.ones(np.float64(3.))")
add("ones_dim_66", "m.ones([1] * 66).dim()")
add("ones_dim_65", "m.ones([1] * 65).dim()")
add("ones_dim_64", "m.ones([1] * 64).dim()")
add("ones_dim_200", "m.ones([1] * 200).dim()")
add("view_dim_200", "m.ones(1).view([1] * 200).dim()")
add("unsqueeze_65", "t = m.ones([1] * 64)\nt.unsqueeze(0).dim()")
add("sum_dim_64", "m.ones([1] * 64).sum().item()")
add("permute_64", "m.ones([1] * 64).permute(*range(63, -1, -1)).dim()")
add("matmul_dim_64", "(m.ones([1] * 62 + [2, 2]) @ m.ones(2, 2)).dim()")
# arange / linspace
ARG = ["0, float('nan')", "0, float('inf')", "float('-inf'), 0", "0, 1, float('nan')", "0, 1, 0", "0, 1, -1", "1, 0, 1", "0, 1, 1e-300",
       "0, 2**63", "-2**63, 2**63-1", "0, 2**62, 1", "0., 1e20, 1.", "0, 10, 2**63", "2**63-10, 2**63-1", "-2**63, -2**63+5", "0, 1, float('inf')",
       "0, 5, 0.5", "m.tensor(0), m.tensor(3)", "m.tensor([0]), 3", "0, 10, m.tensor(2)", "0, 1e-45, 1e-46", "0., 1., 1./3", "1e308, 1.7e308, 1e307"]
for i, a in enumerate(ARG):
    add(f"arange_{i}_{a}", f"r = m.arange({a})\n(r.shape, r.dtype, r[:4].tolist())")
    add(f"arange_int32_{i}", f"r = m.arange({a}, dtype=m.int32)\n(r.shape, r[:4].tolist())")
    add(f"arange_f16_{i}", f"r = m.arange({a}, dtype=m.float16)\n(r.shape, r[:4].tolist())")
    add(f"arange_u8_{i}", f"r = m.arange({a}, dtype=m.uint8)\n(r.shape, r[:4].tolist())")
LIN = ["0, 1, -1", "0, 1, 0", "0, 1, 2**62", "0, 1, 2**63", "float('nan'), 1, 3", "0, float('inf'), 3", "float('-inf'), float('inf'), 3", "0, 1, 1", "0, 1, 1.5",
       "0, 1, True", "m.tensor(0.), m.tensor(1.), 3", "m.tensor([0.]), 1, 3", "0, 1, m.tensor(3)", "1e308, -1e308, 3", "0, 1, 2**31"]
for i, a in enumerate(LIN):
    add(f"linspace_{i}_{a}", f"r = m.linspace({a})\n(r.shape, r.dtype, r[:4].tolist())")
    add(f"linspace_int_{i}", f"r = m.linspace({a}, dtype=m.int64)\n(r.shape, r[:4].tolist())")
    add(f"logspace_{i}", f"r = m.logspace({a})\n(r.shape, r[:4].tolist())")
    add(f"logspace_base_{i}", f"r = m.logspace({a}, base=-2.)\n(r.shape, r[:4].tolist())")
add("range_deprecated", "m.range(0, 3).tolist()")
add("range_nan", "m.range(0, float('nan'))")
add("arange_bool", "m.arange(3, dtype=m.bool)")
add("arange_complex", "m.arange(3, dtype=m.complex64)")
add("arange_out_wrong", "m.arange(3, out=m.empty(5, dtype=m.int32)).tolist()")
add("arange_out_expand", "m.arange(3, out=m.empty(1).expand(3))")
add("linspace_out_bad", "m.linspace(0, 1, 3, out=m.empty(2, dtype=m.int64)).tolist()")

# --- part F ---
DT = ["uint16", "uint32", "uint64", "bool", "complex32", "int8", "uint8", "float16", "bfloat16", "float32", "int64", "complex64", "float8_e4m3fn"]
for a in DT:
    for b in DT:
        add(f"promote_{a}_{b}", f"m.promote_types(m.{a}, m.{b})")
        add(f"add_{a}_{b}", f"(m.ones(2, dtype=m.{a}) + m.ones(2, dtype=m.{b})).dtype")
        add(f"mul_inplace_{a}_{b}", f"t = m.ones(2, dtype=m.{a})\nt.mul_(m.ones(2, dtype=m.{b}))\nt.dtype")
        add(f"eq_{a}_{b}", f"(m.ones(2, dtype=m.{a}) == m.ones(2, dtype=m.{b})).tolist()")
        add(f"where_{a}_{b}", f"m.where(m.tensor([True, False]), m.ones(2, dtype=m.{a}), m.zeros(2, dtype=m.{b})).dtype")
        add(f"cat_{a}_{b}", f"m.cat([m.ones(2, dtype=m.{a}), m.ones(2, dtype=m.{b})]).dtype")
    for s in ["1", "1.5", "1j", "True", "-1", "2**64-1", "2**63", "-2**63", "float('nan')"]:
        add(f"scalar_add_{a}_{s}", f"r = m.ones(2, dtype=m.{a}) + {s}\n(r.dtype, r.float().tolist() if r.dtype != m.complex32 else 0)")
        add(f"scalar_rsub_{a}_{s}", f"r = {s} - m.ones(2, dtype=m.{a})\n(r.dtype)")
        add(f"scalar_div_{a}_{s}", f"r = m.ones(2, dtype=m.{a}) / {s}\n(r.dtype)")
        add(f"scalar_fill_{a}_{s}", f"t = m.ones(2, dtype=m.{a})\nt.fill_({s})\nt.float().tolist() if t.dtype != m.complex32 else 0")
    add(f"result_type_{a}", f"m.result_type(m.ones(2, dtype=m.{a}), 2**63)")
    add(f"can_cast_{a}", f"[m.can_cast(m.{a}, d) for d in (m.bool, m.uint8, m.uint64, m.float16, m.complex32)]")
    add(f"sum_{a}", f"m.ones(3, dtype=m.{a}).sum().dtype")
    add(f"neg_{a}", f"(-m.ones(2, dtype=m.{a})).dtype")
    add(f"abs_{a}", f"m.ones(2, dtype=m.{a}).abs().dtype")
    add(f"sort_{a}", f"m.ones(3, dtype=m.{a}).sort().values.dtype")
    add(f"bitwise_not_{a}", f"(~m.ones(2, dtype=m.{a})).dtype")
    add(f"shift_{a}", f"(m.ones(2, dtype=m.{a}) << 70).float().tolist()")
    add(f"shift_neg_{a}", f"(m.ones(2, dtype=m.{a}) >> -1).float().tolist()")
    add(f"floordiv_zero_{a}", f"(m.ones(2, dtype=m.{a}) // 0).float().tolist()")
    add(f"rem_zero_{a}", f"(m.ones(2, dtype=m.{a}) % 0).float().tolist()")
    add(f"to_{a}_from_huge", f"m.tensor([1e30, -1., float('nan')]).to(m.{a}).float().tolist() if m.{a} != m.complex32 else 0")
    add(f"item_{a}", f"m.ones(1, dtype=m.{a}).item()")
    add(f"arange_{a}", f"m.arange(3, dtype=m.{a}).tolist()")
    add(f"randint_{a}", f"m.randint(0, 3, (4,), dtype=m.{a}).dtype")
    add(f"clamp_{a}", f"m.ones(2, dtype=m.{a}).clamp(0, 2**70).dtype")
# DTensor / device mesh without init
add("dtensor_import", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.tensor').Shard(0)")
add("dtensor_shard_neg", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.tensor').Shard(-1)")
add("dtensor_shard_str", "import importlib\nimportlib.import_module(m.__name__ + '.distributed.tensor').Shard('a')")
add("dtensor_replicate_eq", "import importlib\nT = importlib.import_module(m.__name__ + '.distributed.tensor')\nT.Replicate() == T.Replicate()")
add("dtensor_partial_bad", "import importlib\nT = importlib.import_module(m.__name__ + '.distributed.tensor')\nT.Partial('bogus')")
add("dtensor_from_local_nomesh", "import importlib\nT = importlib.import_module(m.__name__ + '.distributed.tensor')\nT.DTensor.from_local(m.ones(2), None, [T.Shard(0)])")
add("dtensor_distribute_nopg", "import importlib\nT = importlib.import_module(m.__name__ + '.distributed.tensor')\nT.distribute_tensor(m.ones(2))")
add("device_mesh_ctor_nopg", "import importlib\nD = importlib.import_module(m.__name__ + '.distributed.device_mesh')\nD.DeviceMesh('cpu', [0, 1])")
add("device_mesh_ctor_empty", "import importlib\nD = importlib.import_module(m.__name__ + '.distributed.device_mesh')\nD.DeviceMesh('cpu', [])")
add("dist_all_gather_list_nopg", "m.distributed.all_gather([m.ones(2)], m.ones(2))")
add("dist_reduce_op_bad", "m.distributed.all_reduce(m.ones(2), op='bogus')")
add("dist_get_backend_nopg", "m.distributed.get_backend()")
add("dist_send_nopg", "m.distributed.send(m.ones(2), 1)")
add("dist_irecv_nopg", "m.distributed.irecv(m.ones(2), 1)")
add("dist_monitored_barrier_nopg", "m.distributed.monitored_barrier()")
add("dist_gather_object_nopg", "m.distributed.gather_object(1)")
add("dist_fn_all_reduce_nopg", "import importlib\nF = importlib.import_module(m.__name__ + '.distributed._functional_collectives')\nF.all_reduce(m.ones(2), 'sum', None)")
add("dist_filestore_bad", "m.distributed.FileStore('/nonexistent/dir/x', 1)")
add("dist_tcpstore_bad_port", "m.distributed.TCPStore('127.0.0.1', -1, 1, True)")
add("dist_prefixstore_bad", "m.distributed.PrefixStore('a', 5)")

# --- part G ---
# overlapping in-place writes
OV = ["t.unfold(0, 3, 1)", "t.as_strided((3, 3), (1, 1))", "t.as_strided((4,), (0,))", "t[:1].expand(4)", "t.view(2, 5)[:, :1].expand(2, 3)"]
OPS = ["X.add_(1)", "X.mul_(2)", "X.copy_(m.ones(X.shape, device=X.device))", "X.fill_(1)", "X.zero_()", "X.clamp_(0, 1)", "X.neg_()", "X.index_fill_(0, m.tensor([0], device=X.device), 1.)",
       "X.masked_fill_(m.ones(X.shape, dtype=m.bool, device=X.device), 1.)", "X.uniform_()", "X.normal_()", "X.bernoulli_(0.5)", "X.exponential_()", "X.random_(0, 3)",
       "X.scatter_(0, m.zeros(X.shape, dtype=m.long, device=X.device), 1.)", "X.index_put_((m.tensor([0], device=X.device),), m.tensor(1., device=X.device))", "m.add(m.ones(X.shape, device=X.device), 1, out=X)",
       "m.sum(m.ones(3, 3, device=X.device), 0, out=X[0] if X.dim() > 1 else X[:3])", "X.sigmoid_()", "X.addcmul_(X, X)", "X.lerp_(m.ones(X.shape, device=X.device), 0.5)", "X.copy_(X.flip(0))",
       "X.sort(out=(X.clone(), m.empty(X.shape, dtype=m.long)))", "m.cumsum(m.ones(X.shape, device=X.device), 0, out=X)", "X.exp_()", "X.pow_(2)", "X.div_(2, rounding_mode='floor')"]
for i, v in enumerate(OV):
    for j, op in enumerate(OPS):
        add(f"ovl_{i}_{j}_{op[:20]}", f"t = m.arange(10.)\nX = {v}\n{op.replace('X', 'X')}\nt.tolist()")
        add(f"dev_ovl_{i}_{j}", f"t = m.arange(10., device=dev)\nX = {v}\n{op}\nt.cpu().tolist()")
# frombuffer / from_file odd
FB = ["bytearray(16), dtype=m.float32, offset=-1", "bytearray(16), dtype=m.float32, offset=17", "bytearray(16), dtype=m.float32, count=5",
      "bytearray(16), dtype=m.float32, count=-2", "bytearray(16), dtype=m.float32, count=0", "bytearray(16), dtype=m.float32, offset=2",
      "bytearray(15), dtype=m.float32", "bytearray(0), dtype=m.float32", "b'abcd', dtype=m.float32", "memoryview(bytearray(16))[::2], dtype=m.uint8",
      "bytearray(16), dtype=m.float32, count=2**62", "bytearray(16), dtype=m.float32, offset=2**62", "bytearray(16), dtype=m.complex32",
      "np.arange(4.), dtype=m.float64", "np.arange(4.)[::2], dtype=m.float64", "array.array('d', [1., 2.]), dtype=m.float64", "bytearray(16), dtype=m.bool",
      "bytearray(16), dtype=m.float8_e4m3fn", "5, dtype=m.float32", "None, dtype=m.float32", "bytearray(16)", "bytearray(16), dtype=m.float32, requires_grad=True"]
for i, a in enumerate(FB):
    add(f"frombuffer_{i}_{a[:30]}", f"import array\nr = m.frombuffer({a})\n(r.shape, r.dtype, r.tolist()[:4])")
add("frombuffer_then_resize", "b = bytearray(16)\nr = m.frombuffer(b, dtype=m.float32)\nr.resize_(100)")
add("frombuffer_release_then_read", "b = bytearray(16)\nr = m.frombuffer(b, dtype=m.float32)\ndel b\nimport gc\ngc.collect()\nr.tolist()")
add("frombuffer_bytearray_resize", "b = bytearray(16)\nr = m.frombuffer(b, dtype=m.float32)\nb.extend(b'x' * 10000)")
add("from_file_missing", "m.from_file('/nonexistent/x', size=4)")
add("from_file_shared_huge", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'f')\nopen(p, 'wb').write(b'\\0' * 16)\nm.from_file(p, shared=False, size=2**40)")
add("from_file_neg", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'f')\nopen(p, 'wb').write(b'\\0' * 16)\nm.from_file(p, size=-1)")
add("from_file_short", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'f')\nopen(p, 'wb').write(b'\\0' * 16)\nm.from_file(p, shared=False, size=8).tolist()")
add("from_file_short_shared", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'f')\nopen(p, 'wb').write(b'\\0' * 16)\nm.from_file(p, shared=True, size=8, dtype=m.float32).tolist()")
add("storage_from_file_short", "import tempfile, os\np = os.path.join(tempfile.mkdtemp(), 'f')\nopen(p, 'wb').write(b'\\0' * 16)\nlen(m.UntypedStorage.from_file(p, False, 100))")
# set_ with odd sources
add("set_other_dtype_storage", "a = m.arange(4, dtype=m.int8)\nm.zeros(1).set_(a.untyped_storage(), 0, (1,), (1,))")
add("set_other_dtype_storage_big", "a = m.arange(4, dtype=m.int8)\nm.zeros(1).set_(a.untyped_storage(), 0, (2,), (1,))")
add("set_tensor_other_dtype", "m.zeros(1).set_(m.arange(4, dtype=m.int8))")
add("set_typed_storage", "a = m.arange(4.)\nm.zeros(1).set_(a.storage()).tolist()")
add("set_on_view", "a = m.arange(4.)\nv = a[1:]\nv.set_(m.ones(10))\n(a.tolist(), v.tolist())")
add("set_requires_grad_leaf", "a = m.ones(4, requires_grad=True)\na.set_(m.zeros(2))")
add("set_no_args_then_view", "a = m.arange(4.)\nv = a[1:]\na.set_()\n(a.shape, v.tolist())")
add("set_offset_past", "a = m.arange(4.)\nm.zeros(1).set_(a.untyped_storage(), 4, (0,), (1,)).shape")
add("set_offset_past2", "a = m.arange(4.)\nm.zeros(1).set_(a.untyped_storage(), 5, (0,), (1,)).shape")
add("set_meta_storage", "a = m.empty(4, device='meta')\nm.zeros(1).set_(a.untyped_storage(), 0, (4,), (1,))")
add("dev_set_cpu_storage", "a = m.arange(4.)\nm.zeros(1, device=dev).set_(a.untyped_storage(), 0, (4,), (1,))")
add("dev_set_cpu_tensor", "m.zeros(1, device=dev).set_(m.ones(3))")
add("storage_slice_set", "a = m.arange(4.)\ns = a.untyped_storage()[4:12]\nm.zeros(1).set_(s, 0, (2,), (1,)).tolist()")
add("storage_slice_resize", "a = m.arange(4.)\ns = a.untyped_storage()[4:12]\ns.resize_(100)")
add("storage_slice_then_parent_resize", "a = m.arange(4.)\ns = a.untyped_storage()[4:12]\na.untyped_storage().resize_(0)\nm.zeros(1).set_(s, 0, (2,), (1,)).tolist()")
add("storage_copy_wrong_size", "m.UntypedStorage(4).copy_(m.UntypedStorage(8))")
add("storage_copy_tensor", "m.UntypedStorage(4).copy_(m.ones(1))")
add("storage_fill_neg", "m.UntypedStorage(4).fill_(-1).tolist()")
add("storage_fill_float", "m.UntypedStorage(4).fill_(1.5)")
add("storage_setitem_slice_oob", "s = m.UntypedStorage(4)\ns[2:100] = 1\ns.tolist()")
add("storage_getitem_neg_slice", "s = m.UntypedStorage(b'abcd')\ns[-2:].tolist()")
add("storage_tolist_big_shrunk", "t = m.arange(4.)\ns = t.untyped_storage()\ns2 = s[4:]\ns.resize_(0)\ns2.tolist()")
add("storage_data_ptr_shrunk_slice", "t = m.arange(4.)\ns = t.untyped_storage()\ns2 = s[4:]\ns.resize_(0)\ns2.nbytes()")
# view(dtype) odd
add("view_dtype_shrunk", "t = m.arange(4.)\nu = t.view(m.int8)\nt.untyped_storage().resize_(4)\nu.sum()")
add("view_dtype_offset", "t = m.arange(4, dtype=m.int8)[1:]\nt.view(m.int16)")
add("view_dtype_0dim", "m.tensor(1., dtype=m.float32).view(m.int8)")
add("view_dtype_0dim_same", "m.tensor(1., dtype=m.float32).view(m.int32).shape")
add("view_dtype_bigger_0dim", "m.tensor(1., dtype=m.float32).view(m.float64)")
add("view_dtype_neg_stride_like", "m.arange(8, dtype=m.int8).view(2, 4).t().view(m.int16)")
add("view_dtype_expand", "m.ones(1, 4, dtype=m.int8).expand(3, 4).view(m.int32).stride()")
add("view_dtype_complex32", "m.ones(4, dtype=m.float16).view(m.complex32).shape")
add("view_dtype_bool_to_int", "m.tensor([True, False]).view(m.uint8).tolist()")
add("view_dtype_uint8_to_bool_2", "m.tensor([2, 0], dtype=m.uint8).view(m.bool).tolist()")
add("view_dtype_uint8_to_bool_2_any", "m.tensor([2, 0], dtype=m.uint8).view(m.bool).any().item()")
add("view_dtype_uint8_to_bool_2_not", "(~m.tensor([2, 0], dtype=m.uint8).view(m.bool)).tolist()")
add("view_dtype_uint8_to_bool_2_sum", "m.tensor([2, 0], dtype=m.uint8).view(m.bool).sum().item()")
add("view_dtype_uint8_to_bool_2_eq", "(m.tensor([2, 1], dtype=m.uint8).view(m.bool) == m.tensor([True, True])).tolist()")
add("view_dtype_uint8_to_bool_2_index", "m.arange(2.)[m.tensor([2, 0], dtype=m.uint8).view(m.bool)].tolist()")
add("view_dtype_uint8_to_bool_2_float", "m.tensor([2, 0], dtype=m.uint8).view(m.bool).float().tolist()")
add("view_dtype_uint8_to_bool_2_where", "m.where(m.tensor([2, 0], dtype=m.uint8).view(m.bool), 1., 0.).tolist()")
add("view_dtype_uint8_to_bool_2_logical_and", "m.logical_and(m.tensor([2, 0], dtype=m.uint8).view(m.bool), True).tolist()")
add("view_dtype_uint8_to_bool_2_mul", "(m.tensor([2, 3], dtype=m.uint8).view(m.bool) * m.tensor([True, True])).view(m.uint8).tolist()")
add("view_dtype_f8_nan", "m.tensor([0x7f, 0xff], dtype=m.uint8).view(m.float8_e4m3fn).float().tolist()")
# setitem odd
add("setitem_str", "t = m.zeros(3)\nt['a'] = 1")
add("setitem_none_value", "t = m.zeros(3)\nt[0] = None")
add("setitem_list_value_ragged", "t = m.zeros(3, 2)\nt[:] = [[1, 2], [3]]")
add("setitem_nparray_value", "t = m.zeros(3)\nt[:] = np.arange(3)\nt.tolist()")
add("setitem_np_bool_index", "t = m.zeros(3)\nt[np.array([True, False, True])] = 1\nt.tolist()")
add("setitem_np_int_index_oob", "t = m.zeros(3)\nt[np.array([5])] = 1")
add("setitem_tensor_value_grad", "t = m.zeros(3)\nt[0] = m.ones(1, requires_grad=True)\nt.requires_grad")
add("setitem_ellipsis_twice", "t = m.zeros(3)\nt[..., ...] = 1")
add("setitem_huge_slice_step", "t = m.zeros(3)\nt[::2**62] = 1\nt.tolist()")
add("setitem_neg_slice_step", "t = m.zeros(3)\nt[::-1] = 1")
add("getitem_slice_step0", "m.zeros(3)[::0]")
add("getitem_tensor_float_idx", "m.zeros(3)[m.tensor([0.5])]")
add("getitem_tensor_bool_0d", "m.zeros(3)[m.tensor(True)].shape")
add("getitem_np_float", "m.zeros(3)[np.float64(1.)]")
add("getitem_np_int", "m.zeros(3)[np.int64(1)].item()")
add("getitem_np_uint64_huge", "m.zeros(3)[np.uint64(2**64-1)]")
add("getitem_list_of_tensors", "m.zeros(3, 3)[[m.tensor(0), m.tensor(1)]].shape")
add("getitem_nested_tuple_list", "m.zeros(3, 3)[([0, 1], [1, 2])].tolist()")
add("getitem_too_many_none", "m.zeros(3)[(None,) * 70].dim()")
add("getitem_too_many_none_64", "m.zeros(3)[(None,) * 63].dim()")
