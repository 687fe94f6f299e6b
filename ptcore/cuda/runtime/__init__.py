"""The CUDA runtime of ptcore (internal): the process state (driver, lazy
initialisation, current device and streams, :mod:`.state`), the storages in
allocator blocks (:mod:`.device_storage`) and tensors on a device: transfers,
copies between devices, pinned memory (:mod:`.tensors`)."""
