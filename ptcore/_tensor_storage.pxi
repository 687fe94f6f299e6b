# ptcore._tensor, host memory: the caching host allocator, kernel sections, and Storage
# (resize_, sharing, retired blocks, external and DLPack memory).
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# Host allocator: aligned small blocks, mmap'd large blocks with huge pages,
# a bounded cache of freed large blocks (no page faults on reuse), and lazily
# zero-filled fresh mappings for zeros().
# ---------------------------------------------------------------------------

cdef extern from "ptc_alloc.h":
    void* ptc_host_alloc(size_t n, int zero) nogil
    void ptc_host_free(void* p, size_t n) nogil
    void ptc_host_empty_cache() nogil
    void ptc_host_tune()
    size_t ptc_large_threshold
    size_t ptc_cache_limit
    size_t ptc_cache_bytes
    int ptc_cache_n
    uint64_t ptc_stat_hits, ptc_stat_maps, ptc_stat_unmaps
    size_t ptc_live_bytes
    int64_t ptc_total_live


ptc_host_tune()


def _host_allocator_stats():
    """Counters of the host allocator (large blocks only)."""
    return {
        "cached_bytes": ptc_cache_bytes, "cached_blocks": ptc_cache_n,
        "cache_limit": ptc_cache_limit, "large_threshold": ptc_large_threshold,
        "live_large_bytes": ptc_live_bytes, "cache_hits": ptc_stat_hits,
        "maps": ptc_stat_maps, "unmaps": ptc_stat_unmaps,
    }


def _host_allocated_bytes():
    """Bytes of all live host blocks the allocator gave out (the profiler's memory)."""
    return ptc_total_live


def _host_empty_cache():
    """Return all cached large host blocks to the operating system."""
    ptc_host_empty_cache()


def _set_host_cache_limit(Py_ssize_t nbytes):
    global ptc_cache_limit
    if nbytes < 0:
        raise ValueError(f"host cache limit must be >= 0 bytes, got {nbytes}")
    ptc_cache_limit = nbytes
    ptc_host_empty_cache()


# ---------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------

cdef enum:
    STORAGE_HOST = 0        # ptc_host_alloc
    STORAGE_EXTERNAL = 1    # memory owned by _owner (NumPy array, buffer, shm)
    STORAGE_DLPACK = 2      # DLPack managed tensor, released through its deleter
    STORAGE_DEVICE = 3      # device memory owned by _owner (ptcore.cuda allocation)
    STORAGE_META = 4        # the meta device: a byte count and no memory (_data is always NULL)
    STORAGE_WRAPPER = 5     # a wrapper subclass's (Tensor._make_wrapper_subclass): no bytes at all

cdef extern from "ptc_dlpack.h":
    void ptc_dlpack_release(void* managed, int versioned) nogil


cdef extern from *:
    """
    /* inference mode is active on this thread (set by autograd.grad_mode) */
    static __thread int ptc_inference_on = 0;
    """
    int ptc_inference_on


# Kernel sections (see _tensor.pxd): how many threads run one now, and how many
# of those are this thread's (a writer never waits for itself).
cdef extern from *:
    """
    #include <sched.h>
    #include <unistd.h>
    static int64_t ptc_sections = 0;
    static __thread int64_t ptc_sections_mine = 0;
    static inline void ptc_sections_add(int64_t d) {
        __atomic_add_fetch(&ptc_sections, d, __ATOMIC_SEQ_CST);
        ptc_sections_mine += d;
    }
    static inline int64_t ptc_sections_others(void) {
        return __atomic_load_n(&ptc_sections, __ATOMIC_SEQ_CST) - ptc_sections_mine;
    }
    """
    void ptc_sections_add(int64_t d) nogil
    int64_t ptc_sections_others() nogil
    int sched_yield() nogil
    int usleep(unsigned int us) nogil


cdef void ptc_kernel_enter() noexcept nogil:
    ptc_sections_add(1)


cdef void ptc_kernel_exit() noexcept nogil:
    ptc_sections_add(-1)


