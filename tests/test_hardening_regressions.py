"""Regression cases of issue 15: inputs that once crashed the interpreter
(int64 overflow in size/stride arithmetic, use after free of exported memory)
and behaviours that differed from PyTorch.

Each former crash runs in a fresh interpreter, so a segmentation fault fails
its test (with the code that caused it) instead of killing pytest.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

# the directory holding the ptcore this test imported (the source tree with its
# compiled modules, or site-packages after `pip install .`): subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


def run_isolated(code):
    """Run ``code`` (with ptcore imported) in a subprocess; return its result."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    src = "import ptcore\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          timeout=120, env=env)


# (case id, code, expected exception name and message fragment; None: must succeed)
CRASHES = [
    ("as_strided_item", "ptcore.zeros(4).as_strided([3], [2**61])[1].item()",
     ("RuntimeError", "Storage size calculation overflowed")),
    ("as_strided_offset", "ptcore.zeros(4).as_strided([1], [1], 2**62).item()",
     ("RuntimeError", "Storage size calculation overflowed")),
    ("as_strided_numel", "ptcore.zeros(4).as_strided([2**62, 4], [0, 0]).sum()",
     ("RuntimeError", "numel: integer multiplication overflow")),
    ("empty_strided", "ptcore.empty_strided((2**62, 2), (1, 2**62))",
     ("RuntimeError", "Storage size calculation overflowed")),
    ("expand_clone", "ptcore.ones(1, 1).expand(2**62, 4).clone()",
     ("RuntimeError", "numel: integer multiplication overflow")),
    ("expand_sum", "ptcore.ones(1, 1).expand(2**62, 4).sum()",
     ("RuntimeError", "numel: integer multiplication overflow")),
    ("new_empty", "ptcore.zeros(2).new_empty((2**62, 4))",
     ("RuntimeError", "Storage size calculation overflowed")),
    ("zeros", "ptcore.zeros(2**62, 4)", ("RuntimeError", "Storage size calculation overflowed")),
    ("reshape", "ptcore.zeros(0).reshape(2**62, 4, 0)",
     ("RuntimeError", "numel: integer multiplication overflow")),
    ("view", "ptcore.zeros(8).view(2**62, 2**62, 0)", ("RuntimeError", "is invalid for input of size 8")),
    ("repeat", "ptcore.zeros(2).repeat(2**62)",
     ("RuntimeError", "cannot be represented as a SymInt")),
    ("repeat2", "ptcore.zeros(2, 2).repeat(2**62, 2**62)",
     ("RuntimeError", "cannot be represented as a SymInt")),
    ("repeat_wraps_to_zero", "ptcore.zeros(4).repeat(2**62)",
     ("RuntimeError", "maximum size for tensor at dimension 0 is 0 but size is 4")),
    ("repeat_uint16", "ptcore.zeros(3, dtype=ptcore.uint16).repeat(2**62)",
     ("RuntimeError", "negative dimension")),
    ("unfold", "ptcore.zeros(10).unfold(0, 2, 2**62).clone()", None),
    ("broadcast", "ptcore.zeros(2**62, 1).expand(2**62, 1) + ptcore.zeros(1, 8)",
     ("RuntimeError", "overflow")),
    ("broadcast2", "ptcore.ones(1).expand(2**62) + ptcore.ones(4, 1)", ("RuntimeError", "overflow")),
    # found by the fuzz harness: None where a tensor is expected
    ("randn_like_none", "ptcore.randn_like(None)", ("TypeError", "")),
    ("rand_like_none", "ptcore.rand_like(None)", ("TypeError", "")),
    ("randint_like_none", "ptcore.randint_like(None, ptcore.tensor(3))", ("TypeError", "")),
    ("empty_like_none", "ptcore.empty_like(None)", ("TypeError", "")),
    ("is_set_to_none", "ptcore.zeros(2).is_set_to(None)", ("TypeError", "")),
    ("dlpack_none", "from ptcore._dlpack import to_dlpack; to_dlpack(None)", ("TypeError", "")),
    ("resize_overflow", "ptcore.zeros(4).resize_(2**62, 4)",
     ("RuntimeError", "Storage size calculation overflowed")),
    ("resize_with_numpy_view", """
        t = ptcore.zeros(4); a = t.numpy()
        t.resize_(10**6)""", ("RuntimeError", "Trying to resize storage that is not resizable")),
    ("storage_resize_with_numpy_view", """
        t = ptcore.zeros(4); a = t.numpy()
        t.untyped_storage().resize_(10**6)""",
     ("RuntimeError", "Trying to resize storage that is not resizable")),
    ("set_with_numpy_view", """
        t = ptcore.zeros(4); a = t.numpy()
        ptcore.zeros(1).set_(t.untyped_storage(), 0, (10**6,))""",
     ("RuntimeError", "Trying to resize storage that is not resizable")),
    ("resize_with_memoryview", """
        t = ptcore.zeros(4); m = memoryview(t)
        t.resize_(10**6)""", ("RuntimeError", "Trying to resize storage that is not resizable")),
    # a DLPack consumer keeps reading the old block: it must stay alive (and unchanged)
    ("resize_with_dlpack_consumer", """
        import numpy as np
        t = ptcore.arange(4.); a = np.from_dlpack(t)
        t.resize_(10**6); t.fill_(7.)
        del t
        import gc; gc.collect()
        b = [np.ones(10**5) for _ in range(20)]
        assert a.tolist() == [0., 1., 2., 3.], a""", None),
    ("storage_resize_with_dlpack_capsule", """
        t = ptcore.arange(4.); c = t.__dlpack__()
        t.untyped_storage().resize_(10**6)
        u = ptcore.from_dlpack(c)
        del t
        import gc; gc.collect()
        assert u.tolist() == [0., 1., 2., 3.], u""", None),
    ("set_on_self_storage", """
        t = ptcore.arange(4.); a = t.numpy()
        t.set_(); t.resize_(100)
        assert a.tolist() == [0., 1., 2., 3.]""", None),
]


