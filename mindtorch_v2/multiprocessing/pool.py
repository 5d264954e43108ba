"""torch.multiprocessing.pool: a multiprocessing Pool whose task and result queues are our SimpleQueues
(tensors pass as shared memory) and whose workers collect garbage before they exit.

PyTorch 2.13's Pool predates Python 3.8's Pool and fails to start (SimpleQueue() without its ctx,
self.Process without its ctx); this one takes the same arguments as multiprocessing.Pool and works.
"""
import gc
import multiprocessing.pool

from .queue import SimpleQueue


def clean_worker(*args, **kwargs):
    multiprocessing.pool.worker(*args, **kwargs)
    # The standard worker leaves reference cycles behind: collect them so that the destructors of the
    # tensors they hold run (releasing shared memory) before the process exits.
    gc.collect()


class Pool(multiprocessing.pool.Pool):
    """multiprocessing.Pool over SimpleQueues that send tensors through shared memory."""

    def _setup_queues(self):
        self._inqueue = SimpleQueue(ctx=self._ctx)
        self._outqueue = SimpleQueue(ctx=self._ctx)
        self._quick_put = self._inqueue._writer.send
        self._quick_get = self._outqueue._reader.recv

    @staticmethod
    def Process(ctx, *args, **kwds):
        # Every worker, the first ones and those replacing exited ones, is created here.
        kwds["target"] = clean_worker
        return ctx.Process(*args, **kwds)
