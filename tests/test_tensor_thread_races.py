"""One tensor used from two threads at once: one thread moves its memory or
changes its geometry (``resize_``, storage ``resize_``, ``set_``, ``.data =``,
``swap_tensors``, in-place views), the other reads or writes it through many
ops.  Any value it held, or an exception, is fine; a crash is not (issue 61, 4:
``t.resize_`` against ``t.clone()`` crashed 3 runs of 3).

The guard under test: kernels that release the GIL run inside a *kernel
section*, and whatever moves a tensor's memory or geometry first waits until
no other thread is inside one (``ptcore._tensor._wait_for_readers``); the
allocations between reading a tensor's shape and using it keep the GIL.

Each writer runs in a fresh interpreter against every reader for a bounded
time (a deadline, not a count: the run is short on a loaded machine too), so a
crash fails that writer's test with the pair that was running.  Each reader runs
once before its race starts: a first call's imports, under a writer that keeps
the GIL busy, took minutes on a loaded machine (every file read waiting for the
GIL's switch interval).
"""
import os
import subprocess
import sys
import textwrap

import pytest

import ptcore

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))

WRITERS = {
    "resize_": "t.resize_(1000 + (i % 7) * 300); t.resize_(37, 11) if i % 3 else t.resize_(500)",
    "storage_resize_": "t.untyped_storage().resize_((i % 5) * 1600)",
    "set_": "t.set_(ptcore.zeros(100 + i % 900))",
    "data": "t.data = ptcore.ones(3, 50 + i % 300)",
    "swap_tensors": "ptcore.utils.swap_tensors(t, ptcore.full((200 + i % 50,), 2.))",
    "inplace_views": "t.unsqueeze_(0); t.squeeze_(0); t.t_() if t.dim() == 2 else None",
}

READERS = [
    "t.clone()", "t.reshape(-1)[::2].contiguous()", "t + 1", "t.add_(1)", "t.sum()",
    "t.fill_(3)", "t.copy_(ptcore.ones(t.shape))", "o.copy_(t.reshape(-1)[:10])", "t.tolist()",
    "t.reshape(-1)[ptcore.tensor([0, 1, 2])]", "t.reshape(-1)[0:5] = 7.",
    "t.reshape(-1)[:100].reshape(10, 10) @ t.reshape(-1)[:100].reshape(10, 10)",
    "t.uniform_()", "t.normal_()", "t.bernoulli_(0.5)", "ptcore.cat([t.reshape(-1)] * 2)",
    "t.reshape(-1).sort()", "t.numpy().sum()", "t.double()", "t.reshape(-1)[0].item()",
    "t.reshape(-1).cumsum(0)", "t.softmax(-1)", "t.mean(-1)", "ptcore.where(t > 0, t, 0.)",
    "repr(t)", "ptcore.mul(t, 2, out=t)", "t.abs_()", "t.max()", "t.reshape(-1).topk(3)",
    "ptcore.nn.functional.relu(t)", "t.to(ptcore.float16)",
]

_SCRIPT = """
import sys, threading, time
import ptcore
sys.setswitchinterval(1e-4)   # the threads take turns often: more interleavings
writer_code, readers, seconds = sys.argv[1], sys.argv[2:-1], float(sys.argv[-1])
for rcode in readers:
    t = ptcore.arange(1000.)
    o = ptcore.zeros(10)
    stop = []
    try:    # first calls import and build what the op needs: not under the race,
        exec(rcode, {"ptcore": ptcore, "t": t, "o": o})  # where a busy thread holding
    except Exception:                                    # the GIL makes every file read
        pass                                             # of an import wait its turn
    def write():
        i = 0
        while not stop:
            i += 1
            try:
                exec(writer_code, {"ptcore": ptcore, "t": t, "i": i})
            except Exception:
                pass
    th = threading.Thread(target=write)
    print("pair", rcode, flush=True)
    th.start()
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            try:
                exec(rcode, {"ptcore": ptcore, "t": t, "o": o})
            except Exception:
                pass
    finally:
        stop.append(1)
        th.join()
print("done", flush=True)
"""


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_writer_racing_every_reader_never_crashes(writer):
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", _SCRIPT, WRITERS[writer], *READERS, "0.1"],
                       capture_output=True, text=True, timeout=600, env=env)
    pairs = [line[5:] for line in p.stdout.splitlines() if line.startswith("pair ")]
    assert p.returncode == 0 and p.stdout.rstrip().endswith("done"), (
        f"{writer} against {pairs[-1] if pairs else '?'}: rc {p.returncode}\n{p.stderr[-2000:]}")
    assert len(pairs) == len(READERS)


def test_a_writer_waits_for_a_kernel_section_of_another_thread():
    """The wait itself: while another thread is inside a kernel section (a long
    nogil copy), Storage.resize_ does not free the block it reads; it returns
    once the section is over and the copy saw the old memory whole."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import threading
        import ptcore
        ref = ptcore.arange(2.0 ** 22, dtype=ptcore.float64)
        src = ref.clone()
        ptcore.set_num_threads(1)
        done = []
        def copy():
            for _ in range(30):
                done.append(ptcore.equal(src.clone(), ref))
        th = threading.Thread(target=copy)
        th.start()
        n = 0
        while th.is_alive():
            src.untyped_storage().resize_(src.untyped_storage().nbytes())   # moves the block
            n += 1
        th.join()
        print(n > 0, all(done), len(done), ptcore._tensor._kernel_sections_running())
    """)], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["True", "True", "30", "0"]
