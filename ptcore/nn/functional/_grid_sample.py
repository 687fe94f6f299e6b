"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (``torch.nn.functional``).

``grid_sample`` of float32/float64 4-d CPU tensors runs the kernel of
:mod:`ptcore.nn.functional._resample`.  Otherwise both are composed of
differentiable ptcore ops (matmul; floor, clamp, fmod, gather and
arithmetic), so gradients with respect to the input, the grid and ``theta`` come from
autograd, on every device, and match torch's hand-written kernels: a coordinate clipped by
``padding_mode='border'`` gets zero gradient, a reflected one a sign-flipped gradient, and
``nearest`` has zero gradient with respect to the grid.
"""
import itertools
import warnings

import ptcore
from ptcore.autograd._record import name_grad_fn as _name_grad_fn, one_node as _one_node
from ptcore._scalar_args import bool_param
import ptcore.nn.functional._resample as _resample

__all__ = ["affine_grid", "grid_sample", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


# ---------------------------------------------------------------------------
# affine_grid
# ---------------------------------------------------------------------------

def _linspace_from_neg_one(theta, steps, align_corners):
    if steps <= 1:
        return ptcore.zeros(1, dtype=theta.dtype, device=theta.device)
    r = ptcore.linspace(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    if not align_corners:
        r = r * (steps - 1) / steps            # two roundings, as torch
    return r


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid ``base @ theta^T`` of ``affine_grid`` (no argument checks).

    The product is summed term by term, ``x*t0 + y*t1 (+ z*t2) + t_last``, in the order and
    with the roundings of torch's CPU result (its K=3/4 batched matmul), so grid points that
    land exactly on pixel centres (an identity theta) stay exact, and ``grid_sample``'s floor
    and its gradients agree with torch's there.
    """
    size = [int(s) for s in size]
    n = size[0]
    spatial = size[2:]
    nd = len(spatial)
    # Base coordinates in (x, y[, z]) order, x running along the last spatial dim.
    axes = [_linspace_from_neg_one(theta, s, align_corners) for s in spatial]
    mesh = ptcore.meshgrid(*axes, indexing="ij")          # each of shape spatial
    coords = [m.reshape(1, *spatial, 1) for m in reversed(mesh)]

    def compute():
        th = theta.reshape(n, *([1] * nd), nd, nd + 1)    # (N, 1.., nd, nd + 1)
        grid = coords[0] * th[..., 0]
        for j in range(1, nd):
            grid = grid + coords[j] * th[..., j]
        return grid + th[..., nd]                         # (N, *spatial, nd)

    def backward(g):
        # torch's affine_grid_generator_backward: the base grid's rows [x, y(, z), 1]
        # against the gradient, one (nd, nd + 1) product per batch entry
        base = ptcore.stack([c.reshape(-1) for c in coords]
                            + [ptcore.ones_like(coords[0].reshape(-1))], 1).to(g.dtype)
        return (ptcore.matmul(g.reshape(n, -1, nd).transpose(1, 2), base),)
    # one node over theta, as torch's kernel
    return _one_node("AffineGridGeneratorBackward0", compute, (theta,), backward)


def affine_grid(theta, size, align_corners=None):
    """A sampling grid for :func:`grid_sample` from a batch of affine matrices.

    Parameters
    ----------
    theta : Tensor
        ``(N, 2, 3)`` for 2-d or ``(N, 3, 4)`` for 3-d transforms, floating point.
    size : sequence of int
        The output size ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    align_corners : bool, optional
        As in :func:`grid_sample` (default ``False``, with torch's warning when omitted).

    Returns
    -------
    Tensor
        ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``.
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    bool_param(align_corners, "affine_grid_generator", "align_corners", 3)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given = size                            # messages show the size as passed, as torch
    size = tuple(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {given}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta has batch size {theta.shape[0]} but size asks for "
                           f"{size[0]}")
    return affine_grid_generator(theta, size, align_corners)


# ---------------------------------------------------------------------------
# grid_sample
# ---------------------------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    """Clip to ``[0, size - 1]`` as torch's ``min(size - 1, max(coord, 0))`` (NaN -> size - 1);
    the gradient passes strictly inside only (torch counts the borders as out of bounds)."""
    clipped = ptcore.where(ptcore.isnan(coord), size - 1, coord.clamp(0, size - 1)).detach()
    return ptcore.where((coord > 0) & (coord < size - 1), coord, clipped)


def _reflect(coord, twice_low, twice_high):
    """Reflect ``coord`` into ``[twice_low / 2, twice_high / 2]`` (torch's reflect_coordinates)."""
    if twice_low == twice_high:
        # 0, still in the graph (a zero gradient for the grid, as torch's)
        return ptcore.where(ptcore.isfinite(coord), coord * 0, 0.0)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = (coord - low).abs()
    extra = ptcore.fmod(shifted, span)
    flips = ptcore.floor(shifted / span).detach()
    even = ptcore.fmod(flips, 2) == 0
    return ptcore.where(even, extra + low, span - extra + low)


def _downgrade(coord):
    """torch's safe_downgrade_to_int_range: a coordinate that is not finite or is beyond
    the int range moves to -100, outside the input (and without gradient)."""
    ok = ptcore.isfinite(coord) & (coord <= 2 ** 31 - 2) & (coord >= -2 ** 31)
    return ptcore.where(ok, coord, -100.0)


def _apply_padding(coord, size, padding_mode, align_corners):
    """torch's compute_coordinates: clip or reflect-then-clip, then :func:`_downgrade`."""
    if padding_mode == "border":
        coord = _clip(coord, size)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size)
    return _downgrade(coord)


