"""torch.distributed.algorithms.ddp_comm_hooks.default_hooks (PyTorch 2.13's code): allreduce and
the fp16/bf16 compression hooks of DistributedDataParallel.register_comm_hook."""
from __future__ import annotations  # torch.futures is not a module here: the annotations stay strings

from collections.abc import Callable
from typing import Any, cast
import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist
__all__ = ['allreduce_hook', 'fp16_compress_hook', 'bf16_compress_hook', 'fp16_compress_wrapper', 'bf16_compress_wrapper']

def _allreduce_fut(process_group: dist.ProcessGroup, tensor: torch.Tensor) -> torch.futures.Future[torch.Tensor]:
    group_to_use = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group_to_use.size())
    return dist.all_reduce(tensor, group=group_to_use, async_op=True).get_future().then(lambda fut: fut.value()[0])

def allreduce_hook(process_group: dist.ProcessGroup, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return _allreduce_fut(process_group, bucket.buffer())

def _compress_hook(dtype: torch.dtype, process_group: dist.ProcessGroup, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    group_to_use = process_group if process_group is not None else dist.group.WORLD
    world_size = group_to_use.size()
    buffer = cast(tuple[torch.Tensor, ...], bucket)[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed_tensor = buffer.to(dtype).div_(world_size)

    def decompress(fut):
        decompressed_tensor = buffer
        value = fut if isinstance(fut, torch.Tensor) else fut.value()[0]
        decompressed_tensor.copy_(value)
        return decompressed_tensor
    if torch.compiler.is_compiling():
        grad = dist._functional_collectives.all_reduce(compressed_tensor, 'sum', group_to_use)
        return decompress(grad)
    else:
        fut = dist.all_reduce(compressed_tensor, group=group_to_use, async_op=True).get_future()
        return fut.then(decompress)

def fp16_compress_hook(process_group: dist.ProcessGroup, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return _compress_hook(torch.float16, process_group, bucket)

def bf16_compress_hook(process_group: dist.ProcessGroup, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return _compress_hook(torch.bfloat16, process_group, bucket)

def fp16_compress_wrapper(hook: Callable[[Any, dist.GradBucket], torch.futures.Future[torch.Tensor]]) -> Callable[[Any, dist.GradBucket], torch.futures.Future[torch.Tensor]]:

    def fp16_compress_wrapper_hook(hook_state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        bucket.set_buffer(bucket.buffer().to(torch.float16))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            decompressed_tensor = bucket.buffer()
            decompressed_tensor.copy_(fut.value())
            return decompressed_tensor
        return fut.then(decompress)
    return fp16_compress_wrapper_hook

def bf16_compress_wrapper(hook: Callable[[Any, dist.GradBucket], torch.futures.Future[torch.Tensor]]) -> Callable[[Any, dist.GradBucket], torch.futures.Future[torch.Tensor]]:

    def bf16_compress_wrapper_hook(hook_state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        bucket.set_buffer(bucket.buffer().to(torch.bfloat16))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            decompressed_tensor = bucket.buffer()
            decompressed_tensor.copy_(fut.value())
            return decompressed_tensor
        return fut.then(decompress)
    return bf16_compress_wrapper_hook
