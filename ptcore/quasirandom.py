"""Quasi-random sequences (``torch.quasirandom``): the Sobol' engine.

:class:`SobolEngine` draws from a Sobol' sequence with the Joe-Kuo direction numbers (up to
21201 dimensions, 30 bits), in torch's order: without scrambling the points are exactly
torch's.  With ``scramble=True`` the sequence gets a random linear matrix scramble and a
digital shift built exactly as torch builds them, but from ptcore's random generator (seeded
by ``seed``), so the scrambled points are a valid randomized Sobol' sequence that differs from
torch's for the same seed.

The direction numbers are read from SciPy's copy of the Joe-Kuo table
(``scipy/stats/_sobol_direction_numbers.npz``), the same table torch embeds.
"""
import os

import numpy as np

import ptcore

__all__ = ["SobolEngine"]

_DIRECTION_NUMBERS = None


def _direction_numbers():
    """``(poly, vinit)`` of the Joe-Kuo table (loaded once)."""
    global _DIRECTION_NUMBERS
    if _DIRECTION_NUMBERS is None:
        import importlib.util
        scipy_dir = importlib.util.find_spec("scipy").submodule_search_locations[0]
        path = os.path.join(scipy_dir, "stats", "_sobol_direction_numbers.npz")
        with np.load(path) as z:
            _DIRECTION_NUMBERS = (z["poly"].astype(np.int64), z["vinit"].astype(np.int64))
    return _DIRECTION_NUMBERS


def _initial_state(dimension, maxbit):
    """The ``(dimension, maxbit)`` direction numbers, scaled to ``maxbit``-bit integers."""
    poly, vinit = _direction_numbers()
    ss = np.zeros((dimension, maxbit), dtype=np.int64)
    ss[0, :] = 1
    if dimension > 1:
        p = poly[1:dimension]
        m = np.array([int(x).bit_length() - 1 for x in p], dtype=np.int64)
        rows = ss[1:]
        for j in range(maxbit):
            init = j < m
            r = np.nonzero(init)[0]
            if r.size:
                rows[r, j] = vinit[1:dimension][r, j]
            r = np.nonzero(~init)[0]
            if r.size == 0:
                continue
            mr, pr = m[r], p[r]
            newv = rows[r, j - mr].copy()
            for k in range(int(mr.max())):
                use = (k < mr) & (((pr >> np.maximum(mr - 1 - k, 0)) & 1) == 1)
                if use.any():
                    u = np.nonzero(use)[0]
                    newv[u] ^= (np.int64(2) << k) * rows[r[u], j - k - 1]
            rows[r, j] = newv
    ss *= (np.int64(1) << np.arange(maxbit - 1, -1, -1, dtype=np.int64))[None, :]
    return ss


def _parity(x):
    x = x ^ (x >> 32)
    x = x ^ (x >> 16)
    x = x ^ (x >> 8)
    x = x ^ (x >> 4)
    x = x ^ (x >> 2)
    x = x ^ (x >> 1)
    return x & 1


def _scramble_state(state, ltm, maxbit):
    """Left-multiply each dimension's direction numbers by its lower-triangular bit matrix
    (diagonal forced to 1) over GF(2), as torch's ``_sobol_engine_scramble_``."""
    ltm = ltm.copy()
    idx = np.arange(maxbit)
    ltm[:, idx, idx] = 1
    pw = np.int64(1) << np.arange(maxbit - 1, -1, -1, dtype=np.int64)
    lsm = (ltm * pw[None, None, :]).sum(-1)                 # (dim, maxbit): row p as an int
    bits = _parity(lsm[:, None, :] & state[:, :, None])     # (dim, j, p)
    # row p gives result bit (maxbit - 1 - p)
    return (bits * pw[None, None, :]).sum(-1)


def _rightmost_zero(n):
    """Index of the lowest zero bit of each of ``n`` (int64 array)."""
    low = ~n & (n + 1)
    return np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1


class SobolEngine:
    r"""A generator of (optionally scrambled) Sobol' low-discrepancy sequences.

    Parameters
    ----------
    dimension : int
        Dimension of the points, in ``[1, 21201]``.
    scramble : bool
        Apply a random linear matrix scramble and digital shift (see the module docstring).
    seed : int, optional
        Seed of the scrambling (ptcore's generator).

    Examples
    --------
    >>> eng = ptcore.quasirandom.SobolEngine(2)
    >>> eng.draw(4)
    tensor([[0.0000, 0.0000],
            [0.5000, 0.5000],
            [0.7500, 0.2500],
            [0.2500, 0.7500]])
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension, self.MAXBIT)
        if not scramble:
            shift = np.zeros(dimension, dtype=np.int64)
        else:
            shift, state = self._scrambled(state)
        self._state = state
        self._steps = np.ascontiguousarray(state.T)   # (MAXBIT, dim): rows gathered per point
        self._shift = shift
        self.sobolstate = ptcore.from_numpy(state)
        self.shift = ptcore.from_numpy(shift)
        self._quasi = shift.copy()
        # torch divides the integer first point in the default dtype.
        self._first_point = (ptcore.from_numpy(shift.copy()) / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    @property
    def quasi(self):
        """The current integer state of the sequence (as torch's ``quasi``)."""
        return ptcore.from_numpy(self._quasi.copy())

    def _scrambled(self, state):
        g = None
        if self.seed is not None:
            g = ptcore.Generator()
            g.manual_seed(self.seed)
        shift_ints = ptcore.randint(2, (self.dimension, self.MAXBIT), generator=g).numpy()
        shift = shift_ints @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        ltm = ptcore.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT),
                             generator=g).tril().numpy()
        return shift.astype(np.int64), _scramble_state(state, ltm, self.MAXBIT)

    def _advance(self, n, start):
        """The next ``n`` integer points after ``start`` earlier steps; updates the state."""
        if n <= 0:
            return np.empty((0, self.dimension), dtype=np.int64)
        ls = _rightmost_zero(np.arange(start, start + n, dtype=np.int64))
        if ls.max() >= self.MAXBIT:
            raise RuntimeError(f"SobolEngine: at most 2**{self.MAXBIT} points can be drawn")
        steps = self._steps[ls]               # (n, dim), row-major: the points' layout
        pts = np.bitwise_xor.accumulate(steps, axis=0) ^ self._quasi[None, :]
        self._quasi = pts[-1].copy()
        return pts

    def _to_tensor(self, pts, dtype):
        u = pts * (1.0 / 2 ** self.MAXBIT)
        if dtype in (ptcore.float32, ptcore.float64):
            return ptcore.from_numpy(u.astype(np.float32 if dtype is ptcore.float32 else np.float64,
                                              copy=False))
        return ptcore.from_numpy(u).to(dtype)

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, shape ``(n, dimension)`` (default dtype when ``dtype`` is
        None).  The first point drawn is the (shifted) origin, as torch."""
        if dtype is None:
            dtype = ptcore.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest = self._to_tensor(self._advance(n - 1, 0), dtype)
                result = ptcore.cat((self._first_point.to(dtype), rest), dim=-2)
        else:
            result = self._to_tensor(self._advance(n, self.num_generated - 1), dtype)
        self.num_generated += n
        if out is not None:
            if tuple(out.shape) != tuple(result.shape):
                out.resize_(result.shape)
            out.copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next ``2**m`` points; the total drawn must stay a power of 2."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please "
                "use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Return to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip ``n`` points (as drawing them without using them)."""
        if self.num_generated == 0:
            self._advance(n - 1, 0)
        else:
            self._advance(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"