def _source_coords(grid, sizes, padding_mode, align_corners):
    """Unnormalized source coordinates, one tensor per spatial dim (outermost first)."""
    nd = len(sizes)
    out = []
    for d, size in enumerate(sizes):
        g = grid[..., nd - 1 - d]                  # grid[..., 0] is x (the last dim)
        c = _unnormalize(g, size, align_corners)
        out.append(c)
    return out


def _gather_taps(flat, taps, sizes, n, c, value_zero=False):
    """Sum over ``taps`` of ``weight * input[tap index]`` with out-of-bounds taps zero.

    ``flat`` is the input as ``(N, C, prod(sizes))``; each tap is ``(index tensors per dim,
    weight)`` with tensors of shape ``(N, *out_spatial)``.  A tap index that is NaN, infinite
    or outside the input is out of bounds (torch's scalar kernels move such coordinates to
    -100); no index is formed from it.  An out-of-bounds tap drops its weight, or with
    ``value_zero`` reads 0 (torch's bicubic: a NaN weight still makes the sum NaN).
    """
    out = None
    for idx, weight in taps:
        valid = None
        lin = None
        stride = 1
        for d in reversed(range(len(sizes))):
            i = idx[d]
            ok = (i >= 0) & (i <= sizes[d] - 1)
            valid = ok if valid is None else valid & ok
            term = ptcore.where(ok, i, 0) * stride
            lin = term if lin is None else lin + term
            stride *= sizes[d]
        lin = ptcore.where(valid, lin, 0)
        lin = lin.to(ptcore.int64).reshape(n, 1, -1).expand(n, c, lin[0].numel())
        vals = flat.gather(2, lin)
        keep = valid.reshape(n, 1, -1)
        if value_zero:
            contrib = ptcore.where(keep, vals, 0) * weight.reshape(n, 1, -1)
        else:
            contrib = vals * ptcore.where(keep, weight.reshape(n, 1, -1), 0)
        out = contrib if out is None else out + contrib
    return out


def _nan_points(coords, padding_mode):
    """Output points whose padded coordinate is NaN before the clip (border: a NaN grid
    value; reflection: NaN or infinite): torch's forward clips it to the last pixel, its
    backward indexes with the NaN and gives these points no gradient.  None when none."""
    if padding_mode == "zeros":
        return None
    dead = None
    for x in coords:
        m = ptcore.isnan(x) if padding_mode == "border" else ~ptcore.isfinite(x)
        dead = m if dead is None else dead | m
    return dead if bool(dead.any()) else None


def _cubic_coeffs(t):
    a = -0.75
    x1 = t + 1
    x2 = t
    x3 = 1 - t
    x4 = 2 - t

    def far(x):    # |x| in [1, 2]
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def near(x):   # |x| in [0, 1]
        return ((a + 2) * x - (a + 3)) * x * x + 1

    return [far(x1), near(x2), near(x3), far(x4)]


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sample`` with torch's integer mode codes (``torch.grid_sampler``)."""
    modes = {v: k for k, v in GRID_SAMPLE_INTERPOLATION_MODES.items()}
    pads = {v: k for k, v in GRID_SAMPLE_PADDING_MODES.items()}
    if interpolation_mode not in modes or padding_mode not in pads:
        raise ValueError(f"grid_sampler(): unknown interpolation mode {interpolation_mode} or "
                         f"padding mode {padding_mode}")
    return _grid_sample(input, grid, modes[interpolation_mode], pads[padding_mode],
                        bool(align_corners))


