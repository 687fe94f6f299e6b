"""The CUDA caching allocator (internal): the bookkeeping of blocks and pools
as extension types (:mod:`.caching_allocator`), the backends, the per-device
allocators and the ``torch.cuda`` memory functions over them
(:mod:`.device_allocators`), and the formatting of their statistics."""
