"""Do the ranks of a group agree on the call they make?  The check behind every collective,
``barrier`` and ``new_group``.

Each rank describes its call as a fixed-size descriptor: the operation, the dtype, the shape
(or the number of objects, or the first members of a new group), the root rank and reduction,
and a digest of any variable-length part.  The all-to-all family adds, for every peer, the
number of elements this rank sends it and expects from it.

Fast path: the ranks run ONE all-reduce of a single 8-byte word (bitwise XOR) on the group's
check communicator, concurrently with the operation itself.  Rank ``i`` of ``n`` contributes ::

    H(i, d_i) ^ H(i+1 mod n, d_i) ^ XOR_j h(i->j, sent_i[j]) ^ XOR_j h(j->i, expected_i[j])

The XOR over the ranks of the first two terms is ``XOR_i H(i, d_i) ^ H(i, d_{i-1})``, zero
when every rank passed the same descriptor; each pair ``a->b`` appears twice in the rest,
once from the sender and once from the receiver, and cancels when the count sent is the
count expected (``h`` is a bijection of the count).  A mismatch leaves a nonzero word (up
to a 2**-64 chance).  Every operation makes the same exchange (one uint64, BXOR), so ranks
that call *different* collectives still meet in it and find out, instead of hanging in
mismatched MPI calls.

Slow path, only after a mismatch: every rank saw the same nonzero word, so every rank then
all-gathers the descriptors (and for an all-to-all the counts) and builds the same error
message naming what each rank passed; every rank raises ``ValueError``.  Each step is a
non-blocking request polled by ``Work.wait`` under the group's timeout.
"""
import hashlib
import struct
import zlib

import numpy as np

from ptcore.distributed._buffers import dtype_code, dtype_name
from ptcore.distributed.reduce_op import ReduceOp

_DIMS = 8                      # dims kept in the descriptor (a longer shape is digested)
_K = 4 + _DIMS + 2             # op, dtype, ndim, numel, dims..., extra, digest
_PACK = struct.Struct(f"<{_K}q")
_RANK = struct.Struct("<q")
_MASK63 = (1 << 63) - 1
_MAX_DETAIL_RANKS = 512        # all-to-all counts are gathered for the message up to this size

# what the descriptor's "extra" field holds for each operation: (root's name, reduction?)
_EXTRA = {
    "all_reduce": (None, True), "reduce": ("dst", True), "broadcast": ("src", False),
    "gather": ("dst", False), "scatter": ("src", False), "reduce_scatter": (None, True),
    "reduce_scatter_tensor": (None, True), "broadcast_object_list": ("src", False),
    "gather_object": ("dst", False), "scatter_object_list": ("src", False),
}
_PAIRS = {"all_to_all_single": ("input_split_sizes", "output_split_sizes"),
          "all_to_all": ("input_tensor_list", "output_tensor_list")}
_OBJECTS = ("broadcast_object_list", "all_gather_object", "gather_object",
            "scatter_object_list")
_NAMES = ("all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
          "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all",
          "all_to_all_single", "barrier", "monitored_barrier", "new_group", *_OBJECTS)


def _opcode(name):
    # the same number on every rank, whatever order the ranks first call operations in
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


_OP_BY_CODE = {_opcode(n): n for n in _NAMES}


def _digest(values):
    return int.from_bytes(hashlib.blake2b(repr(tuple(values)).encode(), digest_size=8)
                          .digest(), "little") & _MASK63


def describe(name, dtype=None, shape=None, extra=0, members=None):
    """The descriptor of a call: a tuple of ``_K`` ints.  ``shape`` is a tensor's shape (or
    ``(count,)`` for a number of objects); ``members`` the global ranks of a new group."""
    if members is not None:
        members = tuple(int(r) for r in members)
        kept = list(members[:_DIMS]) + [-1] * (_DIMS - min(len(members), _DIMS))
        return (_opcode(name), 0, 1, len(members), *kept, 0, _digest(members))
    if shape is None:
        return (_opcode(name), dtype_code(dtype) if dtype is not None else 0, -1, 0,
                *([-1] * _DIMS), int(extra), 0)
    dims = tuple(int(s) for s in shape)
    numel = 1
    for s in dims:
        numel *= s
    kept = list(dims[:_DIMS]) + [-1] * (_DIMS - min(len(dims), _DIMS))
    return (_opcode(name), dtype_code(dtype) if dtype is not None else 0, len(dims),
            numel, *kept, int(extra), _digest(dims) if len(dims) > _DIMS else 0)