@pytest.mark.parametrize("case", CRASHES, ids=[c[0] for c in CRASHES])
def test_former_crash_raises_cleanly(case):
    name, code, expected = case
    r = run_isolated(code)
    assert r.returncode in (0, 1), (
        f"{name} killed the interpreter (exit status {r.returncode}):\n{code}\n{r.stderr[-2000:]}")
    if expected is None:
        assert r.returncode == 0, r.stderr[-2000:]
        return
    assert r.returncode == 1, f"{name} did not raise"
    last = r.stderr.strip().splitlines()[-1]
    exc, frag = expected
    assert exc in last.split(":")[0] and frag in last, last


def test_overflow_errors_match_torch():
    cases = [
        lambda m: m.zeros(4).as_strided([3], [2**61]),
        lambda m: m.empty_strided((2**62, 2), (1, 2**62)),
        lambda m: m.ones(1, 1).expand(2**62, 4).clone(),
        lambda m: m.zeros(2).new_empty((2**62, 4)),
        lambda m: m.zeros(0).reshape(2**62, 4, 0),
        lambda m: m.zeros(4).as_strided([1], [1], 2**62),
    ]
    for f in cases:
        with pytest.raises(RuntimeError) as ours:
            f(ptcore)
        with pytest.raises(RuntimeError) as theirs:
            f(torch)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("code", [
    "m.zeros(2).repeat(2**62)", "m.zeros(2, 2).repeat(2**62, 2**62)", "m.zeros(3).repeat(2**62)",
    "m.zeros(4).repeat(2**62)", "m.zeros(2, 2).repeat(2**62, 2)", "m.zeros(1).repeat(2**63 - 1)",
    "m.zeros(2).repeat(2**31, 2**31)", "m.zeros(2).repeat(-1)", "m.zeros(2, 3).repeat(2)",
])
def test_repeat_overflow_matches_torch(code):
    """repeat multiplies sizes in int64 as torch does: every overflow is torch's RuntimeError."""
    with pytest.raises(RuntimeError) as theirs:
        eval(code, {"m": torch})
    with pytest.raises(RuntimeError) as ours:
        eval(code, {"m": ptcore})
    if "Storage size" in str(theirs.value):     # the sizes named may differ (torch's internal view)
        assert "Storage size calculation overflowed" in str(ours.value)
    else:
        assert str(ours.value) == str(theirs.value)


