"""Random number generation: ``Generator`` (Philox4x32-10, counter based, so
a seed gives the same stream on every device), the global default generator
and the sampling functions (``rand``, ``randn``, ``randint``, ``randperm``,
``normal``, ``bernoulli``, ``multinomial``) and in-place fills."""
import operator as _operator
import os
import math as _math
import numbers

import numpy as np

from ptcore._dispatch.device import in_host_memory as _in_host_memory, \
    mt19937_state_layout as _mt19937_layout
from ptcore._ops._out import assert_no_internal_overlap, assert_no_partial_overlap
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import (number_arg, strict_symint_param as _strict_symint,
                                 float_param as _float_param, strict_int_param as _strict_int,
                                 dtype_param as _dtype_param)
from ptcore._dispatch.device import cpu_kernel as _loop, loop_for as _loop_for
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._ops.kernels import _random as _K
from ptcore._ops import random_state as _state_bytes
from ptcore._ops.creation import _pinned, _factory_args, _require_grad
from ptcore._ops.sorting import topk

_DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1


class Generator:
    """A Philox4x32-10 random stream: state = (seed, offset).

    Each sampling call consumes a documented number of 128-bit Philox blocks
    and advances ``offset``; the same (seed, offset) gives the same numbers on
    CPU and GPU.
    """

    __module__ = "ptcore"

    def __init__(self, device="cpu"):
        self._device = _C._to_device(device)
        self._seed = _DEFAULT_SEED
        self._offset = 0

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        """Reset the stream to ``seed`` (an int in [-2**63, 2**64); taken modulo 2**64)."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if seed < -0x8000_0000_0000_0000 or seed > _MASK64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & _MASK64
        self._offset = 0
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self._seed = s
        self._offset = 0
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor: on the CPU the 5056 bytes of torch's CPU
        generator state holding (seed, offset) (:mod:`ptcore._ops.random_state`: torch
        takes it back too), on other devices 16 bytes (seed, offset; little endian)."""
        if _mt19937_layout(self._device):
            raw = _state_bytes.pack(self._seed, self._offset)
        else:
            raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return _C.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Set the state from :meth:`get_state`'s bytes; a CPU generator also takes the
        states torch's CPU generator gives (5056 bytes) and ptcore's earlier 16-byte
        form."""
        if not isinstance(new_state, _TensorBase) or new_state.dtype is not _C.uint8:
            raise TypeError("RNG state must be a ptcore.ByteTensor (uint8 tensor)")
        n = new_state.numel()
        if not _mt19937_layout(self._device) and n != 16:
            raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {n}")
        self._seed, self._offset = _state_bytes.unpack(
            bytes(new_state.contiguous().cpu().numpy().tobytes()))
        return self

    def clone_state(self):
        """A new Generator on the same device at this one's state."""
        g = Generator(self._device)
        g._seed, g._offset = self._seed, self._offset
        return g

    def graphsafe_get_state(self):
        # CUDA-graph-safe states exist only for CUDA generators (as torch)
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def _take(self):
        hook = take_hooks.get(self._device.type) if take_hooks else None
        if hook is not None:
            hook(self)
        return self._seed, self._offset

    def _advance(self, new_offset):
        self._offset = int(new_offset) & _MASK64

    def __getstate__(self):
        return {"device": str(self._device), "seed": self._seed, "offset": self._offset}

    def __setstate__(self, st):
        self._device = _C._to_device(st["device"])
        self._seed = int(st["seed"])
        self._offset = int(st["offset"])


# device type -> check run before a generator of that device hands out its
# (seed, offset): ptcore.cuda.graphs refuses sampling on a capturing stream
take_hooks = {}

default_generator = Generator()
# as PyTorch: a new Generator starts from 67280421310721, but the default one
# is seeded non-deterministically in every process (64 bits of OS entropy)
default_generator._seed = int.from_bytes(os.urandom(8), "little")


# functions of a seed that seed a device runtime's generators too: ptcore.cuda
# appends its ``manual_seed_all`` when it is imported (by ``import ptcore``)
device_seeders = []