cdef int _wait_for_readers() except -1:
    """Return once no other thread runs a kernel section, holding the GIL from
    the last test on (so no section can start before the caller's change is
    done).  Sections leave without the GIL, so the wait mostly keeps it; now
    and then it lets go for a moment, for a section that must take the GIL to
    finish (one raising an error)."""
    cdef int spins = 0
    while ptc_sections_others() > 0:
        spins += 1
        if spins < 64:
            sched_yield()
        elif spins % 64:
            usleep(20)
        else:
            with nogil:
                usleep(20)
    return 0


def _kernel_sections_running():
    """Kernel sections other threads run now (tests)."""
    return ptc_sections_others()


def _set_inference_mode(bint on):
    """Storage made on this thread while ``on`` belongs to inference tensors
    (PyTorch's InferenceMode: every tensor sharing it is an inference
    tensor).  Returns the previous setting."""
    global ptc_inference_on
    cdef bint old = ptc_inference_on
    ptc_inference_on = on
    return old


class HostAllocationError(MemoryError, RuntimeError):
    """A host (CPU) allocation that failed: a ``MemoryError`` and, as torch's CPU allocator
    error, a ``RuntimeError`` (code written for either ``except`` catches it)."""


cdef object _storage_nbytes_arg(object v):
    """A storage's byte count as torch's parser reads it: an int within int64 (past it
    torch's ValueError 'Overflow when unpacking long long')."""
    v = _operator.index(v)
    if not -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        raise IntArgOverflowError("Overflow when unpacking long long")
    return v


