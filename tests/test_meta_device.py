"""The meta device: tensors with a geometry and no data, compared with torch
(shapes, dtypes, strides, errors, reprs, modules built and moved on meta)."""
import copy
import pickle

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _desc(r, lib):
    if isinstance(r, lib.Tensor):
        return ("T", tuple(r.shape), str(r.dtype).split(".")[-1], tuple(r.stride()), str(r.device))
    if isinstance(r, (tuple, list)):
        return tuple(_desc(x, lib) for x in r)
    if isinstance(r, dict):
        return {k: _desc(v, lib) for k, v in r.items()}
    return r


def _outcome(fn, lib):
    try:
        return _desc(fn(lib), lib)
    except Exception as e:      # compared by type
        return ("raises", type(e).__name__)


def _same(fn):
    expected = _outcome(fn, torch)
    got = _outcome(fn, ptcore)
    assert got == expected


def M(L, *size, **kw):
    return L.empty(*size, device="meta", **kw)


def F(L):
    return L.nn.functional


FACTORIES = {
    "empty": lambda L: M(L, 2, 3),
    "zeros": lambda L: L.zeros(2, 3, device="meta", dtype=L.float64),
    "ones": lambda L: L.ones(4, device="meta"),
    "full": lambda L: L.full((2, 2), 3, device="meta"),
    "rand": lambda L: L.rand(2, 5, device="meta"),
    "randn": lambda L: L.randn(2, 5, device="meta", dtype=L.float64),
    "randint": lambda L: L.randint(0, 5, (3,), device="meta"),
    "randperm": lambda L: L.randperm(5, device="meta"),
    "arange": lambda L: L.arange(5, device="meta"),
    "arange_float": lambda L: L.arange(0, 1, 0.1, device="meta"),
    "linspace": lambda L: L.linspace(0, 1, 7, device="meta"),
    "eye": lambda L: L.eye(3, device="meta"),
    "tensor": lambda L: L.tensor([1, 2], device="meta"),
    "empty_strided": lambda L: L.empty_strided((2, 3), (1, 2), device="meta"),
    "empty_like": lambda L: L.empty_like(M(L, 2, 3)),
    "empty_like_cpu": lambda L: L.empty_like(M(L, 2, 3), device="cpu"),
    "new_empty": lambda L: M(L, 3).new_empty(2, 4),
    "new_zeros": lambda L: M(L, 3).new_zeros((2, 4)),
    "new_full": lambda L: M(L, 3).new_full((2,), 1.5),
    "new_tensor": lambda L: M(L, 3).new_tensor([1.0, 2.0]),
    "rand_like": lambda L: L.rand_like(M(L, 5, 3)),
    "to_meta": lambda L: L.ones(2, 3).to("meta"),
    "to_meta_transposed": lambda L: L.ones(2, 3).t().to("meta"),
    "to_meta_dtype": lambda L: L.ones(2, 3).to("meta", L.float16),
    "device_object": lambda L: L.empty(2, device=L.device("meta")),
}

METADATA = {
    "is_meta": lambda L: (M(L, 2).is_meta, L.ones(2).is_meta, M(L, 2).is_cpu),
    "device": lambda L: str(M(L, 2).device),
    "sizes": lambda L: (M(L, 2, 3).numel(), M(L, 2, 3).element_size(), M(L, 2, 3).nbytes,
                        M(L, 2, 3).dim(), tuple(M(L, 2, 3).shape)),
    "get_device": lambda L: M(L, 2).get_device(),
    "storage_nbytes": lambda L: M(L, 4, 6).untyped_storage().nbytes(),
    "storage_offset": lambda L: M(L, 4, 6)[1:].storage_offset(),
    "view": lambda L: M(L, 2, 3).view(3, 2),
    "reshape": lambda L: M(L, 2, 3).reshape(-1),
    "transpose": lambda L: M(L, 2, 3).transpose(0, 1),
    "permute": lambda L: M(L, 2, 3, 4).permute(2, 0, 1),
    "slice": lambda L: M(L, 4, 6)[1:3, ::2],
    "select": lambda L: M(L, 4, 6)[1],
    "expand": lambda L: M(L, 1, 6).expand(3, 6),
    "unsqueeze": lambda L: M(L, 4, 6).unsqueeze(1),
    "chunk": lambda L: M(L, 4, 6).chunk(2, 1),
    "contiguous": lambda L: M(L, 4, 6).t().contiguous(),
    "clone_keeps_layout": lambda L: M(L, 4, 6).t().clone(),
    "double_keeps_layout": lambda L: M(L, 4, 6).t().double(),
    "resize_": lambda L: M(L, 4).resize_(3, 5),
    "deepcopy": lambda L: copy.deepcopy(M(L, 2, 3).t()),
    "pickle": lambda L: pickle.loads(pickle.dumps(M(L, 2, 3).t())),
    "detach": lambda L: M(L, 2, requires_grad=True).detach(),
}

