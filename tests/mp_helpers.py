"""Process targets for tests/test_multiprocessing.py (importable by spawned children)."""
import os
import signal

import ptcore


def child_add_and_reply(q_in, q_out, done):
    t = q_in.get(timeout=30)
    t.add_(1)
    made = ptcore.arange(5, dtype=ptcore.float32)
    q_out.put(made)
    done.wait(30)
    made.fill_(42)          # the parent sees this write: memory is shared
    q_out.put("written")
    done.clear()
    done.wait(30)


def child_arg_write(t, value):
    t.fill_(value)


def child_pipe(conn):
    t = conn.recv()
    t.mul_(-1)
    conn.send("ok")
    conn.recv()


def child_views(q_in, q_out):
    a, b = q_in.get(timeout=30)
    b[0] = 123.0            # b views a's storage in the sender: a sees it
    q_out.put(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def child_hold_then_die(q_in, q_out):
    t = q_in.get(timeout=30)
    q_out.put(float(t.sum()))
    q_out.close()
    q_out.join_thread()      # flushed: now die while still mapping the tensor
    os.kill(os.getpid(), signal.SIGKILL)


def spawn_fn(i, t):
    t[i] = i + 10


def spawn_fail(i):
    if i == 1:
        raise ValueError("boom in process 1")
