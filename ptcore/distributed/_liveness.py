"""Is a peer rank's process still running?  (Ranks on the same node only.)

At ``init_process_group`` every rank publishes its node identity, process id and process start
time.  While an operation waits, ``Work.wait`` asks from time to time whether the peers on this
node are still alive, so that a rank that died (killed, crashed, exited early) makes the others
fail at once with an error naming it, instead of only when the process group's timeout passes.
The start time guards against a recycled process id.  Peers on other nodes cannot be checked
this way; for them the timeout is the bound.
"""
import os
import socket

_PROC = os.path.isdir("/proc/self")


def node_id():
    """This machine, as seen by process ids: host name plus the pid namespace (containers)."""
    try:
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        ns = 0
    return f"{socket.gethostname()}/{ns}"


def _start_time(pid):
    """The process's start time in clock ticks since boot (Linux), None when unknown,
    or False when the process does not exist or is a zombie."""
    if not _PROC:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may contain spaces
    fields = stat[stat.rfind(b")") + 2:].split()
    if not fields or fields[0] in (b"Z", b"X"):
        return False
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def identity():
    """(node, pid, start time) of this process."""
    pid = os.getpid()
    start = _start_time(pid)
    return node_id(), pid, (start if isinstance(start, int) else None)


def alive(pid, start):
    """False when process ``pid`` (started at ``start``) has certainly ended."""
    now = _start_time(pid)
    if now is False:
        return False
    if now is not None and start is not None:
        return now == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True