IN_PLACE = {
    "uniform_": lambda L: M(L, 2, 3).uniform_(),
    "normal_": lambda L: M(L, 2, 3).normal_(0, 1),
    "zero_": lambda L: M(L, 2, 3).zero_(),
    "fill_": lambda L: M(L, 2, 3).fill_(2),
    "copy_in": lambda L: M(L, 2).copy_(L.ones(2)),
    "setitem": lambda L: M(L, 2, 3).__setitem__(0, 1.0),
    "add_": lambda L: M(L, 2, 3).add_(M(L, 3)),
    "masked_fill_": lambda L: M(L, 5, 3).masked_fill_(M(L, 5, 3, dtype=L.bool), 0.0),
    "index_put_": lambda L: M(L, 5, 3).index_put_((M(L, 2, dtype=L.long),), M(L, 3)),
    "kaiming_uniform_": lambda L: L.nn.init.kaiming_uniform_(M(L, 4, 3), a=5 ** 0.5),
    "xavier_uniform_": lambda L: L.nn.init.xavier_uniform_(M(L, 4, 3)),
    "xavier_normal_": lambda L: L.nn.init.xavier_normal_(M(L, 4, 3)),
    "trunc_normal_": lambda L: L.nn.init.trunc_normal_(M(L, 4, 3), std=0.02),
    "orthogonal_": lambda L: L.nn.init.orthogonal_(M(L, 4, 3)),
    "constant_": lambda L: L.nn.init.constant_(M(L, 4, 3), 0.3),
}

NO_DATA = {
    "item": lambda L: M(L, 1).item(),
    "item_many": lambda L: M(L, 6).item(),
    "numpy": lambda L: M(L, 2).numpy(),
    "tolist": lambda L: M(L, 2).tolist(),
    "array": lambda L: np.asarray(M(L, 2)),
    "float": lambda L: float(M(L, 1)),
    "bool": lambda L: bool(M(L, 1).sum()),
    "to_cpu": lambda L: M(L, 2).to("cpu"),
    "cpu": lambda L: M(L, 2).cpu(),
    "copy_out": lambda L: L.empty(2).copy_(M(L, 2)),
    "copy_in_bad_shape": lambda L: M(L, 2).copy_(L.ones(3)),
    "nonzero": lambda L: M(L, 5, 3).nonzero(),
    "mask_index": lambda L: M(L, 5, 3)[M(L, 5, 3, dtype=L.bool)],
    "unique": lambda L: L.unique(M(L, 5)),
    "equal": lambda L: L.equal(M(L, 5), M(L, 5)),
    "allclose": lambda L: L.allclose(M(L, 5), M(L, 5)),
    "masked_select": lambda L: M(L, 5).masked_select(M(L, 5, dtype=L.bool)),
    "where_one_arg": lambda L: L.where(M(L, 2, 3, dtype=L.bool)),
    "mixed_devices": lambda L: M(L, 2) + L.ones(2),
}

