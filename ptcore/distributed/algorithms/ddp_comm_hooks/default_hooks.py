"""torch's default DDP communication hooks
(``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``), for
``DistributedDataParallel.register_comm_hook(state, hook)``: ``state`` is the process
group (None: the default group)."""
import ptcore
import ptcore.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _group_size(group):
    return dist.get_world_size(group)


def _allreduce_fut(process_group, tensor):
    """Average ``tensor`` over the group (divided first, then summed): a future of it."""
    tensor.div_(_group_size(process_group))
    work = dist.all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The built-in behaviour as a hook: the bucket averaged over the group."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(_group_size(process_group))
    work = dist.all_reduce(compressed, group=process_group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """All-reduce the bucket in float16 (half the bytes), averaged, written back."""
    return _compress_hook(ptcore.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As :func:`fp16_compress_hook` in bfloat16."""
    return _compress_hook(ptcore.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(state, bucket):
        # as torch's: the hook runs on the bucket cast to ``dtype``, its result cast back
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(state, bucket)

        def decompress(fut):
            out = bucket.buffer()
            out.copy_(fut.value())
            return out
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """``hook`` on the bucket rounded to float16 first."""
    return _compress_wrapper(ptcore.float16, hook)


def bf16_compress_wrapper(hook):
    """``hook`` on the bucket rounded to bfloat16 first."""
    return _compress_wrapper(ptcore.bfloat16, hook)