def _check(input, grid, mode):
    if not isinstance(input, ptcore.Tensor) or not isinstance(grid, ptcore.Tensor):
        raise TypeError("grid_sample(): input and grid must be tensors")
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if not input.is_floating_point():
        # torch's kernels are dispatched on the input's dtype before the grid's is compared
        raise NotImplementedError(f'"grid_sampler_{input.dim() - 2}d_cpu_kernel_impl" not '
                                  f"implemented for '{input.dtype._legacy}'")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    _check(input, grid, mode)
    if input.dim() == 4 and _resample.on_kernel(input):
        # float32/float64 on the CPU: ATen's 2-d kernel (ptcore._ops.kernels._resample);
        # the composite below serves gradients of its gradients
        return _resample.grid_sample_2d(
            input, grid, GRID_SAMPLE_INTERPOLATION_MODES[mode],
            GRID_SAMPLE_PADDING_MODES[padding_mode], align_corners,
            lambda i, g: _grid_sample_composite(i, g, mode, padding_mode, align_corners))
    out = _grid_sample_composite(input, grid, mode, padding_mode, align_corners)
    return _name_grad_fn(out, f"GridSampler{input.dim() - 2}DBackward0", input, grid)


def _grid_sample_composite(input, grid, mode, padding_mode, align_corners):
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    out_spatial = list(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    coords = _source_coords(grid, sizes, padding_mode, align_corners)
    dead = _nan_points(coords, padding_mode)
    if mode == "bicubic":
        # Taps at floor(x) - 1 .. floor(x) + 2 with cubic-convolution weights; padding is
        # applied to each tap coordinate, as torch does.
        fl = [ptcore.floor(x).detach() for x in coords]
        coeffs = [_cubic_coeffs(x - f) for x, f in zip(coords, fl)]
        taps = []
        for offs in itertools.product(range(4), repeat=2):
            idx = []
            w = None
            for d, o in enumerate(offs):
                t = fl[d] + (o - 1)
                if padding_mode != "zeros":
                    t = _apply_padding(t, sizes[d], padding_mode, align_corners)
                idx.append(t.detach())
                w = coeffs[d][o] if w is None else w * coeffs[d][o]
            taps.append((idx, w))
        out = _gather_taps(flat, taps, sizes, n, c, value_zero=True)
    else:
        coords = [_apply_padding(x, s, padding_mode, align_corners)
                  for x, s in zip(coords, sizes)]
        if mode == "nearest":
            idx = [ptcore.round(x).detach() for x in coords]
            ones = coords[0] * 0 + 1   # zero gradient with respect to the grid, as torch
            out = _gather_taps(flat, [(idx, ones)], sizes, n, c)
        else:
            lo = [ptcore.floor(x).detach() for x in coords]
            frac = [x - f for x, f in zip(coords, lo)]
            taps = []
            for corner in itertools.product((0, 1), repeat=len(sizes)):
                idx = []
                w = None
                for d, hi in enumerate(corner):
                    idx.append(lo[d] + hi)
                    wd = frac[d] if hi else 1 - frac[d]
                    w = wd if w is None else w * wd
                taps.append((idx, w))
            out = _gather_taps(flat, taps, sizes, n, c)
    if dead is not None:
        out = ptcore.where(dead.reshape(n, 1, -1), out.detach(), out)
    return out.reshape(n, c, *out_spatial)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalized locations of ``grid`` (spatial transformer networks).

    Parameters
    ----------
    input : Tensor
        ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    grid : Tensor
        ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``, ``(x, y[, z])`` in
        ``[-1, 1]`` (``-1`` the left/top edge of the input).
    mode : {'bilinear', 'nearest', 'bicubic'}
        ``bicubic`` for 4-d input only (cubic convolution, ``A = -0.75``).
    padding_mode : {'zeros', 'border', 'reflection'}
        Values at locations outside the input.
    align_corners : bool, optional
        Whether ``-1``/``1`` are the centres (True) or the outer edges (False, the default,
        with torch's warning when omitted) of the corner pixels.

    Returns
    -------
    Tensor
        ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.
    """
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    bool_param(align_corners, "grid_sampler", "align_corners", 5)
    return _grid_sample(input, grid, mode, padding_mode, bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_2d``: :func:`grid_sampler` on 4-d input."""
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler_2d(): expected 4D input, got {input.dim()}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_3d``: :func:`grid_sampler` on 5-d input."""
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input, got {input.dim()}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