def manual_seed(seed):
    """Seed the default generator (and CUDA generators, when present)."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    for f in device_seeders:
        f(seed)
    return default_generator


def seed():
    """Seed the default generator non-deterministically; returns the seed."""
    s = default_generator.seed()
    for f in device_seeders:
        f(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _gen(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a ptcore.Generator, got {type(generator).__name__}")
    return generator


# ---------------------------------------------------------------------------
# filling helpers
# ---------------------------------------------------------------------------

def _fill_contig(t, kernel, generator, *args):
    """Run a fill kernel into ``t`` (through a contiguous temporary if needed)."""
    if t.dtype is _C.complex32:
        # as PyTorch: real and imaginary parts drawn as float16 (the normal's
        # std split over the two parts, as for the other complex dtypes)
        if kernel is _K.fill_normal_addr:
            args = (args[0], args[1] * _math.sqrt(0.5))
        parts = _C.empty(tuple(t.shape) + (2,), dtype=_C.float16)
        _fill_contig(parts, kernel, generator, *args)
        t.copy_(parts.view(_C.complex32).squeeze(-1))
        return t
    if t.dtype.itemsize == 1 and t.dtype.is_floating_point:
        # the float8 types: PyTorch has no random kernels for them
        kname = {_K.fill_normal_addr: "normal_kernel_cpu", _K.fill_randint_addr: "random_from_to",
                 _K.fill_exponential_addr: "exponential_cpu"}.get(kernel, "check_uniform_bounds")
        raise NotImplementedError(f"\"{kname}\" not implemented for '{t.dtype._legacy}'")
    if t.dtype in (_C.uint16, _C.uint32, _C.uint64):
        # PyTorch's limited unsigned types: only random integers (drawn as int64)
        if kernel is not _K.fill_randint_addr:
            raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{t.dtype._legacy}'")
        t.copy_(_fill_contig(_C.empty(t.shape, dtype=_C.int64), kernel, generator, *args))
        return t
    # (every device's fill: the CPU's copy back into a strided tensor checked it, a device
    # fill wrote each shared element more than once)
    assert_no_internal_overlap(t)
    return _loop("random_fill", t.device, _random_fill_cpu)(t, _DEVICE_KINDS[kernel], generator, *args)


def _random_fill_cpu(t, kind, generator, *args):
    """The CPU loop of ``random_fill``: draw distribution ``kind`` into ``t``."""
    kernel = _CPU_FILLS[kind]
    g = _gen(generator)
    target = t if t.is_contiguous() else _C.empty(t.shape, dtype=t.dtype)
    n = target.numel()
    if n:
        s, off = g._take()
        g._advance(_K.fill_contiguous(kernel, target, n, s, off, *args))
    if target is not t:
        t.copy_(target)
    return t


def _check_float(dt, name):
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt._legacy}'")


def _new(size, dtype, device, default=None, fname="rand"):
    shape = _size_arg(size, fname)
    dt = (default or _C.get_default_dtype()) if dtype is None else \
        _C._as_dtype(_dtype_param(dtype, fname))
    return _C.empty(shape, dtype=dt, device=_C._to_device(device))


def _size_kw(args, size, fname):
    if size is None:
        if not args:
            # (torch: the shape is required; ``rand(())`` or ``rand(size=())`` is a 0-d sample)
            raise TypeError(f"{fname}() missing 1 required positional argument: 'size'")
        return args
    if args:
        raise TypeError(f"{fname}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (size,)


def _size_arg(size, fname="rand"):
    """The shape from ``rand(2, 3)``/``rand((2, 3))``: ints (or objects with
    ``__index__``; a bool not first), as torch's argument parser takes them."""
    packed = len(size) == 1 and isinstance(size[0], (tuple, list, _C.Size))
    if packed:
        size = tuple(size[0])
    shape = []
    for i, v in enumerate(size):
        if i or not isinstance(v, bool):     # (torch's parser refuses a bool first element only)
            try:
                shape.append(_operator.index(v))
                continue
            except TypeError:
                pass
        if packed or len(size) > 1:
            raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
        raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(v).__name__}")
    return shape


#: the autograd layer's recorder of a sampling op's node (set by
#: ``ptcore.autograd``): ``(name, out, inputs, error)`` gives ``out`` a node
#: whose backward passes zeros to ``inputs`` (torch's NormalBackward1/2/3,
#: BernoulliBackward0: samples carry no gradient to their parameters), or
#: raises ``error`` (torch's "derivative ... is not implemented").
SAMPLE_NODE = [None]


