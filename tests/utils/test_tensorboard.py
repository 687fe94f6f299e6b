"""ptcore.utils.tensorboard.SummaryWriter writes event files through the
tensorboard package: each test makes the same calls on ptcore's writer and
on torch.utils.tensorboard's, reads both directories back with
tensorboard's own EventAccumulator and compares tags, steps and values
(histogram buckets, PNG and WAV bytes, plugin data, graph nodes, projector
files).  Skips where tensorboard (or torch, the oracle) is absent; the
tensorboardX fallback is checked in a subprocess that hides tensorboard."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import ptcore

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from ptcore.utils.tensorboard import SummaryWriter  # noqa: E402

# the directory holding the ptcore this test imported: subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
KEEP_ALL = {"scalars": 0, "histograms": 0, "images": 0, "audio": 0, "tensors": 0,
            "distributions": 0, "compressedHistograms": 0}
RNG = np.random.default_rng(0)
DATA = {"w": RNG.standard_normal(1000).astype(np.float32),
        "img": RNG.random((3, 8, 5)).astype(np.float32),
        "imgs": RNG.random((2, 3, 4, 6)).astype(np.float32),
        "hwc": RNG.random((4, 6, 3)).astype(np.float32),
        "u8": RNG.integers(0, 256, (5, 7), dtype=np.uint8),
        "labels": RNG.integers(0, 2, 100).astype(np.int64),
        "preds": RNG.random(100).astype(np.float32),
        "sound": np.sin(np.linspace(0, 60, 800)).astype(np.float32),
        "emb": RNG.standard_normal((6, 3)).astype(np.float32),
        "faces": RNG.random((6, 1, 4, 4)).astype(np.float32)}


def lib_tensors(L):
    return {k: L.from_numpy(v.copy()) for k, v in DATA.items()}


def accumulate(path):
    ea = EventAccumulator(str(path), size_guidance=KEEP_ALL)
    ea.Reload()
    return ea


def both(tmp_path, calls, **kw):
    """Run ``calls(writer, L, tensors)`` with ptcore's and torch's writers in
    their own directories; returns the two directories."""
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    dirs = []
    for L, W in ((ptcore, SummaryWriter), (torch, TorchWriter)):
        d = tmp_path / L.__name__
        with W(str(d), **kw) as w:
            calls(w, L, lib_tensors(L))
        dirs.append(d)
    return dirs


def test_scalars_histograms_text_and_tensors_match_torchs(tmp_path):
    def calls(w, L, t):
        for step in range(3):
            w.add_scalar("loss", L.tensor(1.5 / (step + 1)), step)
            w.add_scalar("lr", 0.1 * step, global_step=step, walltime=1000.0 + step)
            w.add_scalar("np", np.float64(step) / 3, step, new_style=True)
            w.add_scalar("double", step / 7, step, new_style=True, double_precision=True)
        w.add_histogram("weights", t["w"], 7)
        w.add_histogram("auto", t["w"], 8, bins="auto", max_bins=10)
        w.add_histogram("ints", L.arange(10), 9, bins=5)
        w.add_histogram_raw("raw", 0.0, 2.0, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], global_step=4)
        w.add_text("note", "hello *ptcore*", 2)
        w.add_tensor("tensor", L.arange(6.0).reshape(2, 3), 5)
        w.add_tensor("halfs", L.tensor([1.5, -2.0], dtype=L.float16), 6)
    ours, theirs = map(accumulate, both(tmp_path, calls))
    assert ours.Tags() == theirs.Tags()
    for tag in ours.Tags()["scalars"]:
        got = [(e.step, e.value) for e in ours.Scalars(tag)]
        assert got == [(e.step, e.value) for e in theirs.Scalars(tag)], tag
    assert [e.wall_time for e in ours.Scalars("lr")] == [1000.0, 1001.0, 1002.0]
    assert [e.value for e in ours.Scalars("loss")] == pytest.approx([1.5, 0.75, 0.5])
    for tag in ours.Tags()["histograms"]:
        (a,), (b,) = ours.Histograms(tag), theirs.Histograms(tag)
        assert a.step == b.step and a.histogram_value == b.histogram_value, tag
    h = ours.Histograms("weights")[0].histogram_value
    assert h.num == 1000 and sum(h.bucket) == 1000
    assert h.min == pytest.approx(float(DATA["w"].min()))
    for tag in ours.Tags()["tensors"]:
        a, b = ours.Tensors(tag), theirs.Tensors(tag)
        assert [(e.step, e.tensor_proto) for e in a] == [(e.step, e.tensor_proto) for e in b]
        assert ours.SummaryMetadata(tag) == theirs.SummaryMetadata(tag), tag
    assert ours.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello *ptcore*"]


def test_images_figures_audio_and_boxes_match_torchs(tmp_path):
    pytest.importorskip("PIL")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure():
        fig = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot([0, 1, 2], [2, 0, 1])
        return fig

    def calls(w, L, t):
        w.add_image("chw", t["img"], 4)
        w.add_images("batch", t["imgs"], 5)
        w.add_image("hwc", t["hwc"], 6, dataformats="HWC")
        w.add_image("gray_u8", t["u8"], 7, dataformats="HW")
        w.add_image_with_boxes("boxes", t["img"], L.tensor([[1.0, 1.0, 4.0, 6.0]]), 8,
                               labels=["cat"])
        w.add_figure("figure", figure(), 9)
        w.add_figure("figures", [figure(), figure()], 10)
        w.add_audio("sound", t["sound"], 11, sample_rate=8000)
    ours, theirs = map(accumulate, both(tmp_path, calls))
    assert ours.Tags() == theirs.Tags()
    for tag in ours.Tags()["images"]:
        a, b = ours.Images(tag), theirs.Images(tag)
        assert [(e.step, e.width, e.height, e.encoded_image_string) for e in a] == \
            [(e.step, e.width, e.height, e.encoded_image_string) for e in b], tag
    assert ours.Images("chw")[0].encoded_image_string.startswith(b"\x89PNG")
    assert (ours.Images("chw")[0].height, ours.Images("chw")[0].width) == (8, 5)
    (a,), (b,) = ours.Audio("sound"), theirs.Audio("sound")
    assert a.encoded_audio_string == b.encoded_audio_string and a.sample_rate == 8000


def test_hparams_pr_curves_custom_scalars_and_meshes_match_torchs(tmp_path):
    pytest.importorskip("tensorboard.plugins.mesh")

    def calls(w, L, t):
        w.add_hparams({"lr": 0.01, "bs": 32, "opt": "adam", "amp": True, "t": L.tensor([0.5])},
                      {"hparam/acc": L.tensor(0.8), "hparam/loss": 0.25}, run_name="h",
                      hparam_domain_discrete={"opt": ["adam", "sgd"]})
        w.add_pr_curve("pr", t["labels"], t["preds"], 3, num_thresholds=50)
        w.add_pr_curve_raw("pr_raw", [3, 2], [1, 1], [0, 1], [0, 1], [0.75, 0.66], [1.0, 0.66],
                           4, num_thresholds=2)
        w.add_custom_scalars({"train": {"loss": ["Multiline", ["loss/a", "loss/b"]],
                                        "band": ["Margin", ["m", "lo", "hi"]]}})
        verts = L.tensor([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]])
        w.add_mesh("mesh", verts, colors=L.tensor([[[255, 0, 0]] * 3]),
                   faces=L.tensor([[[0, 1, 2]]]), global_step=2)
    dirs = both(tmp_path, calls)
    ours, theirs = map(accumulate, dirs)
    assert ours.Tags() == theirs.Tags()
    for tag in ours.Tags()["tensors"]:
        assert [(e.step, e.tensor_proto) for e in ours.Tensors(tag)] == \
            [(e.step, e.tensor_proto) for e in theirs.Tensors(tag)], tag
        assert ours.SummaryMetadata(tag) == theirs.SummaryMetadata(tag), tag
    hours, htheirs = accumulate(dirs[0] / "h"), accumulate(dirs[1] / "h")
    assert hours.Tags() == htheirs.Tags()
    assert hours.PluginTagToContent("hparams") == htheirs.PluginTagToContent("hparams")
    assert [e.value for e in hours.Scalars("hparam/acc")] == [pytest.approx(0.8)]


def test_add_scalars_writes_one_run_per_key_as_torch(tmp_path):
    def calls(w, L, t):
        w.add_scalars("acc", {"train": L.tensor(0.9), "val": 0.8}, 1)
        w.add_scalars("acc", {"train": 0.95, "val": 0.85}, 2)
    dirs = both(tmp_path, calls, filename_suffix=".x")
    runs = [sorted(n for n in os.listdir(d) if not n.startswith("events.out")) for d in dirs]
    assert runs[0] == runs[1] == ["acc_train", "acc_val"]
    for sub in ("acc_train", "acc_val"):
        a, b = accumulate(dirs[0] / sub), accumulate(dirs[1] / sub)
        assert [(e.step, e.value) for e in a.Scalars("acc")] == \
            [(e.step, e.value) for e in b.Scalars("acc")]
        assert glob.glob(str(dirs[0] / sub / "events.out.tfevents.*.x"))


def make_net(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU())
            self.head = L.nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.body(x)).softmax(-1)
    return Net()


def test_graph_of_a_traced_model_matches_torchs_layout(tmp_path):
    def calls(w, L, t):
        net = make_net(L)
        w.add_graph(net, L.ones(5, 3))
        assert net.training                      # restored after the trace, as torch
    ours, theirs = (accumulate(d).Graph() for d in both(tmp_path, calls))

    def summary(g):
        """(scope, op, output shape) of the op nodes, the parameter nodes, the IO nodes."""
        ops = sorted((n.name.rsplit("/", 1)[0], n.op,
                      tuple(d.size for d in n.attr["_output_shapes"].list.shape[0].dim))
                     for n in g.node if n.op.startswith("aten::"))
        params = sorted(n.name.rsplit("/", 1)[0] for n in g.node if n.op == "prim::GetAttr")
        io = sorted((n.name, tuple(d.size for d in n.attr["_output_shapes"].list.shape[0].dim))
                    for n in g.node if n.op == "IO Node")
        return ops, params, io
    assert summary(ours) == summary(theirs)
    ops = summary(ours)[0]
    assert ("Net/Sequential[body]/Linear[0]", "aten::linear", (5, 4)) in ops
    assert ("Net/Linear[head]", "aten::linear", (5, 2)) in ops
    assert ("Net", "aten::softmax", (5, 2)) in ops
    # the edges: the output node reads the softmax, the head reads the ReLU
    by_name = {n.name: n for n in ours.node}
    (out,) = [n for n in ours.node if n.name == "output/output.1"]
    assert by_name[out.input[0]].op == "aten::softmax"


def test_graph_errors_are_the_traces(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    errors = []
    for L, W in ((ptcore, SummaryWriter), (torch, TorchWriter)):
        class ReturnsANumber(L.nn.Module):
            def forward(self, x):
                return 3
        with W(str(tmp_path / L.__name__)) as w:
            with pytest.raises(Exception) as info:
                w.add_graph(ReturnsANumber(), L.ones(2))
        errors.append((type(info.value), str(info.value).split(" (")[0]))
    assert issubclass(errors[0][0], errors[1][0]) and errors[0][1] == errors[1][1]
    assert "Only tensors, lists, tuples of tensors" in errors[0][1]


def test_embedding_files_match_torchs(tmp_path):
    pytest.importorskip("PIL")

    def calls(w, L, t):
        w.add_embedding(t["emb"], metadata=list("abcdef"), label_img=t["faces"], global_step=3,
                        tag="points/1")
        w.add_embedding(t["emb"][:2], metadata=[["a", 1], ["b", 2]], metadata_header=["n", "k"],
                        global_step=4)
    ours, theirs = both(tmp_path, calls)
    files = sorted(os.path.relpath(p, ours) for p in glob.glob(str(ours / "**"), recursive=True)
                   if os.path.isfile(p) and "events.out" not in p)
    assert files == sorted(os.path.relpath(p, theirs) for p in glob.glob(str(theirs / "**"),
                                                                         recursive=True)
                           if os.path.isfile(p) and "events.out" not in p)
    assert "projector_config.pbtxt" in files and any(f.endswith("sprite.png") for f in files)
    for f in files:
        assert (ours / f).read_bytes() == (theirs / f).read_bytes(), f


def test_purge_step_suffix_flush_close_and_default_log_dir(tmp_path, monkeypatch):
    log_dir = tmp_path / "run"
    w = SummaryWriter(str(log_dir), purge_step=5, filename_suffix=".sfx", flush_secs=1)
    w.add_scalar("x", 1.0, 5)
    w.flush()
    (first,) = glob.glob(str(log_dir / "events.out.tfevents.*.sfx"))
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    events = list(EventFileLoader(first).Load())
    assert events[0].file_version == "brain.Event:2"
    assert any(e.step == 5 and e.HasField("session_log") and
               e.session_log.status == e.session_log.START for e in events)
    w.close()
    w.close()                                   # a second close does nothing
    w.add_scalar("x", 2.0, 6)                   # ... and a later call opens a new file
    w.close()
    assert len(glob.glob(str(log_dir / "events.out.tfevents.*.sfx"))) == 2
    assert [(e.step, e.value) for e in accumulate(log_dir).Scalars("x")] == [(5, 1.0), (6, 2.0)]
    monkeypatch.chdir(tmp_path)
    import socket
    d = SummaryWriter(comment="_exp")
    assert d.log_dir.startswith("runs" + os.sep) and d.log_dir.endswith(socket.gethostname() +
                                                                         "_exp")
    assert d.get_logdir() == d.log_dir and os.path.isdir(d.log_dir)
    d.close()


def test_bad_values_raise_torchs_errors(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("bad", ptcore.ones(3))
        with pytest.raises(TypeError, match="dictionary"):
            w.add_hparams([1], {})
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("empty", ptcore.ones(0))
        with pytest.raises(AssertionError, match="size of input tensor and input format"):
            w.add_image("img", ptcore.ones(3, 4), 0)
        with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
            w.add_histogram("obj", object())


def _run(code, block_tensorboard=False):
    prelude = "import sys; sys.modules['tensorboard'] = None\n" if block_tensorboard else ""
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                       env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_import_does_not_import_torch():
    code = ("import sys, ptcore.utils.tensorboard as tb; "
            "print('torch' in sys.modules and sys.modules['torch'] is not None)")
    assert _run(code) == "False"


def test_tensorboardx_is_the_fallback_without_tensorboard(tmp_path):
    pytest.importorskip("tensorboardX")
    code = f"""
import ptcore
from ptcore.utils.tensorboard import SummaryWriter
print(SummaryWriter.__module__)
with SummaryWriter({str(tmp_path)!r}) as w:
    w.add_scalar("loss", ptcore.tensor(0.25), 3)
"""
    assert _run(code, block_tensorboard=True) == "ptcore.utils.tensorboard._tensorboardx_writer"
    assert [(e.step, e.value) for e in accumulate(tmp_path).Scalars("loss")] == [(3, 0.25)]
