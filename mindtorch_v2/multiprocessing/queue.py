"""torch.multiprocessing.queue: Queue and SimpleQueue whose pipe ends are ConnectionWrappers, so that
what goes through them is pickled by ForkingPickler, where init_reductions registered the tensor and
storage reductions (a tensor travels as a handle to shared memory, not as a copy of its data).

Like the standard queues they need their context: Queue(ctx=multiprocessing.get_context()).
"""
import multiprocessing.queues
import pickle
from multiprocessing.reduction import ForkingPickler


class ConnectionWrapper:
    """A multiprocessing Connection whose send/recv pickle with ForkingPickler; the rest is the connection's."""

    def __init__(self, conn):
        self.conn = conn

    def send(self, obj):
        self.conn.send_bytes(ForkingPickler.dumps(obj, pickle.HIGHEST_PROTOCOL))

    def recv(self):
        return ForkingPickler.loads(self.conn.recv_bytes())

    def __getattr__(self, name):
        # Unpickling looks up __setstate__ before conn is set: fail instead of recursing into self.conn.
        if "conn" not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'conn'")
        return getattr(self.conn, name)


class _ForkingPicklerPipe:
    """Wraps both ends of the queue's pipe once the standard queue has made it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)


class Queue(_ForkingPicklerPipe, multiprocessing.queues.Queue):
    """multiprocessing.Queue with ConnectionWrapper pipe ends."""


class SimpleQueue(_ForkingPicklerPipe, multiprocessing.queues.SimpleQueue):
    """multiprocessing.SimpleQueue with ConnectionWrapper pipe ends."""
