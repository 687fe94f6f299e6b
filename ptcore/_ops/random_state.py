"""The bytes of a CPU generator's state, in the layout of torch's CPU generator.

torch's ``get_rng_state()`` is a 5056-byte ``CPUGeneratorImplState``: its
mt19937 engine (``the_initial_seed`` u64, ``left`` i32, ``seeded`` i32,
``next`` u64, 624 state words as u64), the cached normal samples (``normal_x``,
``normal_y``, ``normal_rho`` f64, ``normal_is_valid`` i32, 4 bytes of padding),
then ``next_float_normal_sample`` f32 and its valid flag (bool, 3 bytes of
padding).  ``set_rng_state`` takes that size only (torch 2.13 no longer takes
the 5048-byte legacy state) and refuses an engine that is not ``seeded`` with
``1 <= left <= 624`` and ``next <= 624``.

ptcore's generator is Philox, its state ``(seed, offset)``.  Programs save
``get_rng_state()`` in checkpoints and hand it back to ``set_rng_state``, in
the other library too (a Hugging Face Trainer checkpoint keeps it in
``rng_state.pth``; resuming calls ``torch.random.set_rng_state``), so a CPU
state is written in torch's layout:

* the engine is torch's right after ``manual_seed(seed)`` (``left`` 1,
  ``next`` 0, the words of mt19937's initialisation by the seed's low 32
  bits), so torch accepts it and draws what ``torch.manual_seed(seed)`` draws;
* ``normal_x`` holds the tag :data:`TAG`, ``normal_rho`` the offset (raw
  u64), ``normal_is_valid`` is 0: torch reads neither, ptcore reads both back.

A state torch wrote (no tag) gives ``(the_initial_seed, offset)`` with offset
0 when the engine is the one ``manual_seed`` made (a program that seeded torch
and saved the state resumes where ``ptcore.manual_seed`` starts), otherwise a
64-bit hash of the engine: the same state gives the same stream, though not
torch's numbers (ptcore's generator is not mt19937).  ptcore's earlier 16-byte
form (seed, offset; little endian) is still read.
"""
import functools
import hashlib
import struct

import numpy as np

__all__ = ["SIZE", "TAG", "pack", "unpack"]

SIZE = 5056
TAG = b"ptcoreRG"

_N = 624
_HEAD = struct.Struct("<QiiQ")           # the_initial_seed, left, seeded, next
_WORDS = _HEAD.size                      # 24: the state words
_NORMAL = _WORDS + 8 * _N                # 5016: normal_x, normal_y, normal_rho, normal_is_valid
_TAIL = struct.Struct("<8sdQi")
_MASK64 = (1 << 64) - 1


@functools.lru_cache(maxsize=16)
def _seeded_words(seed32):
    """mt19937's state after initialisation by ``seed32``, as 624 little-endian u64."""
    w = [seed32]
    for j in range(1, _N):
        prev = w[-1]
        w.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.asarray(w, dtype="<u8").tobytes()


def pack(seed, offset):
    """The 5056 bytes of the state ``(seed, offset)`` (see the module docstring)."""
    buf = bytearray(SIZE)
    _HEAD.pack_into(buf, 0, seed, 1, 1, 0)
    buf[_WORDS:_NORMAL] = _seeded_words(seed & 0xFFFFFFFF)
    _TAIL.pack_into(buf, _NORMAL, TAG, 0.0, offset & _MASK64, 0)
    return bytes(buf)


def unpack(raw):
    """``(seed, offset)`` of the state bytes ``raw`` (16 or 5056 of them); raises
    RuntimeError, as torch, for another size or an engine torch would refuse."""
    n = len(raw)
    if n == 16:
        return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")
    if n != SIZE:
        raise RuntimeError(f"Expected a CPUGeneratorImplState of size {SIZE} but found the input "
                           f"RNG state size to be {n}")
    seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
    if not (seeded and 0 < left <= _N and (nxt & 0xFFFFFFFF) <= _N):
        raise RuntimeError("Invalid mt19937 state")
    tag, _, offset, _ = _TAIL.unpack_from(raw, _NORMAL)
    if tag == TAG:
        return seed, offset
    words = bytes(raw[_WORDS:_NORMAL])
    # (torch copies the u64 words into u32 ones: only their low halves count)
    low = np.frombuffer(words, dtype="<u8") & 0xFFFFFFFF
    if left == 1 and (nxt & 0xFFFFFFFF) == 0 and \
            low.astype("<u8").tobytes() == _seeded_words(seed & 0xFFFFFFFF):
        return seed, 0
    h = hashlib.blake2b(digest_size=8)
    h.update(struct.pack("<iI", left, nxt & 0xFFFFFFFF))
    h.update(low.astype("<u4").tobytes())
    return seed, int.from_bytes(h.digest(), "little")
