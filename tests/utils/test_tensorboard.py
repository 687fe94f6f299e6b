"""ptcore.utils.tensorboard.SummaryWriter: the event files it writes read back
(TFRecord framing with CRCs, Event protos) with the values written.  Skips
when the optional tensorboardX package is absent."""
import glob
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import ptcore

pytest.importorskip("tensorboardX")
from tensorboardX.crc32c import crc32c  # noqa: E402
from tensorboardX.proto import event_pb2  # noqa: E402

from ptcore.utils.tensorboard import SummaryWriter  # noqa: E402

# the directory holding the ptcore this test imported (the source tree with its
# compiled modules, or site-packages after `pip install .`): subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


def _masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xffffffff


def _read_events(path):
    """Parse a TFRecord event file, checking both CRCs of every record."""
    events = []
    with open(path, "rb") as fh:
        data = fh.read()
    pos = 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert len_crc == _masked(crc32c(header))
        body = data[pos + 12:pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert body_crc == _masked(crc32c(body))
        ev = event_pb2.Event()
        ev.ParseFromString(body)
        events.append(ev)
        pos += 16 + length
    return events


def _values(log_dir):
    files = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    assert len(files) == 1, files
    out = []
    for ev in _read_events(files[0]):
        for v in ev.summary.value:
            out.append((ev.step, v))
    return out


def test_scalars_histogram_text_image_read_back(tmp_path):
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        assert w.get_logdir() == w.log_dir == log_dir
        for step in range(3):
            w.add_scalar("loss", ptcore.tensor(1.5 / (step + 1)), step)
            w.add_scalar("lr", 0.1 * step, global_step=step)
        x = ptcore.randn(1000)
        w.add_histogram("weights", x, 7)
        w.add_text("note", "hello ptcore", 2)
    vals = _values(log_dir)
    loss = [(s, v.simple_value) for s, v in vals if v.tag == "loss"]
    assert loss == [(0, pytest.approx(1.5)), (1, pytest.approx(0.75)), (2, pytest.approx(0.5))]
    assert [(s, round(v.simple_value, 6)) for s, v in vals if v.tag == "lr"] == \
        [(0, 0.0), (1, 0.1), (2, 0.2)]
    (step, h), = [(s, v.histo) for s, v in vals if v.tag == "weights"]
    xn = x.numpy().astype(np.float64)
    assert step == 7 and h.num == 1000
    assert h.min == pytest.approx(xn.min()) and h.max == pytest.approx(xn.max())
    assert h.sum == pytest.approx(xn.sum(), rel=1e-5, abs=1e-4)
    assert h.sum_squares == pytest.approx((xn ** 2).sum(), rel=1e-5)
    assert sum(h.bucket) == 1000
    (text,) = [v for s, v in vals if v.tag.startswith("note")]
    assert b"hello ptcore" in text.tensor.string_val[0]


def test_images_read_back(tmp_path):
    pytest.importorskip("PIL")          # tensorboardX (like torch) encodes PNGs with Pillow
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        img = ptcore.zeros(3, 8, 5)
        img[0] = 1.0
        w.add_image("red", img, 4)
        w.add_images("batch", ptcore.rand(2, 3, 4, 6), 5)
        w.add_image("hwc", ptcore.rand(4, 6, 3), 6, dataformats="HWC")
    vals = _values(log_dir)
    (im,) = [v.image for s, v in vals if v.tag == "red"]
    assert (im.height, im.width, im.colorspace) == (8, 5, 3)
    assert im.encoded_image_string.startswith(b"\x89PNG")
    (ims,) = [v.image for s, v in vals if v.tag == "batch"]
    assert ims.colorspace == 3 and ims.encoded_image_string.startswith(b"\x89PNG")
    (hwc,) = [v.image for s, v in vals if v.tag == "hwc"]
    assert (hwc.height, hwc.width) == (4, 6)


def test_add_scalars_and_hparams(tmp_path):
    log_dir = str(tmp_path / "run")
    w = SummaryWriter(log_dir=log_dir, filename_suffix=".x")
    w.add_scalars("acc", {"train": ptcore.tensor(0.9), "val": 0.8}, 1)
    w.add_hparams({"lr": 0.01, "bs": 32}, {"hparam/acc": ptcore.tensor(0.8)}, run_name="h")
    w.flush()
    w.close()
    subs = sorted(os.listdir(log_dir))
    assert "acc_train" in subs and "acc_val" in subs        # torch's run names
    train_dir = os.path.join(log_dir, "acc_train")
    (step, v), = _values(train_dir)
    assert step == 1 and v.tag == "acc" and v.simple_value == pytest.approx(0.9)
    assert glob.glob(os.path.join(log_dir, "*.x"))
    hdir = os.path.join(log_dir, "h")
    assert [v.simple_value for _, v in _values(hdir) if v.tag == "hparam/acc"] == \
        [pytest.approx(0.8)]


def test_errors_and_default_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.log_dir.startswith("runs") and w.log_dir.endswith("_exp")
    with pytest.raises(AssertionError, match="one element"):
        w.add_scalar("bad", ptcore.ones(3))
    with pytest.raises(NotImplementedError, match="add_graph"):
        w.add_graph(ptcore.nn.Linear(2, 2), ptcore.ones(1, 2))
    w.close()


def test_import_does_not_import_torch():
    code = ("import sys, ptcore.utils.tensorboard as tb; "
            "print('torch' in sys.modules and sys.modules['torch'] is not None)")
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
