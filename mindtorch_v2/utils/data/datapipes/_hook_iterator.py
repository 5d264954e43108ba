"""What the IterDataPipe metaclass wraps around every `__iter__`: one valid iterator per pipe (a new
iterator invalidates the older ones, with PyTorch's error texts), the count of samples yielded,
profiler ranges, and the pipe's name appended to exceptions raised while iterating."""
import contextlib
import functools
import inspect
from enum import Enum

from mindtorch_v2.autograd import profiler as _profiler


class _SnapshotState(Enum):
    """NotStarted: may restore a snapshot; Restored: the next iterator must not reset;
    Iterating: a new iterator resets."""
    NotStarted = 0
    Restored = 1
    Iterating = 2


def _display(value):
    return value.__name__ if inspect.isfunction(value) else repr(value)


def _generate_input_args_string(dp):
    """'name=value, ...' for the constructor parameters the pipe keeps as attributes, by name."""
    params = inspect.signature(type(dp)).parameters
    shown = []
    for name in sorted(params):
        try:
            value = getattr(dp, name)
        except AttributeError:
            continue
        shown.append(f"{name}={_display(value)}")
    return ", ".join(shown)


def _generate_iterdatapipe_msg(dp, simplify_dp_name=False):
    text = f"{type(dp).__name__}({_generate_input_args_string(dp)})"
    if simplify_dp_name:
        text = text.replace("IterDataPipe", "").replace("MapDataPipe", "")
    return text


_FEEDBACK = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, feel free "
             "to comment on this issue: https://github.com/pytorch/data/issues/45.")


def _invalidated_text(dp):
    return ("This iterator has been invalidated because another iterator has been created "
            f"from the same IterDataPipe: {_generate_iterdatapipe_msg(dp)}\n"
            "This may be caused by multiple references to the same IterDataPipe. We recommend "
            "using `.fork()` if that is necessary.")


def _check_iterator_valid(dp, iterator_id, next_method_exists=False):
    """Raise RuntimeError unless iterator_id is still the pipe's valid iterator."""
    if next_method_exists:
        # a pipe that is its own iterator may have been handed out at most once
        if dp._valid_iterator_id not in (None, 0):
            raise RuntimeError(_invalidated_text(dp) + "\nNote that this exception is raised inside your "
                               "IterDataPipe's a `__next__` method" + _FEEDBACK)
    elif getattr(dp, "_is_child_datapipe", False) is True:
        if not hasattr(dp, "_check_valid_iterator_id"):
            raise RuntimeError("ChildDataPipe must have method `_check_valid_iterator_id`.")
        if not dp._check_valid_iterator_id(iterator_id):
            raise RuntimeError("This iterator has been invalidated, because a new iterator has been created from "
                               f"one of the ChildDataPipes of {_generate_iterdatapipe_msg(dp.main_datapipe)}."
                               + _FEEDBACK)
    elif dp._valid_iterator_id != iterator_id:
        raise RuntimeError(_invalidated_text(dp) + _FEEDBACK)


def _set_datapipe_valid_iterator_id(dp):
    """Make a new iterator the valid one (resetting the pipe) and return its id."""
    if getattr(dp, "_is_child_datapipe", False) is True:
        if not hasattr(dp, "_set_main_datapipe_valid_iterator_id"):
            raise RuntimeError("ChildDataPipe must have method `_set_main_datapipe_valid_iterator_id`.")
        dp._set_main_datapipe_valid_iterator_id()  # resets the container when it must
    else:
        dp._valid_iterator_id = 0 if dp._valid_iterator_id is None else dp._valid_iterator_id + 1
        dp.reset()
    return dp._valid_iterator_id


def _range(dp, on):
    """A profiler range named after the pipe while a profiler records, else nothing."""
    if not on:
        return contextlib.nullcontext()
    if not hasattr(dp, "_profile_name"):
        dp._profile_name = _generate_iterdatapipe_msg(dp, simplify_dp_name=True)
    return _profiler.record_function(dp._profile_name)


def _name_in_exception(e, dp):
    """Append 'This exception is thrown by __iter__ of <pipe>(<args>)' to e's message, once."""
    where = "thrown by __iter__ of"
    tail = f"\nThis exception is {where} {type(dp).__name__}({_generate_input_args_string(dp)})"
    if not e.args or not isinstance(e.args[0], str):
        e.args = (tail,)
    elif where not in e.args[0] and "single iterator per IterDataPipe constraint" not in e.args[0]:
        e.args = (e.args[0] + tail,) + e.args[1:]


class _TrackedIterator:
    """The iterator of a pipe whose `__iter__` is not a generator: checks validity on each step."""

    def __init__(self, iterator, dp, iterator_id, has_next):
        self.iterator, self.datapipe, self.iterator_id = iterator, dp, iterator_id
        self._profiler_enabled = _profiler._is_profiler_enabled()
        self.self_and_has_next_method = iterator is dp and has_next  # counted by the wrapped __next__

    def __iter__(self):
        return self

    def __next__(self):
        with _range(self.datapipe, self._profiler_enabled):
            _check_iterator_valid(self.datapipe, self.iterator_id)
            value = next(self.iterator)
        if not self.self_and_has_next_method:
            self.datapipe._number_of_samples_yielded += 1
        return value

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def _wrap_generator(fn):
    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        gen = fn(*args, **kwargs)
        dp = args[0]
        if dp._fast_forward_iterator:  # restored from a snapshot: continue where it stood
            it, dp._fast_forward_iterator = dp._fast_forward_iterator, None
            dp._snapshot_state = _SnapshotState.Iterating
            for value in it:
                yield value
            return
        my_id = _set_datapipe_valid_iterator_id(dp)
        on = _profiler._is_profiler_enabled()
        try:
            with _range(dp, on):
                value = gen.send(None)
            while True:
                dp._number_of_samples_yielded += 1
                sent = yield value
                with _range(dp, on):
                    _check_iterator_valid(dp, my_id)
                    value = gen.send(sent)
        except StopIteration:
            return
        except Exception as e:
            _name_in_exception(e, dp)
            raise
    return guarded


def _wrap_iter(fn, has_next):
    @functools.wraps(fn)
    def tracked(*args, **kwargs):
        result = fn(*args, **kwargs)
        dp = args[0]
        dp._snapshot_state = _SnapshotState.Iterating
        if dp._fast_forward_iterator:
            result, dp._fast_forward_iterator = dp._fast_forward_iterator, None
            return result
        return _TrackedIterator(result, dp, _set_datapipe_valid_iterator_id(dp), has_next)
    return tracked


def _wrap_next(fn):
    @functools.wraps(fn)
    def counted(*args, **kwargs):
        dp = args[0]
        with _range(dp, _profiler._is_profiler_enabled()):
            value = fn(*args, **kwargs)
        dp._number_of_samples_yielded += 1
        return value
    return counted


def hook_iterator(namespace):
    """Wrap the class body's `__iter__` (and `__next__`) in place, before the class is created."""
    fn = namespace["__iter__"]
    if inspect.isgeneratorfunction(fn):
        namespace["__iter__"] = _wrap_generator(fn)
        return
    has_next = "__next__" in namespace
    if has_next:
        namespace["__next__"] = _wrap_next(namespace["__next__"])
    namespace["__iter__"] = _wrap_iter(fn, has_next)
