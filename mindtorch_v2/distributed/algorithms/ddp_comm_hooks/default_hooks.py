"""torch.distributed.algorithms.ddp_comm_hooks.default_hooks: the communication hooks
DistributedDataParallel.register_comm_hook takes. Each gets a GradBucket and returns a Future of
the bucket's averaged gradients: plain all_reduce, or all_reduce in float16/bfloat16 (half the bytes)
written back into the bucket's dtype."""
import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _group(process_group):
    return dist.group.WORLD if process_group is None else process_group


def _averaged(tensor, group):
    """A Future of tensor summed over the group after dividing it by the group's size (in place)."""
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future()


def _allreduce_fut(process_group, tensor):
    """A Future of tensor itself, averaged over the group in place (PowerSGD's hooks use it too)."""
    return _averaged(tensor, _group(process_group)).then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()

    def write_back(fut):
        return buffer.copy_(fut.value()[0])
    return _averaged(buffer.to(dtype), _group(process_group)).then(write_back)


def fp16_compress_hook(process_group, bucket):
    return _compress_hook(torch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    return _compress_hook(torch.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    """hook run on the bucket's buffer cast to dtype; its result written into that buffer (PyTorch's
    in-place decompression), which the reducer copies into the gradients."""
    def wrapped(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        return hook(hook_state, bucket).then(lambda fut: bucket.buffer().copy_(fut.value()))
    wrapped.__name__ = f"{'fp16' if dtype is torch.float16 else 'bf16'}_compress_wrapper_hook"
    return wrapped


def fp16_compress_wrapper(hook):
    return _compress_wrapper(torch.float16, hook)


def bf16_compress_wrapper(hook):
    return _compress_wrapper(torch.bfloat16, hook)