def _record_sample(name, t, out, inputs, error=None):
    rec = SAMPLE_NODE[0]
    if rec is not None and out is None:
        rec(name, t, inputs, error)


def _finish(t, out, requires_grad):
    if out is not None:
        if tuple(out.shape) != tuple(t.shape):
            out.resize_(t.shape)
        out.copy_(t)
        return out
    if requires_grad:
        _require_grad(t)
    return t


# ---------------------------------------------------------------------------
# public sampling functions
# ---------------------------------------------------------------------------

def _draw_into(t, kernel):
    """Draw ``kernel``'s distribution (uniform/normal on [0, 1) / (0, 1))
    into the contiguous float32/float64 CPU tensor ``t`` from the default
    generator (what ``_fill_contig`` does for it, without its dtype and
    device dispatch)."""
    n = t.numel()
    if n:
        g = default_generator
        s, off = g._take()
        g._advance(_K.fill_contiguous(kernel, t, n, s, off, 0.0, 1.0))
    return t


def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples on [0, 1) (shape positionally or as ``size=``)."""
    if size is None and generator is None and out is None and layout is None \
            and device is None and requires_grad is False and pin_memory is False and args:
        t = _K.draw_plain(False, args, dtype, default_generator)
        if t is not None:
            return t
    _factory_args("rand", dtype, requires_grad, pin_memory, out=out)
    t = _new(_size_kw(args, size, "rand"), dtype, device)
    _check_float(t.dtype, "check_uniform_bounds")
    _fill_contig(t, _K.fill_uniform_addr, generator, 0.0, 1.0)
    return _finish(t, out, requires_grad)


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (shape positionally or as ``size=``)."""
    if size is None and generator is None and out is None and layout is None \
            and device is None and requires_grad is False and pin_memory is False and args:
        t = _K.draw_plain(True, args, dtype, default_generator)
        if t is not None:
            return t
    _factory_args("randn", dtype, requires_grad, pin_memory, out=out)
    t = _new(_size_kw(args, size, "randn"), dtype, device, fname="randn")
    _check_float(t.dtype, "normal_kernel_cpu")
    _fill_contig(t, _K.fill_normal_addr, generator, 0.0, 1.0)
    return _finish(t, out, requires_grad)


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False, **kwargs):
    """Integers uniformly drawn from [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    _factory_args("randint", dtype, requires_grad, pin_memory, out=out)
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    if kwargs:
        raise TypeError(f"randint() got an unexpected keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list, _C.Size)):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif len(args) > 2:
        raise TypeError("randint() takes at most (low, high, size)")
    if low is None:
        low = 0
    if high is None or size is None:
        raise TypeError("randint() missing required arguments 'high' and/or 'size'")
    # (torch's SymInt low/high: ints or anything with __index__; not a bool or a float)
    low = _strict_symint(low, "randint", "low", 1)
    high = _strict_symint(high, "randint", "high", 2)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = _new((tuple(size),), dtype, device, default=_C.int64, fname="randint")
    _check_int_range(t.dtype, low, high - 1)
    _fill_contig(t, _K.fill_randint_addr, generator, low, high)
    return _finish(t, out, requires_grad)


def _check_int_range(dt, lo, hi):
    if dt.is_complex:
        raise NotImplementedError(f"random_ is not implemented for complex tensors ({dt})")
    if dt._category == 1:
        info = np.iinfo(dt._np)
        if lo < info.min or hi > info.max:
            raise RuntimeError(
                f"random_ expects 'from' and 'to' - 1 to be inside the range of {dt._name}: "
                f"[{info.min}, {info.max}], got [{lo}, {hi}]")
    elif dt.is_floating_point:
        # torch's check_from_to_in_range: both ends must be finite values of the dtype
        # (float16 tops out at 65504)
        big = float(np.finfo(dt._np).max) if dt._np is not None else 3.3895313892515355e38
        cname = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                 "float64": "double"}.get(dt._name, dt._name)
        if lo < -big:
            raise RuntimeError(f"from is out of bounds for {cname}")
        if hi > big:
            raise RuntimeError(f"to - 1 is out of bounds for {cname}")
    elif dt is _C.bool_:
        if lo < 0 or hi > 1:
            raise RuntimeError(f"random_ expects 'from' and 'to' - 1 to be inside [0, 1] for bool, got [{lo}, {hi}]")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0``, ..., ``n - 1``."""
    _factory_args("randperm", dtype, requires_grad, pin_memory, out=out)
    n = _strict_symint(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = _C.int64 if dtype is None else _C._as_dtype(_dtype_param(dtype, "randperm"))
    if dt in (_C.uint16, _C.uint32, _C.uint64, _C.bool_) or dt.is_complex:
        raise NotImplementedError(f"\"randperm\" not implemented for '{dt._legacy}'")
    if dt is _C.float16 and n > 2049:      # (torch's check: 2049 is the last exact half)
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    dev = _C._to_device(device)
    _C.empty(0, device=dev)                 # raises, naming why, when the device is unavailable
    t = _loop("randperm", dev, _randperm_cpu)(n, dev, generator)
    if dt is not _C.int64:
        if dt._category == 1 and n - 1 > np.iinfo(dt._np).max:
            raise RuntimeError(f"n is too large for result tensor type: '{dt._legacy}'")
        t = t.to(dt)
    return _finish(t, out, requires_grad)


def _randperm_cpu(n, device, generator):
    """The CPU loop of ``randperm``: an int64 permutation of ``0 .. n-1``."""
    t = _C.empty(n, dtype=_C.int64)
    g = _gen(generator)
    if n:
        s, off = g._take()
        g._advance(_K.randperm_addr(t.data_ptr(), n, s, off))
    return t


def _as_np64(x):
    if isinstance(x, _TensorBase):
        return x.detach().cpu().double().contiguous().numpy()
    return np.asarray(x, dtype=np.float64)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """Normal samples with the given mean(s) and standard deviation(s)."""
    if size is not None:
        # torch's (float mean, float std, size) overload: 0-d tensors without grad as numbers
        mean, std = number_arg(mean), number_arg(std)
        if isinstance(mean, _TensorBase) or isinstance(std, _TensorBase):
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}, {type(size).__name__}): "
                            f"a 'size' is taken only with float mean and std")
    mean_t = isinstance(mean, _TensorBase)
    std_t = isinstance(std, _TensorBase)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal(): with scalar mean and std a 'size' is required")
        _factory_args("normal", dtype, requires_grad, pin_memory, out=out)
        if not std >= 0:                    # (nan too)
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        t = _new((tuple(size),), dtype, device, fname="normal")
        _check_float(t.dtype, "normal_kernel_cpu")
        _fill_contig(t, _K.fill_normal_addr, generator, float(mean), float(std))
        return _finish(t, out, requires_grad)
    ref = mean if mean_t else std
    dt = ref.dtype
    if mean_t and std_t:
        dt = mean.dtype
    _check_float(dt, "normal_kernel_cpu")
    if not std_t and not std >= 0:          # (nan too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if isinstance(out, _TensorBase):
        _check_float(out.dtype, "normal_kernel_cpu")    # (torch samples into out's dtype)
    shape = _broadcast_pair(tuple(mean.shape), tuple(std.shape)) if (mean_t and std_t) else tuple(ref.shape)
    t = _loop("random_normal_tensor", ref.device, _normal_tensor_cpu)(mean, std, shape, dt, generator)
    _record_sample("NormalBackward" + ("3" if mean_t and std_t else "1" if mean_t else "2"), t, out,
                   (mean, std))
    return _finish(t, out, requires_grad)