def extra_of(root=None, op=None):
    """The descriptor's "extra" field: root rank and reduction, as ``_EXTRA`` lists them."""
    return (root or 0) * 16 + (int(op) if op is not None else 0)


def _word(rank, blob):
    return int.from_bytes(hashlib.blake2b(_RANK.pack(rank) + blob, digest_size=8).digest(),
                          "little")


_C1, _C2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_SALT = np.uint64(0x9E3779B97F4A7C15)


def _mix(x):
    """splitmix64's finaliser over a uint64 array: a bijection, so distinct inputs never
    cancel in the XOR."""
    x = (x ^ (x >> _S30)) * _C1
    x = (x ^ (x >> _S27)) * _C2
    return x ^ (x >> _S31)


_M64 = (1 << 64) - 1
_SMALL_GROUP = 64              # up to this size, the pair terms in Python ints (no NumPy setup)


def _mix_int(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _pair_term(rank, n, sent, expected):
    """This rank's share of the all-to-all count check (see the module docstring); the
    same value in Python ints (small groups) as in NumPy."""
    if n <= _SMALL_GROUP:
        salt, w = int(_SALT), 0
        for j in range(n):
            w ^= _mix_int(_mix_int((rank * n + j + salt) & _M64) ^ (int(sent[j]) & _M64))
            w ^= _mix_int(_mix_int((j * n + rank + salt) & _M64) ^ (int(expected[j]) & _M64))
        return w
    return _pair_term_np(rank, n, sent, expected)


def _pair_term_np(rank, n, sent, expected):
    peers = np.arange(n, dtype=np.uint64)
    me = np.uint64(rank)
    nn = np.uint64(n)
    out_keys = _mix(me * nn + peers + _SALT)          # the pair rank -> j
    in_keys = _mix(peers * nn + me + _SALT)           # the pair j -> rank
    s = _mix(out_keys ^ np.asarray(sent, dtype=np.int64).astype(np.uint64))
    e = _mix(in_keys ^ np.asarray(expected, dtype=np.int64).astype(np.uint64))
    return int(np.bitwise_xor.reduce(s) ^ np.bitwise_xor.reduce(e))


def word(rank, n, desc, pairs=None):
    """The uint64 array (length 1, read-only) that rank ``rank`` of ``n`` contributes."""
    blob = _PACK.pack(*desc)
    w = _word(rank, blob) ^ _word((rank + 1) % n, blob)
    if pairs is not None:
        w ^= _pair_term(rank, n, pairs[0], pairs[1])
    arr = np.array([w], dtype=np.uint64)
    arr.flags.writeable = False
    return arr


def call(pg, name, shape=None, extra=0, members=None, dtype=None):
    """(descriptor, word) of a call on ``pg`` (see ``describe``), not cached."""
    desc = describe(name, dtype, shape, extra, members)
    return desc, word(pg.rank(), pg.size(), desc)


def pair_call(pg, name, dtype, sent, expected, rows=(1, 1)):
    """The ``Check`` arguments of an all-to-all: besides the dtype, the number of elements
    this rank sends to each rank and expects from each (``rows``: elements per row of the
    input and the output, for the error message).  The descriptor's part is cached."""
    key = (name, dtype, "pairs")
    hit = pg._calls.get(key)
    if hit is None:
        desc = describe(name, dtype)
        hit = pg._calls[key] = (desc, int(word(pg.rank(), pg.size(), desc)[0]))
    desc, base = hit
    w = np.array([base ^ _pair_term(pg.rank(), pg.size(), sent, expected)], dtype=np.uint64)
    return desc, w, (sent, expected), rows


def tensor_call(pg, name, t=None, extra=0):
    """(descriptor, word) of a collective on tensor ``t`` (None: no tensor), cached per
    group: the common case costs one dictionary look-up."""
    cache = pg._calls
    key = (name, None, None, extra) if t is None else (name, t.dtype, t.shape, extra)
    hit = cache.get(key)
    if hit is None:
        desc = describe(name, key[1], key[2], extra)
        hit = (desc, word(pg.rank(), pg.size(), desc))
        if len(cache) > 4096:
            cache.clear()
        cache[key] = hit
    return hit


class Check:
    """One agreement check in flight on ``pg``'s check communicator.

    ``test()`` is True once the ranks agree and raises ``ValueError`` once they are known
    not to; ``request`` is the request it waits on now."""

    __slots__ = ("pg", "name", "desc", "pairs", "rows", "request", "_out", "_phase",
                 "_descs", "_counts")

    def __init__(self, pg, name, desc, word, pairs=None, rows=(1, 1)):
        self.pg, self.name, self.desc, self.pairs, self.rows = pg, name, desc, pairs, rows
        self._out = np.empty(1, dtype=np.uint64)
        self._phase = 0
        self._descs = self._counts = None
        self.request = pg._meta.Iallreduce(word, self._out, op=pg._MPI.BXOR)

    def test(self):
        if not self.request.Test():
            return False
        if self._phase == 0:
            if self._out[0] == 0:
                return True
            # a mismatch, seen by every rank alike: gather what each rank passed
            n = self.pg.size()
            self._descs = np.empty(n * _K, dtype=np.int64)
            self._phase = 1
            self.request = self.pg._meta.Iallgather(np.array(self.desc, dtype=np.int64),
                                                    self._descs)
            return self.test()
        descs = [tuple(int(v) for v in row) for row in self._descs.reshape(-1, _K)]
        if self._phase == 1:
            n = self.pg.size()
            name = _OP_BY_CODE.get(descs[0][0])
            if (name in _PAIRS and all(d == descs[0] for d in descs)
                    and n <= _MAX_DETAIL_RANKS):
                # every rank is in the same all-to-all: gather the counts to name the pairs
                self._phase = 2
                mine = np.array([*self.rows, *self.pairs[0], *self.pairs[1]], dtype=np.int64)
                self._counts = np.empty(n * mine.size, dtype=np.int64)
                self.request = self.pg._meta.Iallgather(mine, self._counts)
                return self.test()
            raise ValueError(self._message(descs, None))
        raise ValueError(self._message(descs, self._counts.reshape(self.pg.size(), -1)))

    # ------------------------------------------------------------------- the message
    def _message(self, descs, counts):
        pg = self.pg
        ranks = pg._ranks
        tail = f" (this is rank {pg._global_rank})"
        names = [_OP_BY_CODE.get(d[0], f"operation #{d[0]}") for d in descs]
        if len(set(names)) > 1:
            return (f"{self.name}: the ranks of the group called different operations: "
                    f"{_by_rank(ranks, names)}; every rank of a group must make the same "
                    f"calls in the same order{tail}")
        name = names[0]
        if name in _PAIRS and all(d == descs[0] for d in descs):
            if counts is not None:
                return self._pairs_message(name, counts) + tail
            return (f"{name}: the ranks of the group disagree on the {_PAIRS[name][0]} and "
                    f"{_PAIRS[name][1]} (what rank a sends to rank b must be what rank b "
                    f"expects from rank a; the group of {len(ranks)} ranks is too large to "
                    f"list them){tail}")
        if name == "new_group":
            what, parts = "member list", [_members(d) for d in descs]
        else:
            e = 4 + _DIMS
            fields = [f for f, key in (("dtype", lambda d: d[1]),
                                       ("shape", lambda d: d[2:e] + d[_K - 1:]),
                                       ("root", lambda d: d[e] // 16),
                                       ("op", lambda d: d[e] % 16))
                      if len({key(d) for d in descs}) > 1]
            what = " and ".join(_field_name(name, f) for f in fields)
            parts = [_call(name, d, ranks) for d in descs]
        return (f"{name}: the ranks of the group disagree on the {what or 'arguments'}: "
                f"{_by_rank(ranks, parts)}; every rank must call the same collective with "
                f"matching arguments{tail}")

    def _pairs_message(self, name, counts):
        ranks = self.pg._ranks
        n = len(ranks)
        rows_in, rows_out = counts[:, 0], counts[:, 1]
        sent, expected = counts[:, 2:2 + n], counts[:, 2 + n:]
        bad = []
        for a in range(n):
            for b in range(n):
                if sent[a, b] != expected[b, a]:
                    bad.append((a, b, int(sent[a, b]), int(expected[b, a])))
        inp, outp = _PAIRS[name]
        lines = []
        for a, b, s, e in bad[:4]:
            ga, gb = ranks[a], ranks[b]
            if name == "all_to_all_single":
                lines.append(f"rank {ga} sends {_rows(s, rows_in[a])} to rank {gb} "
                             f"({inp}[{b}]), which expects {_rows(e, rows_out[b])} "
                             f"({outp}[{a}])")
            else:
                lines.append(f"rank {ga}'s {inp}[{b}] has {_plural(s, 'element')} but rank "
                             f"{gb}'s {outp}[{a}] has {e}")
        more = f"; and {len(bad) - 4} more pairs" if len(bad) > 4 else ""
        return (f"{name}: the ranks' split sizes do not match: {'; '.join(lines)}{more}; "
                f"what rank a sends to rank b must be what rank b expects from rank a")


def _plural(k, what):
    return f"{k} {what}{'s' if k != 1 else ''}"


def _rows(elements, per_row):
    per_row = int(per_row)
    if per_row == 1:
        return _plural(elements, "row")
    if per_row > 0 and elements % per_row == 0:
        return f"{_plural(elements // per_row, 'row')} ({_plural(elements, 'element')})"
    return _plural(elements, "element")


def _field_name(name, field):
    if field == "root":
        return f"{_EXTRA.get(name, ('root', False))[0] or 'root'} rank"
    if field == "op":
        return "reduction op"
    if field == "shape" and name in _OBJECTS:
        return "number of objects"
    return field


def _shape(d):
    ndim = d[2]
    dims = [v for v in d[4:4 + _DIMS]][:max(ndim, 0)]
    text = ", ".join(str(v) for v in dims) + ("," if ndim == 1 else "")
    return f"({text}{', ...' if ndim > _DIMS else ''})"


def _call(name, d, ranks):
    extra = d[4 + _DIMS]
    root, red = _EXTRA.get(name, (None, False))
    bits = []
    if name in _OBJECTS:
        if d[2] >= 0:
            bits.append(f"{d[3]} objects")
    elif name in _PAIRS:
        bits.append(f"{dtype_name(d[1])} tensors")
    elif d[2] >= 0:
        bits.append(f"a {dtype_name(d[1])} tensor of shape {_shape(d)}")
    if root:
        r = extra // 16
        bits.append(f"{root} {ranks[r] if 0 <= r < len(ranks) else r}")
    if red:
        try:
            bits.append(f"op {ReduceOp(extra % 16).name}")
        except ValueError:
            bits.append(f"op #{extra % 16}")
    return ", ".join(bits) or name


def _members(d):
    n = d[3]
    return "[" + ", ".join(str(v) for v in d[4:4 + min(n, _DIMS)]) + \
        (", ..." if n > _DIMS else "") + f"] ({n} rank{'s' if n != 1 else ''})"


def _by_rank(ranks, values):
    """``rank 0: X; rank 1: Y``, ranks with the same value grouped."""
    groups = {}
    for r, v in zip(ranks, values):
        groups.setdefault(v, []).append(r)
    parts = []
    for v, rs in list(groups.items())[:6]:
        who = (f"rank {rs[0]}" if len(rs) == 1 else
               "ranks " + ", ".join(map(str, rs[:8])) + (", ..." if len(rs) > 8 else ""))
        parts.append(f"{who}: {v}")
    if len(groups) > 6:
        parts.append(f"and {len(groups) - 6} other variants")
    return "; ".join(parts)
