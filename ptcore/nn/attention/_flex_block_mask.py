"""Block-sparse attention masks for flex attention: :class:`BlockMask`, the functions
that build one from a ``mask_mod`` (:func:`create_block_mask`, :func:`create_mask`) and
the mask_mod combinators (:func:`and_masks`, :func:`or_masks`, :func:`noop_mask`).

A BlockMask stores, for each ``(batch, head, query block)`` row, how many key/value
blocks take part (``kv_num_blocks``) and which (``kv_indices``, a row of block numbers
whose first ``kv_num_blocks`` entries count).  Blocks on which the mask is True
everywhere may be kept apart (``full_kv_*``): attention skips ``mask_mod`` there.
``q_num_blocks``/``q_indices`` are the same layout transposed (per key/value block).
"""
import functools
import itertools
import operator
import warnings

import ptcore
import ptcore.nn.functional as F
import ptcore.nn.attention._flex_mods as _flex_mods

__all__ = ["BlockMask", "create_block_mask", "create_mask", "and_masks", "or_masks",
           "noop_mask"]

_DEFAULT_BLOCK_SIZE = 128
# block size of the one-block mask that flex_attention uses when given none
_WHOLE_BLOCK_SIZE = 1 << 30


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that keeps every position (returns a True scalar tensor)."""
    return ptcore.ones((), dtype=ptcore.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """mask_mod of a sliced BlockMask: the original mask_mod does not apply to a slice."""
    raise RuntimeError("Cannot use mask_mod from a sliced BlockMask: indexing a BlockMask "
                       "resets its mask_mod; set it from the original BlockMask's mask_mod")


def _combined(mask_mods, identity, op, name):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b, h, q_idx, kv_idx):
        result = ptcore.full((), identity, dtype=ptcore.bool, device=b.device)
        for mask_mod in mask_mods:
            result = op(result, mask_mod(b, h, q_idx, kv_idx))
        return result
    combined.__name__ = combined.__qualname__ = name
    return combined


def or_masks(*mask_mods):
    """A mask_mod that is True where any of ``mask_mods`` is True.

    Raises
    ------
    RuntimeError
        If an argument is not callable (as torch).
    """
    return _combined(mask_mods, False, operator.or_, "or_mask")


def and_masks(*mask_mods):
    """A mask_mod that is True where all of ``mask_mods`` are True.

    Raises
    ------
    RuntimeError
        If an argument is not callable (as torch).
    """
    return _combined(mask_mods, True, operator.and_, "and_mask")


def _ordered_to_dense(num_blocks, indices, num_cols):
    """int32 0/1 matrix ``(..., rows, num_cols)`` from a (counts, column lists) layout."""
    max_entries = indices.shape[-1]
    used = ptcore.arange(max_entries, device=indices.device) < num_blocks.unsqueeze(-1)
    # unused slots write to one spare column, cut off after
    cols = ptcore.where(used, indices.long(), num_cols)
    dense = ptcore.zeros(*indices.shape[:-1], num_cols + 1, dtype=ptcore.int32,
                         device=indices.device)
    dense.scatter_(-1, cols, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense):
    """(counts, column lists) layout, both int32, of a 0/1 matrix ``(..., rows, cols)``."""
    dense = dense.to(ptcore.int32)
    num_blocks = dense.sum(dim=-1).to(ptcore.int32)
    indices = ptcore.argsort(dense, dim=-1, descending=True, stable=True).to(ptcore.int32)
    return num_blocks.contiguous(), indices.contiguous()


def _transpose_ordered(num_blocks, indices):
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _check_kv_layout(kv_indices, full_kv_num_blocks, full_kv_indices):
    if kv_indices.dim() < 2:
        raise RuntimeError(f"BlockMask must have at least 2 dimensions, got kv_indices "
                           f"of shape {tuple(kv_indices.shape)}")
    if (full_kv_num_blocks is None) != (full_kv_indices is None):
        raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                             "provided or omitted")


class BlockMask:
    """A block-sparse attention mask (``torch.nn.attention.flex_attention.BlockMask``).

    Build one with :func:`create_block_mask` or :meth:`from_kv_blocks`.  Attributes:
    ``kv_num_blocks`` ``(B, H, Q_BLOCKS)`` and ``kv_indices`` ``(B, H, Q_BLOCKS,
    KV_BLOCKS)`` (int32) list the partially masked blocks of each query-block row;
    ``full_kv_num_blocks``/``full_kv_indices`` the fully unmasked ones (or None);
    ``q_num_blocks``/``q_indices``/``full_q_num_blocks``/``full_q_indices`` the same
    per key/value block; ``seq_lengths`` ``(Q_LEN, KV_LEN)``; ``BLOCK_SIZE``
    ``(Q_BLOCK_SIZE, KV_BLOCK_SIZE)``; ``mask_mod`` the per-position mask function.
    """

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks,
                 full_q_indices, BLOCK_SIZE=(_DEFAULT_BLOCK_SIZE, _DEFAULT_BLOCK_SIZE),
                 mask_mod=noop_mask):
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if kv_indices is None:
            raise AssertionError("kv_indices must be provided")
        _check_kv_layout(kv_indices, full_kv_num_blocks, full_kv_indices)
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both "
                                 "provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_BLOCK_SIZE, mask_mod=None,
                       seq_lengths=None, compute_q_blocks=True):
        """A BlockMask from its key/value block layout; the query-side layout is derived.

        Parameters
        ----------
        kv_num_blocks, kv_indices : Tensor
            Partial blocks per query-block row: counts ``(..., Q_BLOCKS)`` and block
            numbers ``(..., Q_BLOCKS, KV_BLOCKS)``.
        full_kv_num_blocks, full_kv_indices : Tensor, optional
            The same for blocks on which ``mask_mod`` is not evaluated.
        BLOCK_SIZE : int or tuple of int
            ``(Q_BLOCK_SIZE, KV_BLOCK_SIZE)``; an int means both.
        mask_mod : callable, optional
            Per-position mask (default :func:`noop_mask`).
        seq_lengths : tuple of int, optional
            ``(Q_LEN, KV_LEN)``; default: block counts times block sizes.
        compute_q_blocks : bool
            Derive ``q_num_blocks``/``q_indices`` (and the full ones).

        Raises
        ------
        RuntimeError
            If ``kv_indices`` has fewer than 2 dimensions.
        AssertionError
            If only one of ``full_kv_num_blocks`` and ``full_kv_indices`` is given.
        """
        _check_kv_layout(kv_indices, full_kv_num_blocks, full_kv_indices)
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks,
                   full_q_indices, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=noop_mask if mask_mod is None else mask_mod)

    _TENSOR_ATTRS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")

    def as_tuple(self, flatten=True):
        """``(Q_LEN, KV_LEN, kv_num_blocks, kv_indices, full_kv_num_blocks, ...,
        Q_BLOCK_SIZE, KV_BLOCK_SIZE, mask_mod)``; with ``flatten=False`` the lengths and
        block sizes stay pairs."""
        tensors = tuple(getattr(self, a) for a in self._TENSOR_ATTRS)
        if flatten:
            return (*self.seq_lengths, *tensors, *self.BLOCK_SIZE, self.mask_mod)
        return (self.seq_lengths, *tensors, self.BLOCK_SIZE, self.mask_mod)

    @property
    def shape(self):
        """``(*batch_dims, Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self):
        """Number of positions the mask covers (sparsity not counted)."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """Percentage of the mask's positions in blocks that are skipped.

        As torch, counts whole blocks, so lengths that are not multiples of the block
        size can give a negative percentage.
        """
        computed = int(self.kv_num_blocks.sum().item())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum().item())
        computed_size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self):
        """int32 0/1 tensor ``(*batch_dims, Q_BLOCKS, KV_BLOCKS)``: 1 where a block is kept."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                  self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """Text picture of the block mask per batch/head: full blocks as ``█``, partly
        kept cells as ``░``; at most ``grid_size`` cells (``-1``: one per block) and
        ``limit`` pictures."""
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int) and grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def picture(batch_idx):
            cur = dense
            for i in batch_idx:
                cur = cur[i]
            lines = [f"{batch_idx}"]
            for r in range(0, num_rows, row_step):
                line = ""
                for c in range(0, num_cols, col_step):
                    frac = cur[r:r + row_step, c:c + col_step].float().mean().item()
                    line += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                lines.append(line)
            return "\n".join(lines) + "\n"

        parts = []
        for n, batch_idx in enumerate(itertools.product(*[range(d) for d in batch_dims])):
            if n == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a "
                          "specific batch or head"]
                break
            parts.append(picture(batch_idx))
        return "\n".join(parts)

    def __str__(self):
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __repr__(self):
        def shape_of(t):
            return None if t is None else tuple(t.shape)
        mask_name = getattr(self.mask_mod, "__name__", self.mask_mod)
        fields = "".join(f"    {a}={shape_of(getattr(self, a))},\n"
                         for a in self._TENSOR_ATTRS)
        return (f"BlockMask(\n{fields}    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={mask_name}\n)")

    def __getitem__(self, index):
        """The BlockMask of the selected batch/head/query-block rows; an int index keeps
        its dimension with size 1 (as torch).  The result's ``mask_mod`` raises: set it
        from the original mask's ``mask_mod``."""
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, int) else i
            for i, n in zip(padded, sizes))
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num = self.full_kv_num_blocks[index]
            full_idx = self.full_kv_indices[index]
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], full_num, full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        """This mask cropped to its top-left ``(new_q_len, new_kv_len)`` corner (blocks
        beyond the new lengths dropped; as torch, right only for mask_mods that do not
        depend on the lengths)."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])

        def crop(num_blocks, indices):
            if num_blocks is None:
                return None, None
            dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
            return _dense_to_ordered(dense[..., :rows, :cols])
        kv_num, kv_idx = crop(self.kv_num_blocks, self.kv_indices)
        full_num, full_idx = crop(self.full_kv_num_blocks, self.full_kv_indices)
        return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                        BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                        seq_lengths=(new_q_len, new_kv_len),
                                        compute_q_blocks=self.q_indices is not None)

    def to(self, device):
        """A copy with the layout tensors on ``device``."""
        moved = {a: (None if getattr(self, a) is None else getattr(self, a).to(device))
                 for a in self._TENSOR_ATTRS}
        return BlockMask(self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod)


def _default_device(device):
    if device is not None:
        return device
    accelerator = ptcore.accelerator.current_accelerator()
    return accelerator if accelerator is not None else "cpu"


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """Dense boolean mask ``(B, H, Q_LEN, KV_LEN)`` of a mask_mod, or of a score_mod (True
    where it does not give ``-inf`` on zero scores).  ``B``/``H`` None mean 1.

    Parameters
    ----------
    mod_fn : callable
        ``mask_mod(b, h, q_idx, kv_idx)`` or ``score_mod(score, b, h, q_idx, kv_idx)``.
    B, H : int or None
        Batch size and number of query heads.
    Q_LEN, KV_LEN : int
        Query and key/value lengths.
    device : device-like, optional
        Default: the current accelerator, else CPU.

    Returns
    -------
    Tensor
        bool, shape ``(B, H, Q_LEN, KV_LEN)``.
    """
    device = _default_device(device)
    B = 1 if B is None else B
    H = 1 if H is None else H
    grids = _flex_mods.index_grids(B, H, Q_LEN, KV_LEN, device)
    shape = (B, H, Q_LEN, KV_LEN)
    if _flex_mods.mod_kind(mod_fn) == _flex_mods.SCORE_MOD:
        out = _flex_mods.apply_score_mod(mod_fn, ptcore.zeros(shape, device=device), grids)
        return ~ptcore.isneginf(out)
    return _flex_mods.apply_mask_mod(mod_fn, grids, shape).contiguous()


def _mask_to_blocks(mask, q_block, kv_block, separate_full_blocks):
    """int8 ``(B, H, Q_BLOCKS, KV_BLOCKS)`` partial and full block maps of a bool mask."""
    B, H, L, S = mask.shape
    pad_q, pad_kv = -L % q_block, -S % kv_block
    mask = F.pad(mask, (0, pad_kv, 0, pad_q))
    nq, nkv = (L + pad_q) // q_block, (S + pad_kv) // kv_block
    counts = mask.view(B, H, nq, q_block, nkv, kv_block).to(ptcore.int32).sum(dim=(3, 5))
    if not separate_full_blocks:
        return (counts > 0).to(ptcore.int8), None
    whole = q_block * kv_block
    partial = (counts > 0) & (counts < whole)
    return partial.to(ptcore.int8), (counts == whole).to(ptcore.int8)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True):
    """A :class:`BlockMask` from a ``mask_mod(b, h, q_idx, kv_idx)``.

    Parameters
    ----------
    mask_mod : callable
        Returns True where a query position may attend to a key position.
    B, H : int or None
        Batch size and number of query heads; None gives a mask of size 1 there that
        broadcasts over every batch/head.
    Q_LEN, KV_LEN : int
        Query and key/value lengths.
    device : device-like, optional
        Default: the current accelerator, else CPU.
    BLOCK_SIZE : int or tuple of int
        ``(Q_BLOCK_SIZE, KV_BLOCK_SIZE)``; an int means both (default 128).
    _compile : bool
        Accepted for compatibility (torch's deprecated flag); ptcore builds the mask
        eagerly either way.
    separate_full_blocks : bool
        Keep fully unmasked blocks in ``full_kv_*`` (mask_mod skipped there).

    Returns
    -------
    BlockMask

    Raises
    ------
    AssertionError
        If ``mask_mod`` does not take 4 positional arguments (as torch).

    Examples
    --------
    >>> from ptcore.nn.attention.flex_attention import create_block_mask
    >>> bm = create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 256, 256,
    ...                        device="cpu")
    >>> bm.kv_num_blocks.tolist(), bm.full_kv_num_blocks.tolist()
    ([[[1, 1]]], [[[0, 1]]])
    """
    if _flex_mods.mod_kind(mask_mod) != _flex_mods.MASK_MOD:
        raise AssertionError(f"create_block_mask requires a mask_mod function "
                             f"(b, h, q_idx, kv_idx), got {mask_mod}")
    if _compile:
        warnings.warn("create_block_mask(_compile=True) is deprecated and has no effect in "
                      "ptcore", DeprecationWarning, stacklevel=2)
    if isinstance(BLOCK_SIZE, int):
        q_block = kv_block = BLOCK_SIZE
    else:
        q_block, kv_block = BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _mask_to_blocks(mask, q_block, kv_block, separate_full_blocks)
    kv_num, kv_idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                    BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN))


def whole_sequence_block_mask(device):
    """The one-block BlockMask flex_attention uses when given none (every position)."""
    return BlockMask.from_kv_blocks(ptcore.ones((1, 1, 1), dtype=ptcore.int32, device=device),
                                    ptcore.zeros((1, 1, 1, 1), dtype=ptcore.int32,
                                                 device=device),
                                    BLOCK_SIZE=_WHOLE_BLOCK_SIZE, seq_lengths=(1, 1))