def _normal_tensor_cpu(mean, std, shape, dt, generator):
    """The CPU loop of ``random_normal_tensor``: N(mean, std) with tensor
    ``mean`` and/or ``std``, of the broadcast ``shape`` and dtype ``dt``."""
    m = _as_np64(mean)
    s = _as_np64(std)
    if not np.all(s >= 0):                  # (nan too)
        raise RuntimeError(f"normal expects all elements of std >= 0.0")
    z = _C.empty(shape, dtype=_C.float64)
    _fill_contig(z, _K.fill_normal_addr, generator, 0.0, 1.0)
    vals = np.broadcast_to(m, shape) + np.broadcast_to(s, shape) * z.numpy()
    return _C.from_numpy(np.asarray(order="C", a=vals)).to(dt, copy=True)


def _broadcast_pair(a, b):
    """Broadcast shape of two shapes, with PyTorch's error message."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples with probabilities ``input`` (or the scalar ``p``)."""
    if not isinstance(input, _TensorBase):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not {type(input).__name__}")
    if p is not None:
        p = _float_param(p, "bernoulli", "p", 2)
    t = _C.empty(input.shape, dtype=input.dtype, device=input.device)
    if p is None:
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{input.dtype._legacy}'")
        # torch's kernel samples into the result (out's dtype): no complex one
        res_dt = out.dtype if isinstance(out, _TensorBase) else input.dtype
        if res_dt.is_complex and input.numel():       # (an empty input runs no kernel)
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_self_\" not implemented for '{res_dt._legacy}'")
        if input.dtype.is_complex and input.numel():      # (then the probabilities' dtype)
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{input.dtype._legacy}'")
        _bernoulli_tensor(t, input, generator)
        _record_sample("BernoulliBackward0", t, out, (input,))
    else:
        if t.dtype.is_complex:
            if t.numel():
                raise NotImplementedError(
                    f"\"bernoulli_scalar_cpu_\" not implemented for '{t.dtype._legacy}'")
        else:                   # (an empty complex input runs no kernel)
            _bernoulli_(t, p, generator)
        _record_sample("NotImplemented", t, out, (input,),
                       "derivative for aten::bernoulli is not implemented")
    return _finish(t, out, False)