def test_repeat_large_but_valid_matches_torch():
    for m in (torch, ptcore):
        r = m.arange(3).repeat(2, 2**20 // 4)
        assert tuple(r.shape) == (2, 3 * 2**20 // 4) and r[1, -1].item() == 2


def test_resize_after_numpy_view_dies_is_allowed():
    t = ptcore.arange(4.)
    a = t.numpy()
    assert not t.untyped_storage().resizable()
    del a
    assert t.untyped_storage().resizable()
    t.resize_(100)
    assert t.shape == (100,) and t[:4].tolist() == [0., 1., 2., 3.]


def test_tolist_does_not_pin_the_storage():
    t = ptcore.arange(4.)
    t.tolist()
    t.resize_(10)
    assert t.shape == (10,)


def test_set_matches_torch():
    cases = [(), ("t",), ("s",), ("s", 2, (2, 2)), ("s", 2, (2, 2), (1, 2)), ("s", 0, (100,)),
             ("s64",)]
    for args in cases:
        res = []
        for m in (ptcore, torch):
            src = {"t": m.zeros(2, 3), "s": m.zeros(10).untyped_storage(),
                   "s64": m.zeros(3, dtype=m.float64).untyped_storage()}
            a = tuple(src.get(x, x) if isinstance(x, str) else x for x in args)
            t = m.zeros(4)
            r = t.set_(*a)
            assert r is t
            res.append((tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes()))
        assert res[0] == res[1], args
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        ptcore.zeros(4).set_(ptcore.zeros(2, dtype=ptcore.float64))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ptcore.zeros(4, requires_grad=True).set_()
    # sharing: a resize through one tensor is seen by the other (storage grows in place)
    a = ptcore.arange(4.)
    b = ptcore.zeros(2).set_(a)
    b.resize_(100)
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    b[0] = 5.
    assert a[0].item() == 5.


def test_movedim_0d():
    for m in (ptcore, torch):
        x = m.tensor(1.)
        for s, d in ((0, 0), (-1, 0), ([0], [-1])):
            y = m.movedim(x, s, d)
            assert y.shape == () and y.item() == 1.
        with pytest.raises(IndexError):
            m.movedim(x, 1, 0)


@pytest.mark.parametrize("fn,xs,ws", [
    ("conv1d", (1, 1, 3), (1, 1, 0)),
    ("conv2d", (1, 1, 3, 3), (1, 1, 0, 0)),
    ("conv2d", (1, 1, 3, 3), (1, 1, 2, 0)),
    ("conv3d", (1, 1, 3, 3, 3), (1, 1, 0, 1, 1)),
    ("conv_transpose2d", (1, 1, 3, 3), (1, 1, 0, 0)),
    ("conv2d", (1, 1, 3, 3), (0, 1, 2, 2)),
])
def test_conv_empty_kernel_errors_match_torch(fn, xs, ws):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.functional, fn)(torch.zeros(xs), torch.zeros(ws))
    with pytest.raises(RuntimeError) as ours:
        getattr(ptcore.nn.functional, fn)(ptcore.zeros(xs), ptcore.zeros(ws))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
def test_var_std_of_empty_is_nan_for_any_correction():
    for shape, dim in (((0,), None), ((2, 0), 1), ((0, 3), 0)):
        for corr in (-2, -1, 0, 1):
            for f in ("var", "std"):
                ours = getattr(ptcore, f)(ptcore.empty(shape), dim, correction=corr)
                theirs = getattr(torch, f)(torch.empty(shape), dim, correction=corr)
                np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_byteswapped_numpy_message_matches_torch():
    for npd in (">f4", ">i8", ">c16"):
        a = np.zeros(3, dtype=npd)
        for name in ("tensor", "as_tensor", "from_numpy"):
            with pytest.raises(ValueError) as theirs:
                getattr(torch, name)(a)
            with pytest.raises(ValueError) as ours:
                getattr(ptcore, name)(a)
            assert str(ours.value) == str(theirs.value)


def test_save_deeply_nested_raises_recursion_error_like_torch():
    import io
    obj = []
    for _ in range(100000):
        obj = [obj]
    with pytest.raises(RecursionError):
        torch.save(obj, io.BytesIO())
    with pytest.raises(RecursionError):
        ptcore.save(obj, io.BytesIO())


def test_huge_adaptive_pool_fails_fast():
    # the old code built Python window tables for minutes; the subprocess's
    # timeout bounds the wait
    r = run_isolated("""
        import ptcore.nn.functional as F
        for o in [(10**6, 10**6), (10**9, 1), (10**18, 10**18)]:
            try:
                F.adaptive_avg_pool2d(ptcore.zeros(1, 1, 3, 3), o)
            except RuntimeError as e:
                assert "memory" in str(e), e
            else:
                raise AssertionError(o)
        print(F.adaptive_avg_pool2d(ptcore.ones(1, 1, 3, 3), (5, 7)).shape)""")
    assert r.returncode == 0, r.stderr[-2000:]


def test_unbound_core_methods_check_self():
    # A method of the typed core called through the class with a foreign ``self``
    # (``ptcore.Tensor.view(object(), -1)``, as fx's tracer once did) read the object's memory as
    # a tensor's: a segfault, or garbage sizes.  Every method must refuse it with a TypeError.
    code = """
        import ptcore
        from ptcore import _tensor as C
        bad = []
        n = 0
        from ptcore.cuda.allocator import caching_allocator as _caching_allocator
        from ptcore.cuda.runtime import device_storage as _device_storage
        from ptcore.cuda.driver import fast_blas as _fast_blas
        from ptcore.cuda.driver import fast_launch as _fast_launch
        for cls in (C._TensorBase, C.Storage, C.dtype, C.device, _caching_allocator.Block,
                    _caching_allocator.CachingAllocator, _device_storage.DeviceMemory,
                    _fast_blas.GemmEx, _fast_launch.KernelLauncher):
            for name, attr in vars(cls).items():
                if not callable(attr) or isinstance(attr, (staticmethod, classmethod)) \\
                        or name in ("__new__", "__init_subclass__", "__subclasshook__"):
                    continue
                if isinstance(attr, type):
                    continue
                for args in ((), (0,), (-1,), (1, 2)):
                    n += 1
                    try:
                        attr(object(), *args)
                    except TypeError:
                        pass
                    except Exception as e:
                        bad.append(f"{cls.__name__}.{name}{args}: {type(e).__name__}: {e}")
                    else:
                        bad.append(f"{cls.__name__}.{name}{args}: accepted a foreign self")
        print(n)
        print("\\n".join(bad[:20]))
    """
    r = run_isolated(code)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    assert int(lines[0]) > 400, lines[0]          # the core's methods were all tried
    assert lines[1:] == [], "\n".join(lines[1:])


def test_failed_host_allocation_is_memory_error_and_runtime_error():
    # 2**50 bytes exceed any x86-64/aarch64 user address space, whatever the overcommit policy
    for make in (lambda: ptcore.empty(2**48), lambda: ptcore.ones(3).resize_(2**48)):
        with pytest.raises(MemoryError) as ei:
            make()
        assert isinstance(ei.value, RuntimeError)      # torch's CPU allocator error type
        assert str(2**50) in str(ei.value)
    with pytest.raises(RuntimeError):
        torch.empty(2**48)


@pytest.mark.parametrize("call", [
    lambda x: x.chunk(2 ** 62),                          # a dim of size 0: one empty piece each
    lambda x: ptcore.chunk(x, 2 ** 40),
    lambda x: x.unsafe_chunk(2 ** 62),
    lambda x: x.tensor_split(2 ** 40),
    lambda x: ptcore.tensor_split(x, sections=2 ** 62),
    lambda x: x.tensor_split(ptcore.tensor(2 ** 40)),
    lambda x: ptcore.empty(1).expand(2 ** 40).split(1),
    lambda x: ptcore.empty(1).expand(2 ** 40).unbind(),
    lambda x: ptcore.empty(1).expand(2 ** 40).chunk(2 ** 40),
])
def test_more_pieces_than_can_exist_raise_at_once(call):
    # found by tests/fuzz_harness.py: Tensor.chunk(2**62) of an empty dim built its tuple
    # of empty views for ever; torch raises RuntimeError (std::bad_alloc / vector max_size)
    x = ptcore.empty(0, 1, dtype=ptcore.uint16)
    with pytest.raises(RuntimeError, match="cannot make"):
        call(x)
    # the ordinary cases are untouched
    assert len(x.chunk(5)) == 5 and len(ptcore.empty(3).tensor_split(7)) == 7
    assert len(ptcore.empty(1).expand(10).split(3)) == 4