OPS = {
    "add_broadcast": lambda L: M(L, 2, 1, 3) + M(L, 4, 1),
    "add_bad_shapes": lambda L: M(L, 2, 3) + M(L, 4),
    "add_int_float": lambda L: M(L, 2, dtype=L.int32) + M(L, 2),
    "add_scalar": lambda L: M(L, 2, dtype=L.int32) + 1.5,
    "add_cpu_0d": lambda L: M(L, 2, dtype=L.float16) + L.tensor(1.0),
    "true_div_int": lambda L: M(L, 2, dtype=L.int64) / 2,
    "eq": lambda L: M(L, 2, 3) == M(L, 3),
    "exp_keeps_layout": lambda L: M(L, 2, 3).t().exp(),
    "sqrt_int": lambda L: M(L, 2, dtype=L.int64).sqrt(),
    "where": lambda L: L.where(M(L, 2, 3, dtype=L.bool), M(L, 3), 0.0),
    "rpow": lambda L: 2 ** M(L, 2, 3, dtype=L.int32),
    "imul": lambda L: M(L, 2, 3).__imul__(2),
    "sum": lambda L: M(L, 2, 3, 4).sum(),
    "sum_dim": lambda L: M(L, 2, 3, 4).sum(1),
    "sum_keepdim": lambda L: M(L, 2, 3, 4).sum((0, 2), keepdim=True),
    "sum_int": lambda L: M(L, 2, 3, dtype=L.int32).sum(0),
    "sum_out": lambda L: L.sum(M(L, 5, 3), 0, out=M(L, 0)),
    "mean_int": lambda L: M(L, 5, 5, dtype=L.int32).mean(-1),
    "max_dim": lambda L: M(L, 4, 3).max(1),
    "argmax": lambda L: M(L, 4, 3).argmax(0),
    "var_mean": lambda L: L.var_mean(M(L, 4, 3), 1),
    "norm": lambda L: M(L, 4, 3).norm(dim=1),
    "cumsum": lambda L: M(L, 4, 3).cumsum(1),
    "softmax": lambda L: M(L, 4, 3).softmax(-1),
    "matmul": lambda L: M(L, 1000, 500) @ M(L, 500, 7),
    "matmul_bad": lambda L: M(L, 4, 3) @ M(L, 4, 3),
    "matmul_batched": lambda L: M(L, 8, 1, 4, 3) @ M(L, 5, 3, 6),
    "matvec": lambda L: M(L, 4, 3) @ M(L, 3),
    "bmm": lambda L: L.bmm(M(L, 2, 4, 3), M(L, 2, 3, 5)),
    "addmm": lambda L: L.addmm(M(L, 5), M(L, 4, 3), M(L, 3, 5)),
    "linear": lambda L: F(L).linear(M(L, 2, 7, 16), M(L, 32, 16), M(L, 32)),
    "einsum": lambda L: L.einsum("ij,jk->ik", M(L, 4, 3), M(L, 3, 5)),
    "conv2d": lambda L: F(L).conv2d(M(L, 2, 3, 32, 32), M(L, 16, 3, 3, 3), stride=2, padding=1),
    "conv2d_groups": lambda L: F(L).conv2d(M(L, 2, 4, 32, 32), M(L, 8, 2, 3, 3), groups=2),
    "conv1d_dilated": lambda L: F(L).conv1d(M(L, 2, 3, 32), M(L, 16, 3, 5), dilation=2),
    "conv2d_same": lambda L: F(L).conv2d(M(L, 2, 3, 9, 9), M(L, 4, 3, 3, 3), padding="same"),
    "conv_transpose2d": lambda L: F(L).conv_transpose2d(M(L, 2, 4, 8, 8), M(L, 4, 3, 3, 3),
                                                        stride=2, padding=1, output_padding=1),
    "conv2d_bad_channels": lambda L: F(L).conv2d(M(L, 2, 4, 32, 32), M(L, 8, 3, 3, 3)),
    "max_pool2d": lambda L: F(L).max_pool2d(M(L, 2, 3, 32, 32), 2),
    "max_pool2d_indices": lambda L: F(L).max_pool2d(M(L, 2, 3, 32, 32), 3, 2, 1,
                                                    return_indices=True),
    "avg_pool2d_ceil": lambda L: F(L).avg_pool2d(M(L, 2, 3, 31, 31), 3, ceil_mode=True),
    "adaptive_avg_pool2d": lambda L: F(L).adaptive_avg_pool2d(M(L, 2, 3, 31, 31), 7),
    "layer_norm": lambda L: F(L).layer_norm(M(L, 2, 5, 8), (8,)),
    "layer_norm_bad": lambda L: F(L).layer_norm(M(L, 2, 5, 8), (5,)),
    "batch_norm": lambda L: F(L).batch_norm(M(L, 2, 5, 8), M(L, 5), M(L, 5), training=False),
    "group_norm": lambda L: F(L).group_norm(M(L, 2, 4, 8), 2),
    "cat": lambda L: L.cat([M(L, 2, 3), M(L, 4, 3)]),
    "cat_promotes": lambda L: L.cat([M(L, 2, 3), M(L, 2, 5, dtype=L.float64)], 1),
    "cat_bad": lambda L: L.cat([M(L, 2, 3), M(L, 4, 5)]),
    "stack": lambda L: L.stack([M(L, 2, 3)] * 4, 1),
    "index_select": lambda L: M(L, 5, 3).index_select(0, M(L, 7, dtype=L.long)),
    "index_meta": lambda L: M(L, 5, 3)[M(L, 7, dtype=L.long)],
    "index_cpu": lambda L: M(L, 5, 3)[L.tensor([0, 1])],
    "index_list": lambda L: M(L, 5, 3)[[0, 1, 2]],
    "gather": lambda L: M(L, 5, 3).gather(1, M(L, 5, 2, dtype=L.long)),
    "embedding": lambda L: F(L).embedding(M(L, 4, 7, dtype=L.long), M(L, 100, 16)),
    "dropout": lambda L: F(L).dropout(M(L, 5, 3), 0.5),
    "gelu": lambda L: F(L).gelu(M(L, 5, 3)),
    "cross_entropy": lambda L: F(L).cross_entropy(M(L, 5, 3), M(L, 5, dtype=L.long)),
    "sdpa": lambda L: F(L).scaled_dot_product_attention(M(L, 2, 4, 10, 8), M(L, 2, 4, 12, 8),
                                                        M(L, 2, 4, 12, 8)),
    "topk": lambda L: M(L, 5, 30).topk(3),
    "sort": lambda L: M(L, 5, 30).sort(1),
    "repeat": lambda L: M(L, 5, 3).repeat(2, 3),
    "pad": lambda L: F(L).pad(M(L, 5, 3), (1, 2)),
    "interpolate": lambda L: F(L).interpolate(M(L, 1, 3, 8, 8), scale_factor=2),
    "one_hot": lambda L: F(L).one_hot(M(L, 5, dtype=L.long), 10),
    "multinomial": lambda L: L.multinomial(M(L, 5), 2),
    "normal_tensors": lambda L: L.normal(M(L, 5), M(L, 5)),
    "backward": lambda L: (lambda x: ((x * 2).sum().backward(), x.grad)[1])(
        M(L, 5, 3, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories(name):
    _same(FACTORIES[name])


@pytest.mark.parametrize("name", sorted(METADATA))
def test_metadata_and_views(name):
    _same(METADATA[name])


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_init_keeps_the_tensor(name):
    _same(IN_PLACE[name])


@pytest.mark.parametrize("name", sorted(NO_DATA))
def test_reading_data_raises_as_torch(name):
    _same(NO_DATA[name])


def test_no_data_messages():
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        M(ptcore, 1).item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        M(ptcore, 2).cpu()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        M(ptcore, 2).numpy()
    assert M(ptcore, 2).data_ptr() == 0


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_infer_shape_and_dtype(name):
    _same(OPS[name])


def test_random_ops_draw_nothing():
    ptcore.manual_seed(0)
    a = ptcore.rand(3)
    ptcore.manual_seed(0)
    ptcore.rand(1000, device="meta")
    F(ptcore).dropout(M(ptcore, 100), 0.5)
    M(ptcore, 10).uniform_()
    np.testing.assert_array_equal(ptcore.rand(3).numpy(), a.numpy())


@pytest.mark.parametrize("make", [
    lambda L: repr(M(L, 2, 3)),
    lambda L: repr(M(L, 2, dtype=L.float64)).replace("torch.", "").replace("ptcore.", ""),
    lambda L: repr(M(L, 0)),
    lambda L: repr(L.empty((), device="meta")),
    lambda L: repr(M(L, 2, requires_grad=True)),
    lambda L: repr(M(L, 2, requires_grad=True) * 2),
    lambda L: str(M(L, 2, 3)),
    lambda L: repr(L.nn.Linear(2, 3, device="meta").weight),
])
def test_repr(make):
    assert make(ptcore) == make(torch)


class _Net:
    @staticmethod
    def make(L):
        nn = L.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
                self.bn = nn.BatchNorm2d(8)
                self.fc = nn.Linear(8 * 4 * 4, 10)
                self.ln = nn.LayerNorm(10)

            def forward(self, x):
                x = L.relu(self.bn(self.conv(x)))
                x = L.nn.functional.max_pool2d(x, 2)
                return self.ln(self.fc(x.flatten(1)))
        return Net


def _state(m, L):
    return [(k, _desc(v, L)) for k, v in m.state_dict().items()]


def _in_device_block(L):
    with L.device("meta"):
        m = _Net.make(L)()
    return _state(m, L)


MODULES = {
    "linear_device_meta": lambda L: _state(L.nn.Linear(1000, 1000, device="meta"), L),
    "device_block": _in_device_block,
    "to_meta": lambda L: _state(_Net.make(L)().to("meta"), L),
    "to_empty": lambda L: _state(_Net.make(L)().to("meta").to_empty(device="cpu"), L),
    "forward": lambda L: _Net.make(L)().to("meta")(M(L, 2, 3, 8, 8)),
    "forward_eval": lambda L: _Net.make(L)().to("meta").eval()(M(L, 2, 3, 8, 8)),
    "reset_parameters": lambda L: (lambda m: (m.to_empty(device="cpu"), m.reset_parameters(),
                                              _state(m, L))[2])(L.nn.Linear(10, 5, device="meta")),
    "load_assign": lambda L: (lambda m: (m.load_state_dict(L.nn.Linear(10, 5).state_dict(),
                                                           assign=True), _state(m, L))[1])(
        L.nn.Linear(10, 5, device="meta")),
    "deepcopy": lambda L: _state(copy.deepcopy(L.nn.Linear(2, 3, device="meta")), L),
    "transformer_layer": lambda L: L.nn.TransformerEncoderLayer(16, 2, 32, device="meta",
                                                                batch_first=True)(M(L, 2, 5, 16)),
    "lstm": lambda L: _state(L.nn.LSTM(4, 8, device="meta"), L),
    "backward_through_linear": lambda L: (lambda lin: (lin(M(L, 4, 3)).sum().backward(),
                                                       lin.weight.grad)[1])(
        L.nn.Linear(3, 2, device="meta")),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules(name):
    _same(MODULES[name])


def test_reset_parameters_after_to_empty_gives_values():
    m = ptcore.nn.Linear(10, 5, device="meta")
    m.to_empty(device="cpu")
    m.reset_parameters()
    assert m.weight.device.type == "cpu"
    assert np.isfinite(m.weight.detach().numpy()).all()
    assert abs(m.weight.detach().numpy()).max() <= 1 / np.sqrt(10)


def _ensemble(L):
    # the torch.func model-ensembling tutorial
    class SimpleMLP(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = L.nn.Linear(784, 128)
            self.fc2 = L.nn.Linear(128, 128)
            self.fc3 = L.nn.Linear(128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = L.nn.functional.relu(self.fc1(x))
            x = L.nn.functional.relu(self.fc2(x))
            return self.fc3(x)

    models = [SimpleMLP() for _ in range(5)]
    for i, m in enumerate(models):
        for j, p in enumerate(m.parameters()):
            rs = np.random.RandomState(10 * i + j)
            p.data = L.from_numpy((rs.randn(*p.shape) * 0.05).astype(np.float32))
    x = L.from_numpy(np.random.RandomState(1).randn(64, 1, 28, 28).astype(np.float32))
    params, buffers = L.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to("meta")

    def fmodel(params, buffers, x):
        return L.func.functional_call(base_model, (params, buffers), (x,))

    minibatches = x[:40].reshape(5, 8, 1, 28, 28)
    p1 = L.func.vmap(fmodel)(params, buffers, minibatches)
    p2 = L.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[:8])
    return p1.detach().numpy(), p2.detach().numpy()


def test_model_ensembling_with_a_meta_base_model():
    expected = _ensemble(torch)
    got = _ensemble(ptcore)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def _saved_and_loaded(L, save_lib):
    import io
    buf = io.BytesIO()
    save_lib.save({"t": save_lib.empty(2, 3, device="meta").t(),
                   "sd": save_lib.nn.Linear(2, 3, device="meta").state_dict()}, buf)
    buf.seek(0)
    r = L.load(buf, map_location="cpu")
    return _desc(r["t"], L), {k: _desc(v, L) for k, v in r["sd"].items()}


def test_save_load_keeps_meta_tensors():
    assert _saved_and_loaded(ptcore, ptcore) == _saved_and_loaded(torch, torch)


def test_load_torch_saved_meta_tensors():
    assert _saved_and_loaded(ptcore, torch) == _saved_and_loaded(torch, torch)


@pytest.mark.parametrize("what", ["__dlpack__", "__dlpack_device__"])
def test_dlpack_refuses_meta_as_torch(what):
    _same(lambda L: getattr(M(L, 2), what)())