def _bernoulli_tensor(t, probs, generator):
    return _loop("random_bernoulli", t.device, _bernoulli_tensor_cpu)(t, probs, generator)


def _bernoulli_tensor_cpu(t, probs, generator):
    """The CPU loop of ``random_bernoulli`` with probabilities ``probs``."""
    p = _as_np64(probs)
    if p.size and (np.any(p < 0) or np.any(p > 1) or np.any(np.isnan(p))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    p = np.asarray(order="C", a=np.broadcast_to(p, tuple(t.shape)))
    target = t if t.is_contiguous() else _C.empty(t.shape, dtype=t.dtype)
    g = _gen(generator)
    if target.numel():
        s, off = g._take()
        g._advance(_K.fill_contiguous(_K.fill_bernoulli_addr, target, p.size, s, off,
                                      p.ctypes.data, 1))
    if target is not t:
        t.copy_(target)
    return t


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices sampled with probabilities proportional to the rows of ``input``."""
    if not isinstance(input, _TensorBase):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype._legacy}")
    if isinstance(out, _TensorBase) and out.dtype is not _C.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._legacy}")
    num_samples = _strict_symint(num_samples, "multinomial", "num_samples", 2)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = input.shape[-1]
    if not replacement and num_samples > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if cats > (1 << 24):
        raise RuntimeError("number of categories cannot exceed 2^24")
    res = _loop("multinomial", input.device, _multinomial_cpu)(input, num_samples, bool(replacement),
                                                               generator)
    if input.dim() == 1:
        res = res.view(num_samples)
    return _finish(res, out, False)


def _multinomial_cpu(input, num_samples, replacement, generator):
    """The CPU loop of ``multinomial``: (rows, num_samples) int64 indices."""
    cats = input.shape[-1]
    p = _as_np64(input).reshape(-1, cats)
    _check_probs(p, replacement and num_samples > 1)
    p = np.asarray(order="C", a=p)
    rows = p.shape[0]
    res = _C.empty(rows, num_samples, dtype=_C.int64)
    g = _gen(generator)
    s, off = g._take()
    g._advance(_K.multinomial_addr(res.data_ptr(), p.ctypes.data, rows, cats, num_samples,
                                   bool(replacement), s, off))
    if not replacement and num_samples > 1:
        # (one sample: a row whose sum is positive has a positive category)
        short = np.nonzero((p > 0).sum(axis=1) < num_samples)[0]
        if short.size:
            _zero_probability_order(res, p, short)
    return res


def _check_probs(p, cdf_kernel):
    """torch's checks of the probability rows ``p`` (float64, rows x cats):
    its kernel with replacement (``cdf_kernel``, more than one sample) checks
    row by row, element by element; the other path checks all at once."""
    if not cdf_kernel:
        # (two reductions: a NaN makes the min fail the comparison, +inf is the max)
        if p.size and (not p.min() >= 0 or p.max() == np.inf):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(p.sum(axis=1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    for row in p:
        bad = ~(row >= 0) | ~np.isfinite(row)
        if bad.any():
            if not row[np.argmax(bad)] >= 0:       # (NaN too, as torch's `val >= 0` check)
                raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                               "infinity or NaN)")
        if not row.sum() > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _zero_probability_order(res, p, rows):
    """Rows ``rows`` of ``res`` (sampled without replacement from ``p``) that ran
    out of positive categories: after the positive ones, the zero-probability
    categories come in the order torch's ``topk`` of ``p / Exp(1)`` leaves its
    tied zeros in.  That order depends only on where the positive categories
    are and how they rank, so it is ``topk`` of their ranks (the kernel's
    order, largest first) with zeros elsewhere."""
    n = res.shape[1]
    for r in rows.tolist():
        npos = int((p[r] > 0).sum())
        keys = np.zeros(p.shape[1], dtype=np.float64)
        keys[res[r, :npos].numpy()] = np.arange(npos, 0, -1, dtype=np.float64)
        res[r] = topk(_C.from_numpy(keys), n).indices


def _like_fn(name):
    kernel = _K.fill_uniform_addr if name == "rand" else _K.fill_normal_addr

    normal = name != "rand"

    def f(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
        if generator is None and dtype is None and layout is None and device is None \
                and requires_grad is False and pin_memory is False and memory_format is None:
            # a contiguous float CPU input: its shape drawn at once
            t = _K.draw_like(normal, input, default_generator)
            if t is not None:
                return t
        t = _C._like(input, _dtype_param(dtype, name + "_like"), device, False, 0, None,
                     memory_format)
        if generator is None and (t.dtype is _C.float32 or t.dtype is _C.float64) \
                and _in_host_memory(t) and t.is_contiguous():
            # the common case: the fill kernel at once
            _draw_into(t, kernel)
        elif name == "rand":
            _check_float(t.dtype, "check_uniform_bounds")
            _fill_contig(t, _K.fill_uniform_addr, generator, 0.0, 1.0)
        else:
            _check_float(t.dtype, "normal_kernel_cpu")
            _fill_contig(t, _K.fill_normal_addr, generator, 0.0, 1.0)
        if requires_grad:
            _require_grad(t)
        return _pinned(t, pin_memory)
    f.__name__ = name + "_like"
    f.__doc__ = f"Like ``{name}`` with the shape (and dtype/device) of ``input``."
    return f


rand_like = _like_fn("rand")
randn_like = _like_fn("randn")


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, pin_memory=False, memory_format=None):
    """Like ``randint`` with the shape of ``input``."""
    if high is None:
        low, high = 0, low
    low = _strict_symint(low, "randint_like", "low", 2)
    high = _strict_symint(high, "randint_like", "high", 3)
    t = _C._like(input, _dtype_param(dtype, "randint_like"), device, False, 0, None,
                 memory_format)
    _random_(t, low, high, generator)
    return _pinned(t, pin_memory)


# ---------------------------------------------------------------------------
# in-place methods (Tensor.uniform_ ...)
# ---------------------------------------------------------------------------

_INT64_MAX = (1 << 63) - 1
_UNIFORM_TYPE_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                       "float64": "double"}


def _check_uniform_bounds(dt, low, high):
    """torch's check_uniform_bounds: both bounds finite values of the (real part's)
    dtype, ``from <= to``, and ``to - from`` representable in it."""
    real = dt.to_real() if dt.is_complex else dt
    if real is _C.complex32:
        real = _C.float16
    big = 3.3895313892515355e38 if real is _C.bfloat16 else float(np.finfo(real._np).max)
    name = _UNIFORM_TYPE_NAMES.get(real._name, real._name)
    for which, v in (("from", low), ("to", high)):
        if not -big <= v <= big:
            raise RuntimeError(f"{which} is out of bounds for {name}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    if high - low > big:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{name}>::max(), but "
                           f"found to={high} and from={low} which result in to-from to exceed "
                           f"the limit")


def _uniform_(t, low, high, generator):
    low = _float_param(low, "uniform_", "from", 1)
    high = _float_param(high, "uniform_", "to", 2)
    _check_float(t.dtype, "check_uniform_bounds")
    _check_uniform_bounds(t.dtype, low, high)
    _fill_contig(t, _K.fill_uniform_addr, generator, low, high)
    t._bump_version()
    return t


def _normal_(t, mean, std, generator):
    mean = _float_param(mean, "normal_", "mean", 1)
    std = _float_param(std, "normal_", "std", 2)
    _check_float(t.dtype, "normal_kernel_cpu")
    if not std >= 0:                        # (nan too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    _fill_contig(t, _K.fill_normal_addr, generator, float(mean), float(std))
    t._bump_version()
    return t


def _random_(t, low, high, generator):
    low = _strict_int(low, "random_", "from", 1)     # (None is no int either)
    if high is not None:
        high = _strict_int(high, "random_", "to", 2)
    dt = t.dtype
    if dt.is_complex:
        if high is None and (low == 0 or low is None):
            raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{dt._legacy}'")
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if high is None:
        if low != 0 and low is not None:
            low, high = 0, int(low)
        else:
            low = 0
            if dt.is_floating_point:
                digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dt._name]
                high = (1 << digits) + 1
            elif dt is _C.bool_:
                high = 2
            else:
                high = int(np.iinfo(dt._np).max) + 1
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_int_range(dt, low, high - 1)
    if high > _INT64_MAX:
        # int64's whole range [low, 2**63): the kernel's exclusive int64 bound cannot be
        # 2**63, so draw v in [-high, -low) and store -(v + 1), in [low, high)
        _fill_contig(t, _K.fill_randint_addr, generator, -high, -low)
        flip = _loop_for("random_.flip", t.device, _flip_host)
        if flip is not None:
            flip(t)
        else:                               # (a device without the loop: the ops' own kernels)
            t.add_(1).neg_()
        t._bump_version()
        return t
    _fill_contig(t, _K.fill_randint_addr, generator, low, high)
    t._bump_version()
    return t


def _flip_host(t):
    """``t = -(t + 1)`` in place on the CPU, without a version bump per step
    (random_'s int64 draw over [low, 2**63))."""
    a = t.numpy()
    np.negative(np.add(a, 1, out=a), out=a)


def _bernoulli_(t, p, generator):
    if isinstance(p, _TensorBase):
        assert_no_internal_overlap(t)
        assert_no_partial_overlap(t, p)
        _bernoulli_tensor(t, p, generator)
    else:
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        if t.dtype.is_complex:
            raise NotImplementedError("bernoulli_ is not implemented for complex tensors")
        assert_no_internal_overlap(t)
        _loop("random_bernoulli", t.device, _bernoulli_scalar_cpu)(t, p, generator)
    t._bump_version()
    return t


def _bernoulli_scalar_cpu(t, p, generator):
    """The CPU loop of ``random_bernoulli`` with one probability ``p``."""
    one = np.array([p], dtype=np.float64)
    target = t if t.is_contiguous() else _C.empty(t.shape, dtype=t.dtype)
    g = _gen(generator)
    if target.numel():
        s, off = g._take()
        g._advance(_K.fill_contiguous(_K.fill_bernoulli_addr, target, target.numel(), s, off,
                                      one.ctypes.data, 0))
    if target is not t:
        t.copy_(target)
    return t


def _exponential_(t, lambd, generator):
    lambd = _float_param(lambd, "exponential_", "lambd", 1)
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {t.dtype._legacy}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _fill_contig(t, _K.fill_exponential_addr, generator, float(lambd))
    t._bump_version()
    return t


# the device kernels' names of the CPU fills (the device loop "random_fill")
_DEVICE_KINDS = {_K.fill_uniform_addr: "uniform", _K.fill_normal_addr: "normal",
                 _K.fill_randint_addr: "randint", _K.fill_exponential_addr: "exponential"}
_CPU_FILLS = {kind: kernel for kernel, kind in _DEVICE_KINDS.items()}


# Tensor methods (torch's method signatures: no out=)
@_method_form("bernoulli")
def _bernoulli_method(self, p=None, *, generator=None):
    """``Tensor.bernoulli(*, generator)``: 0/1 samples with probabilities ``self``;
    ``bernoulli(p)`` samples with the scalar probability ``p`` (shape and dtype of ``self``)."""
    return bernoulli(self, p, generator=generator)


@_method_form("multinomial")
def _multinomial_method(self, num_samples, replacement=False, *, generator=None):
    """See :func:`ptcore.multinomial`."""
    return multinomial(self, num_samples, replacement, generator=generator)


_bernoulli_method.__name__ = "bernoulli"
_multinomial_method.__name__ = "multinomial"

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "rand_like", "randn_like", "randint_like"]

# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "random")
del _bind_module
