"""torch's per-device rules, now asked by meaning (ptcore._dispatch.device's
``is_accelerator``, ``has_fused_kernels``, ``in_host_memory``,
``svd_takes_driver``; the CPU fast forms of SDPA, LSTM-under-autocast and
``random_`` through ``loop_for``; the CPU kernels' ``_host.pxd`` guard): the
same behaviour on the CPU (against torch) and on the CUDA device as before
the front-ends stopped comparing device types."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _activation, _norm, _rnn
from ptcore.nn.modules.activation import _check_arg_device
from ptcore.nn.utils import parameters_to_vector
from ptcore.nn.utils.rnn import PackedSequence

torch = pytest.importorskip("torch")


def _x(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_parameter_list_and_dict_reprs_name_the_accelerator_device():
    w = _x((2, 3))
    p_cpu = ptcore.nn.ParameterList([ptcore.nn.Parameter(ptcore.from_numpy(w))])
    t_cpu = torch.nn.ParameterList([torch.nn.Parameter(torch.from_numpy(w))])
    want = repr(t_cpu).replace("torch.", "ptcore.")
    assert repr(p_cpu) == want
    p_cuda = ptcore.nn.ParameterList([ptcore.nn.Parameter(ptcore.from_numpy(w).cuda())])
    assert repr(p_cuda) == want.replace("size 2x3]", "size 2x3 (cuda:0)]")
    d_cuda = ptcore.nn.ParameterDict({"a": ptcore.nn.Parameter(ptcore.from_numpy(w).cuda())})
    assert "of size 2x3 (cuda:0)]" in repr(d_cuda)


def test_parameters_to_vector_tracks_the_device():
    a, b = _x((2, 3)), _x((4,), 1)
    v = parameters_to_vector([ptcore.from_numpy(a).cuda(), ptcore.from_numpy(b).cuda()])
    assert v.device.type == "cuda"
    np.testing.assert_array_equal(v.cpu().numpy(), np.concatenate([a.ravel(), b]))
    for pair in ((ptcore.from_numpy(a).cuda(), ptcore.from_numpy(b)),
                 (ptcore.from_numpy(a), ptcore.from_numpy(b).cuda())):
        with pytest.raises(TypeError, match="different devices"):
            parameters_to_vector(pair)


def test_packed_sequence_keeps_batch_sizes_on_the_host():
    data = ptcore.from_numpy(_x((5, 2))).cuda()
    ps = PackedSequence(data, ptcore.tensor([3, 2]))
    assert ps.is_cuda and ps.batch_sizes.device.type == "cpu"
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        PackedSequence(data, ptcore.tensor([3, 2]).cuda())


def test_apply_runs_on_host_tensors_only():
    a = _x((3,))
    got = ptcore.from_numpy(a.copy()).apply_(lambda v: v * 2 + 1)
    want = torch.from_numpy(a.copy()).apply_(lambda v: v * 2 + 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
        ptcore.from_numpy(a).cuda().apply_(lambda v: v)


def test_svd_driver_is_refused_on_the_cpu_only():
    a = _x((4, 3))
    with pytest.raises(RuntimeError, match="only supported on CUDA"):
        ptcore.linalg.svd(ptcore.from_numpy(a), driver="gesvd")
    with pytest.raises(RuntimeError, match="only supported on CUDA"):
        torch.linalg.svd(torch.from_numpy(a), driver="gesvd")
    s = ptcore.linalg.svd(ptcore.from_numpy(a).cuda(), full_matrices=False, driver="gesvd").S
    np.testing.assert_allclose(s.cpu().numpy(), torch.linalg.svdvals(torch.from_numpy(a)).numpy(),
                               rtol=1e-5)


@pytest.mark.parametrize("value_on_cuda", [False, True])
def test_index_put_with_a_one_element_value(value_on_cuda):
    a = _x((4, 3))
    mask = a[:, 0] > 0
    v = np.array([7.5], dtype=np.float32)
    want = torch.from_numpy(a.copy())
    want[torch.from_numpy(mask)] = torch.from_numpy(v)
    got = ptcore.from_numpy(a.copy()).cuda()
    val = ptcore.from_numpy(v)
    got[ptcore.from_numpy(mask).cuda()] = val.cuda() if value_on_cuda else val
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    cpu = ptcore.from_numpy(a.copy())
    cpu[ptcore.from_numpy(mask)] = ptcore.from_numpy(v)
    np.testing.assert_array_equal(cpu.numpy(), want.numpy())


def test_setitem_of_a_0d_host_value_into_a_device_slice():
    a = _x((3, 4))
    want = torch.from_numpy(a.copy())
    want[1:] = torch.tensor(2.5)
    got = ptcore.from_numpy(a.copy()).cuda()
    got[1:] = ptcore.tensor(2.5)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    got[0] = ptcore.tensor(-1.0).cuda()
    assert (got[0].cpu().numpy() == -1.0).all()


def test_random_over_the_whole_int64_range_is_the_same_stream_on_both_devices():
    ptcore.manual_seed(3)
    cpu = ptcore.empty(4000, dtype=ptcore.int64).random_()
    ptcore.manual_seed(3)
    dev = ptcore.empty(4000, dtype=ptcore.int64, device="cuda").random_()
    assert cpu._version == 1
    c = cpu.numpy()
    assert c.min() >= 0 and c.max() > 2 ** 62          # [0, 2**63), as torch's
    np.testing.assert_array_equal(dev.cpu().numpy(), c)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_on_both_devices_against_torch(causal):
    q, k, v = (_x((2, 3, 5, 8), s) for s in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(t) for t in (q, k, v)), is_causal=causal)
    for dev in ("cpu", "cuda"):
        got = ptcore.nn.functional.scaled_dot_product_attention(
            *(ptcore.from_numpy(t).to(dev) for t in (q, k, v)), is_causal=causal)
        assert got.device.type == dev
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_sdpa_output_layout_follows_the_cpu_flash_kernel_only():
    # a query x.view(B, T, H, d).transpose(1, 2): torch's CPU flash kernel writes
    # the output in the query's layout; another device gives a contiguous one
    x = _x((2, 5, 3, 8))
    kv = _x((2, 3, 5, 8), 1)
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(x).transpose(1, 2), torch.from_numpy(kv), torch.from_numpy(kv))
    got = ptcore.nn.functional.scaled_dot_product_attention(
        ptcore.from_numpy(x).transpose(1, 2), ptcore.from_numpy(kv), ptcore.from_numpy(kv),
        dropout_p=0.0)
    assert got.stride() == want.stride()
    dev = ptcore.nn.functional.scaled_dot_product_attention(
        ptcore.from_numpy(x).cuda().transpose(1, 2), ptcore.from_numpy(kv).cuda(),
        ptcore.from_numpy(kv).cuda())
    assert dev.is_contiguous()
    np.testing.assert_allclose(dev.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_lstm_under_cpu_autocast_casts_on_the_cpu_only():
    ptcore.manual_seed(0)
    m = ptcore.nn.LSTM(4, 5)
    x = ptcore.from_numpy(_x((3, 2, 4)))
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out_cpu, _ = m(x)
    # (torch's oneDNN LSTM in bfloat16 needs a CPU with bf16 support, which this
    # machine's oneDNN refuses: its output dtype is bfloat16 where it runs)
    assert out_cpu.dtype == ptcore.bfloat16
    m.cuda()
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out_dev, _ = m(x.cuda())
    assert out_dev.dtype == ptcore.float32 and out_dev.device.type == "cuda"


def test_fused_path_devices():
    assert _check_arg_device(None)
    assert _check_arg_device(ptcore.zeros(1))
    assert _check_arg_device(ptcore.zeros(1, device="cuda"))
    assert not _check_arg_device(ptcore.zeros(1, device="meta"))
    g = ptcore.ones(3, device="meta", requires_grad=True)
    g.grad = ptcore.ones(3, device="meta")
    with pytest.raises(RuntimeError, match="can't use the foreach API on meta tensors"):
        ptcore.nn.utils.clip_grad_norm_([g], 1.0, foreach=True)
    p = ptcore.ones(3, device="cuda", requires_grad=True)
    p.grad = ptcore.full((3,), 2.0, device="cuda")
    n = ptcore.nn.utils.clip_grad_norm_([p], 1.0, foreach=True)
    assert abs(n.item() - 12 ** 0.5) < 1e-5


def test_cpu_kernels_refuse_device_operands_naming_the_device():
    x = ptcore.from_numpy(_x((8,))).cuda()
    with pytest.raises(ValueError, match=r"leaky_relu kernel: tensors must be on the CPU, got cuda:0"):
        _activation.leaky_relu_forward(x, ptcore.empty_like(x), 0.1)
    h = ptcore.zeros(2, 3)
    with pytest.raises(ValueError, match=r"recurrent kernel: gi must be on the CPU, got cuda:0"):
        _rnn.rnn_forward(ptcore.zeros(4, 2, 3).cuda(), h, ptcore.zeros(3, 3), None,
                         ptcore.zeros(4, 2, 3), False, False)
    xn = ptcore.zeros(2, 3, 4).cuda()
    with pytest.raises(ValueError, match=r"batch_norm kernel: input must be on the CPU, got cuda:0"):
        _norm.batch_norm_forward(xn, 2, 3, 4, None, None, ptcore.zeros(2, 3, 4), ptcore.zeros(3),
                                 ptcore.zeros(3), ptcore.zeros(3), 1e-5)
    a = ptcore.zeros(4, 3)
    # the packed weight-gradient product declines a device operand (the caller's general path)
    assert _rnn.weight_grad(a, ptcore.zeros(4, 5), ptcore.zeros(3, 5).cuda()) is False


# --- the device read from a local variable (creation, random, reduction,
# elementwise loops, nn.parallel) and the CPU fast forms behind in_host_memory

@pytest.mark.parametrize("allow_cpu", [False, True])
@pytest.mark.parametrize("optional", [False, True])
@pytest.mark.parametrize("dev", ["cpu", "cpu:0", "meta", "meta:1", "cuda", "cuda:1", 3, None])
def test_device_index_is_torchs(dev, optional, allow_cpu, monkeypatch):
    """``device_index`` is ``torch._utils._get_device_index`` (an index torch
    would take from its current device is None here: the caller's).  A CUDA
    build of torch would answer its current device there, so torch's is
    asked as a CPU build answers (its current device index None)."""
    import torch._utils
    from torch._utils import _get_device_index
    from ptcore._dispatch.device import device_index
    monkeypatch.setattr(torch._utils, "_get_current_device_index", lambda: None)
    try:
        want = _get_device_index(dev, optional=optional, allow_cpu=allow_cpu)
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            device_index(dev, optional=optional, allow_cpu=allow_cpu)
        assert str(got.value) == str(e)
    else:
        assert device_index(dev, optional=optional, allow_cpu=allow_cpu) == want


@pytest.mark.parametrize("devices", [["cpu"], ["cpu:0"], ["meta"], ["cuda"], [None]])
def test_comm_refuses_devices_as_torch(devices):
    from ptcore.nn.parallel import comm
    from torch.nn.parallel import comm as tcomm
    for fn, tfn in ((comm.broadcast, tcomm.broadcast), (comm.scatter, tcomm.scatter)):
        with pytest.raises(ValueError) as want:
            tfn(torch.ones(2), devices)
        with pytest.raises(ValueError) as got:
            fn(ptcore.ones(2).cuda(), devices)
        assert str(got.value) == str(want.value)
    # indices and indexed devices reach the device
    assert comm.broadcast(ptcore.ones(2), [0, "cuda:0"])[1].device == ptcore.device("cuda", 0)
    assert comm.gather([ptcore.ones(2).cuda()], destination="cpu").device.type == "cpu"


def test_scatter_gather_devices():
    from ptcore.nn.parallel.scatter_gather import _device
    assert _device("cuda") == ptcore.device("cuda", ptcore.cuda.current_device())
    assert _device(0) == ptcore.device("cuda", 0)
    assert _device("meta") == ptcore.device("meta") and _device("cpu") == ptcore.device("cpu")
    out = ptcore.nn.parallel.parallel_apply([ptcore.nn.Identity()], [(ptcore.ones(2).cuda(),)])
    assert out[0].device.type == "cuda"


def test_factories_place_the_host_built_value_on_the_device():
    for dev in ("cpu", "cuda", "meta"):
        for t in (ptcore.tensor([1.0, 2.0], device=dev), ptcore.tril_indices(3, 3, device=dev),
                  ptcore.rand(2, device=dev), ptcore.randperm(4, device=dev),
                  ptcore.arange(3, device=dev), ptcore.tensor(np.ones(2), device=dev)):
            assert t.device.type == dev
    x = ptcore.tensor(np.arange(3.0), device="cpu")
    assert x.device.type == "cpu" and x._version == 0
    assert ptcore.tril_indices(3, 3, device="cuda").cpu().tolist() == \
        torch.tril_indices(3, 3).tolist()


def test_from_file_is_a_cpu_kernel(tmp_path):
    f = tmp_path / "b.bin"
    f.write_bytes(bytes(range(8)))
    assert ptcore.from_file(str(f), size=8, dtype=ptcore.uint8, device="cpu").tolist() == list(range(8))
    with pytest.raises(NotImplementedError):
        torch.from_file(str(f), size=8, dtype=torch.uint8, device="meta")
    for dev in ("meta", "cuda"):
        with pytest.raises(NotImplementedError, match="from_file"):
            ptcore.from_file(str(f), size=8, dtype=ptcore.uint8, device=dev)


def test_elementwise_and_reduction_loops_per_device():
    a = _x((4, 6))
    for dev in ("cpu", "cuda", "meta"):
        x = ptcore.from_numpy(a).to(dev)
        got = [x.t().exp(), ptcore.where(x > 0, x, 0.0), x.t() + x.t(), x.sum(0, dtype=ptcore.float64),
               x.amax(1, keepdim=True)]
        want = [torch.from_numpy(a).t().exp(), torch.where(torch.from_numpy(a) > 0, torch.from_numpy(a), 0.0),
                2 * torch.from_numpy(a).t(), torch.from_numpy(a).sum(0, dtype=torch.float64),
                torch.from_numpy(a).amax(1, keepdim=True)]
        for g, w in zip(got, want):
            assert g.device.type == dev and tuple(g.shape) == tuple(w.shape)
            assert g.dtype == getattr(ptcore, str(w.dtype).split(".")[1])
            if dev != "meta":
                np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_low_precision_add_alpha_rounds_as_torchs_cpu_kernel(dt):
    a, b = _x((64,)), _x((64,), 1)
    ta, tb = torch.from_numpy(a).to(getattr(torch, dt)), torch.from_numpy(b).to(getattr(torch, dt))
    want = ta.add(tb, alpha=0.3).float().numpy()
    pa = ptcore.from_numpy(a).to(getattr(ptcore, dt))
    pb = ptcore.from_numpy(b).to(getattr(ptcore, dt))
    np.testing.assert_array_equal(pa.add(pb, alpha=0.3).float().numpy(), want)
    d = pa.cuda().add(pb.cuda(), alpha=0.3)
    assert d.dtype == pa.dtype and d.device.type == "cuda"
    np.testing.assert_allclose(d.float().cpu().numpy(), want, atol=0.02)


def test_cpu_fast_forms_take_host_tensors_only():
    """The unary, softmax, clamp, getitem, product and dot front-ends try the
    CPU kernel's fast form on host tensors only (``in_host_memory``): the
    meta and CUDA devices give torch's shapes and values."""
    from ptcore._dispatch.device import in_host_memory
    a = _x((3, 4))
    assert in_host_memory(ptcore.ones(1)) and not in_host_memory(ptcore.ones(1, device="meta"))
    assert not in_host_memory(ptcore.ones(1).cuda())
    t = torch.from_numpy(a)
    want = [t.exp(), t.abs(), t.softmax(-1), t.clamp(0, 1), t[torch.tensor([0, 2])], t @ t.T,
            t[0].dot(t[1]), torch.special.erfcx(t)]
    for dev in ("cuda", "meta"):
        x = ptcore.from_numpy(a).to(dev)
        i = ptcore.tensor([0, 2], device=dev)
        calls = [lambda: x.exp(), lambda: x.abs(), lambda: x.softmax(-1), lambda: x.clamp(0, 1),
                 lambda: x[i], lambda: x @ x.T, lambda: x[0].dot(x[1]),
                 lambda: ptcore.special.erfcx(x)]
        for call, w in zip(calls, want):
            g = call()
            assert g.device.type == dev and tuple(g.shape) == tuple(w.shape)
            if dev == "cuda":
                np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