cdef bytes _storage_bytes_from(object seq):
    """The bytes of ``UntypedStorage(sequence)``: each item an int, kept modulo 256 (torch's
    RuntimeError names an item of another type)."""
    if isinstance(seq, (bytes, bytearray)):
        return bytes(seq)
    cdef list out = []
    for v in seq:
        if not isinstance(v, int):          # (a bool is one; a NumPy integer is not)
            raise RuntimeError(f"{_root_name}.UntypedStorage(): tried to construct a storage from "
                               f"a sequence ({type(seq).__name__}), but one of the items was of "
                               f"type {type(v).__name__} instead of int")
        out.append(v & 0xFF)
    return bytes(out)


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class Storage:
    """Untyped bytes on a device (``torch.UntypedStorage``).

    ``Storage(nbytes)`` allocates uninitialised host memory.
    """

    def __cinit__(self, *args, **kwargs):
        self._inference = ptc_inference_on

    def __init__(self, nbytes=0, device=None):
        cdef bytes data = None
        if isinstance(nbytes, (bool, float, complex)) or nbytes is None or (
                not hasattr(nbytes, "__index__") and not hasattr(nbytes, "__len__")):
            raise RuntimeError(f"{_root_name}.UntypedStorage(): Expected a sequence type, but "
                               f"got {type(nbytes).__name__}")
        if not hasattr(nbytes, "__index__"):
            # a sequence of ints (bytes, a list ...): one byte each, wrapped as torch's
            data = _storage_bytes_from(nbytes)
            nbytes = len(data)
        nbytes = _storage_nbytes_arg(nbytes)
        dev = _as_device(device)
        if dev.type != "cpu":
            _require_cpu(dev, "Storage")
            raise NotImplementedError(
                f"Storage(nbytes, device='{dev}'): use ptcore.empty(nbytes, dtype=ptcore.uint8, "
                f"device='{dev}').untyped_storage() for device storage")
        if nbytes < 0:                      # (torch: its allocator's RuntimeError)
            raise RuntimeError(f"Storage: size must be non-negative, got {nbytes}")
        if self._data != NULL or self._owner is not None:
            raise RuntimeError("Storage already initialised")
        _host_storage_init(self, nbytes, False)
        if data:
            memcpy(self._data, <const char*>data, <size_t>nbytes)

    def __dealloc__(self):
        if self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL

    cdef int _release_block(self) except -1:
        """Give up the current memory block before it is replaced in place:
        freed at once, or kept alive until this storage dies when a NumPy
        array, buffer or DLPack capsule may still view it (no use after free)."""
        cdef _RetiredBlock b
        if self._exported or self._dl_live > 0:
            b = _RetiredBlock.__new__(_RetiredBlock)
            b._data = self._data
            b._nbytes = self._nbytes
            b._kind = self._kind
            b._dl_managed = self._dl_managed
            b._dl_versioned = self._dl_versioned
            b._owner = self._owner
            if self._retired is None:
                self._retired = []
            self._retired.append(b)
        elif self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL
        self._dl_managed = NULL
        self._owner = None
        return 0

    cdef int _realloc(self, Py_ssize_t nbytes) except -1:
        """Resize in place to ``nbytes`` (a new host block; the common prefix is
        copied); every tensor viewing this storage sees the new block.

        Waits until no other thread runs a kernel section (one may be reading
        the old block), then keeps the GIL until the new block is in place.
        A storage made smaller is marked ``_shrunk``: from then on every
        access through a tensor checks that the storage still covers it."""
        if nbytes < 0:
            raise RuntimeError(f"Storage.resize_: size must be non-negative, got {nbytes}")
        _wait_for_readers()
        if not self._resizable or self._nexports > 0:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if nbytes < self._nbytes:
            self._shrunk = True
        if self._kind == STORAGE_META:
            self._nbytes = nbytes           # no memory: only the byte count changes
            return 0
        if self._kind == STORAGE_DEVICE:
            return _realloc_device(self, nbytes)
        if self.device._type_code != 0:
            raise RuntimeError(f"resizing a storage on {self.device} is not supported")
        cdef void* p = NULL
        if nbytes > 0:
            p = ptc_host_alloc(<size_t>nbytes, False)      # (with the GIL: see _wait_for_readers)
            if p == NULL:
                raise HostAllocationError(f"ptcore: failed to allocate {nbytes} bytes of host memory")
        cdef Py_ssize_t keep = nbytes if nbytes < self._nbytes else self._nbytes
        if keep > 0:
            memcpy(p, self._data, keep)
        self._release_block()
        self._shared = None         # a shared-memory block is replaced by a private one
        self._data = <char*>p
        self._nbytes = nbytes
        self._kind = STORAGE_HOST
        return 0

    def resize_(self, size):
        """Resize to ``size`` bytes in place (``UntypedStorage.resize_``).

        Raises RuntimeError "Trying to resize storage that is not resizable"
        for borrowed memory (``from_numpy``, DLPack imports, shared memory) and
        while a NumPy array from ``Tensor.numpy()`` or a buffer-protocol export
        still views it.  After a DLPack export the old block is kept alive
        (until the storage dies) for the consumer.
        """
        if isinstance(size, (bool, _TensorBase)) or not hasattr(size, "__index__"):
            raise RuntimeError(f"resize_ expects an int, but got {type(size).__name__}")
        self._realloc(_storage_nbytes_arg(size))
        return self

    def resizable(self):
        """Whether ``resize_`` may reallocate this storage."""
        return self._resizable and self._nexports == 0

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def __sizeof__(self):
        # the object and its bytes (torch's ``UntypedStorage.__sizeof__``: ``sys.getsizeof``
        # is how torchinfo and others measure a tensor's memory)
        return object.__sizeof__(self) + self._nbytes

    def data_ptr(self):
        return <Py_ssize_t><uintptr_t>self._data

    def element_size(self):
        return 1

    def is_shared(self):
        return self._shared is not None

    def is_pinned(self, device="cuda"):
        return False

    def share_memory_(self):
        """Move this storage to shared memory in place (no-op when already shared).

        Every tensor viewing the storage sees the shared memory; returns self.
        """
        _module_hook(_share_storage_fn, "share_memory_")(self)
        return self

    def fill_(self, value):
        """Set every byte to ``value`` (a Python int, wrapped to a byte as torch's);
        returns self."""
        if type(value) is not int and type(value) is not bool:
            raise RuntimeError(f"fill_ expects int, but got {type(value).__name__}")
        if not -0x8000000000000000 <= value <= 0xFFFFFFFFFFFFFFFF:
            raise IntArgOverflowError("fill_: value out of range")
        if self._nbytes:
            _tensor_from_storage(self, dtype_from_num(PT_UINT8), [self._nbytes], [1], 0) \
                .fill_(value & 0xFF)
        return self

    def copy_(self, src, non_blocking=None):
        """Copy the bytes of storage ``src`` (an untyped or typed storage of the same
        byte size) into this one; returns self."""
        if non_blocking is not None and not isinstance(non_blocking, bool):
            raise TypeError(f"copy_(): argument 'non_blocking' must be bool, not "
                            f"{type(non_blocking).__name__}")
        cdef object u = src if isinstance(src, Storage) else getattr(src, "_untyped_storage", None)
        if not isinstance(u, Storage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not "
                            f"{type(src).__name__}")
        cdef Storage other = <Storage>u
        if other._nbytes != self._nbytes:
            raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src was "
                               f"{other._nbytes} bytes")
        if self._nbytes:
            u8 = dtype_from_num(PT_UINT8)
            _tensor_from_storage(self, u8, [self._nbytes], [1], 0).copy_(
                _tensor_from_storage(other, u8, [other._nbytes], [1], 0))
        return self

    def untyped(self):
        """This storage (``TypedStorage.untyped()``'s counterpart: it is already untyped)."""
        return self

    cdef tuple _byte_range(self, idx, str what):
        """``(start, stop)`` of a byte index or a step-1 slice, bounds-checked."""
        cdef Py_ssize_t i, start, stop, step
        if self.device._type_code != 0:
            raise NotImplementedError(f"{what} of a storage on {self.device}: copy it to the "
                                      "CPU first")
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self._nbytes)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 "
                                   "is supported")
            return start, (stop if stop > start else start)
        i = _operator.index(idx)
        if i < 0:
            i += self._nbytes
        if i < 0 or i >= self._nbytes:
            raise IndexError(f"index {idx} out of range for storage of size {self._nbytes}")
        return i, i + 1

    def __getitem__(self, idx):
        """A byte (an int), or for a slice a storage sharing those bytes (as torch's): it keeps
        this storage alive, and a block this storage later gives up (``resize_``,
        ``share_memory_``) stays alive for it."""
        start, stop = self._byte_range(idx, "indexing")
        if not isinstance(idx, slice):
            return (<unsigned char*>self._data)[<Py_ssize_t>start]
        self._exported = True
        return _external_storage(self._data + <Py_ssize_t>start, stop - start, self, self.device)

    def __setitem__(self, idx, value):
        """Set a byte, or fill a slice's bytes, with ``value`` (0..255)."""
        start, stop = self._byte_range(idx, "assignment")
        v = _operator.index(value)
        if not 0 <= v <= 255:
            raise RuntimeError(f"value {value} does not fit in a byte")
        if stop > start:
            memset(self._data + <Py_ssize_t>start, <int>v, <size_t>(stop - start))

    @staticmethod
    def from_file(filename, shared=False, Py_ssize_t nbytes=0):
        """A host storage of the first ``nbytes`` bytes of ``filename``, mapped from the
        file (``torch.UntypedStorage.from_file``): with ``shared=True`` writes reach the file
        (and every process that maps it), else the mapping is private (copy-on-write) and the
        file stays as it is.  Pages are read when touched: safetensors maps its files so."""
        if nbytes < 0:
            raise RuntimeError(f"from_file: nbytes must be non-negative, got {nbytes}")
        if nbytes == 0:                     # (torch does not open the file then)
            return Storage(0)
        path = _os.fspath(filename)
        if shared:
            _prepare_shared_file(path, nbytes)
        try:
            size = _os.path.getsize(path)
        except OSError as err:
            raise RuntimeError(f"unable to open file <{path}> in "
                               f"{'read-write' if shared else 'read-only'} mode: "
                               f"{err.strerror} ({err.errno})") from None
        if size < nbytes:
            raise RuntimeError(f"file <{path}> size <{size}> is smaller than the required "
                               f"mapping size <{nbytes}>")
        arr = _np.memmap(path, dtype=_np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        return _external_storage(<char*><uintptr_t>arr.ctypes.data, nbytes, arr, _as_device(None))

    def tolist(self):
        if self.device._type_code != 0:
            raise RuntimeError("tolist() of a device storage: copy it to the CPU first")
        return list(self._bytes())

    cdef bytes _bytes(self):
        if self._nbytes == 0:
            return b""
        return (<char*>self._data)[:self._nbytes]

    def __repr__(self):
        return f"<ptcore.Storage of {self._nbytes} bytes on {self.device}>"

    def __reduce__(self):
        if self.device._type_code != 0:
            raise RuntimeError("pickling a device storage: copy it to the CPU first")
        return (_storage_from_bytes, (self._bytes(),))

    @property
    def _kind_name(self):
        return ("host", "external", "dlpack", "device", "meta")[self._kind]

    def _move_to_buffer(self, owner, handle):
        """Move this storage's bytes into ``owner``'s writable buffer, in place.

        ``owner`` (e.g. a memoryview of a shared mmap) must expose a writable
        contiguous buffer of at least ``nbytes`` bytes and is kept alive by
        the storage; every tensor viewing this storage sees the new memory.
        The old memory is released.  ``handle`` becomes ``_shared``.
        Used by ``share_memory_()`` (ptcore.multiprocessing).  Internal.
        """
        cdef Py_buffer view
        if self.device._type_code != 0:
            raise RuntimeError(f"_move_to_buffer: storage is on {self.device}, not the CPU")
        PyObject_GetBuffer(owner, &view, PyBUF_WRITABLE)
        _wait_for_readers()         # a kernel in another thread may be using the old block
        cdef char* dst = <char*>view.buf
        cdef Py_ssize_t blen = view.len
        PyBuffer_Release(&view)
        if blen < self._nbytes:
            raise ValueError(f"_move_to_buffer: buffer of {blen} bytes for a storage of {self._nbytes} bytes")
        if self._nbytes:
            memcpy(dst, self._data, self._nbytes)
        self._release_block()
        self._data = dst
        self._kind = STORAGE_EXTERNAL
        self._owner = owner
        self._shared = handle
        # still resizable (as PyTorch's shared storages): resize_ moves it to a
        # private host block; a NumPy view of the old block blocks the resize


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _RetiredBlock:
    """A memory block a storage replaced in place while exporters may still
    view it; freed when the storage (which the exporters keep alive) dies."""
    cdef char* _data
    cdef Py_ssize_t _nbytes
    cdef int _kind
    cdef void* _dl_managed
    cdef bint _dl_versioned
    cdef object _owner

    def __dealloc__(self):
        if self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL


cdef int _realloc_device(Storage self, Py_ssize_t nbytes) except -1:
    """Device memory: the device runtime's hook (``DEVICE_REALLOC``) makes
    a new storage of ``nbytes`` on the device holding the common prefix
    (copied on the device, stream-ordered); this storage takes over its
    block, and the old block goes back to its allocator (or, after a
    DLPack export, stays alive with this storage)."""
    hook = DEVICE_REALLOC.get(self.device._type_code)
    if hook is None:
        raise RuntimeError(f"resizing a storage on {self.device} is not supported")
    cdef Storage other = <Storage?>hook(self, nbytes)
    if other.device != self.device or other._kind != STORAGE_DEVICE or other._nbytes != nbytes:
        raise RuntimeError("DEVICE_REALLOC hook returned an unfit storage")
    self._release_block()
    self._data = other._data
    self._owner = other._owner
    self._nbytes = nbytes
    other._data = NULL
    other._owner = None
    other._nbytes = 0
    return 0


cdef int _host_storage_init(Storage st, Py_ssize_t nbytes, bint zero) except -1:
    cdef void* p = NULL
    if nbytes > 0:
        # with the GIL: a caller that read a tensor's geometry before allocating
        # uses it after, and another thread must not change it in between
        p = ptc_host_alloc(<size_t>nbytes, zero)
        if p == NULL:
            raise HostAllocationError(f"ptcore: failed to allocate {nbytes} bytes of host memory")
    st._data = <char*>p
    st._nbytes = nbytes
    st._kind = STORAGE_HOST
    st._resizable = True
    st.device = _CPU
    return 0


cdef Storage _new_host_storage(Py_ssize_t nbytes, bint zero):
    cdef Storage st = Storage.__new__(Storage)
    _host_storage_init(st, nbytes, zero)
    return st


cdef Storage _external_storage(char* data, Py_ssize_t nbytes, object owner, device dev):
    cdef Storage st = Storage.__new__(Storage)
    st._data = data
    st._nbytes = nbytes
    st._kind = STORAGE_EXTERNAL if dev._type_code == 0 else STORAGE_DEVICE
    st._owner = owner
    st.device = dev
    return st


def _storage_from_bytes(bytes b):
    cdef Storage st = _new_host_storage(len(b), False)
    if len(b):
        memcpy(st._data, <const char*>b, len(b))
    return st


def _storage_from_pointer(Py_ssize_t ptr, Py_ssize_t nbytes, owner, dev=None):
    """Wrap memory owned by ``owner`` (kept alive) as a Storage.  Internal."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if ptr == 0 and nbytes > 0:
        raise ValueError("null pointer with a non-zero size")
    return _external_storage(<char*><uintptr_t>ptr, nbytes, owner, _as_device(dev))


cdef Storage _dlpack_storage(char* data, Py_ssize_t nbytes, void* managed, bint versioned, device dev):
    cdef Storage st = Storage.__new__(Storage)
    st._data = data
    st._nbytes = nbytes
    st._kind = STORAGE_DLPACK
    st._dl_managed = managed
    st._dl_versioned = versioned
    st.device = dev
    return st


def _meta_storage(Py_ssize_t nbytes, dev):
    """A storage of ``nbytes`` bytes on the meta device ``dev``: no memory
    (its ``_data`` stays NULL, and every data path of the core routes meta
    tensors to the meta runtime's ops, never to a host loop).  Internal."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    cdef device d = _as_device(dev)
    if d._type_code != 2:
        raise ValueError(f"_meta_storage: {d} is not the meta device")
    cdef Storage st = Storage.__new__(Storage)
    st._data = NULL
    st._nbytes = nbytes
    st._kind = STORAGE_META
    st._resizable = True
    st.device = d
    return st


# device type code -> hook(storage, nbytes): a new resizable storage of
# nbytes on the storage's device holding the common prefix (Storage._realloc
# of device memory; the CUDA runtime registers its own)
DEVICE_REALLOC = {}

cdef Storage _EMPTY_STORAGE = _new_host_storage(0, False)


def _prepare_shared_file(path, Py_ssize_t nbytes):
    """What torch's shared file mapping does before mapping ``nbytes`` of ``path``: open it
    read-write, creating it (mode 0600) when missing, and grow it to ``nbytes`` when shorter
    (then, as torch's MapAllocator, write one zero byte at its start: the file's first byte
    is 0 after a growth).  Torch's errors for what cannot be opened or resized."""
    try:
        fd = _os.open(path, _os.O_RDWR | _os.O_CREAT, 0o600)
    except OSError as err:
        raise RuntimeError(f"unable to open file <{path}> in read-write mode: "
                           f"{err.strerror} ({err.errno})") from None
    try:
        if _os.fstat(fd).st_size < nbytes:
            try:
                _os.ftruncate(fd, nbytes)
                _os.write(fd, b"\0")
            except OSError as err:
                raise RuntimeError(f"unable to resize file <{path}> to the right size: "
                                   f"{err.strerror} ({err.errno})") from None
    finally:
        _os.close(fd)
