"""Helpers of the built-in DataPipes: checks of user functions, file listing and opening, StreamWrapper."""
import fnmatch
import functools
import inspect
import os
import warnings
from collections.abc import Iterable
from io import IOBase

from ..datapipe import HAS_DILL

__all__ = ["validate_input_col", "StreamWrapper", "get_file_binaries_from_pathnames", "get_file_pathnames_from_root",
           "match_masks", "validate_pathname_binary_tuple"]

DILL_AVAILABLE = HAS_DILL


def validate_input_col(fn, input_col):
    """Check fn can take the input_col columns (one, or a list/tuple of them) as its positional arguments."""
    try:
        sig = inspect.signature(fn)
    except ValueError:  # a builtin without a signature: nothing to check
        return
    wanted = len(input_col) if isinstance(input_col, (list, tuple)) else 1
    P = inspect.Parameter
    positional = [p for p in sig.parameters.values() if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    star_args = any(p.kind is P.VAR_POSITIONAL for p in sig.parameters.values())
    required_kw = [p for p in sig.parameters.values() if p.kind is P.KEYWORD_ONLY and p.default is p.empty]
    target = fn.func if isinstance(fn, functools.partial) else fn
    name = getattr(target, "__name__", repr(target))
    if required_kw:
        raise ValueError(f"The function {name} takes {len(required_kw)} non-default keyword-only parameters, "
                         "which is not allowed.")
    if len(sig.parameters) < wanted:
        if not star_args:
            raise ValueError(f"The function {name} takes {len(sig.parameters)} parameters, but {wanted} are "
                             "required.")
        return
    too_many = len(positional) > wanted and any(p.default is p.empty for p in positional[wanted:])
    too_few = len(positional) < wanted and not star_args
    if too_many or too_few:
        raise ValueError(f"The function {name} takes {len(positional)} positional parameters, but {wanted} are "
                         "required.")


def _is_local_fn(fn):
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code.co_flags & inspect.CO_NESTED
    if hasattr(fn, "__qualname__"):
        return "<locals>" in fn.__qualname__
    return "<locals>" in getattr(type(fn), "__qualname__", "")


def _check_unpickable_fn(fn):
    """Require a callable; warn when pickle cannot carry it (a lambda or local function) and dill is absent."""
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    if HAS_DILL:
        return
    if isinstance(fn, functools.partial):
        fn = fn.func
    if _is_local_fn(fn):
        what = "Local function"
    elif getattr(fn, "__name__", None) == "<lambda>":
        what = "Lambda function"
    else:
        return
    warnings.warn(f"{what} is not supported by pickle, please use regular python function or functools.partial "
                  "instead.", stacklevel=2)


def match_masks(name, masks):
    """Whether name matches the glob mask, or one of the list of masks (no mask matches everything)."""
    if not masks:
        return True
    return any(fnmatch.fnmatch(name, m) for m in ([masks] if isinstance(masks, str) else masks))


def get_file_pathnames_from_root(root, masks, recursive=False, abspath=False, non_deterministic=False):
    """The files under root (or root itself if it is a file) matching masks, sorted unless non_deterministic."""
    def onerror(err):
        warnings.warn(err.filename + " : " + err.strerror, stacklevel=2)
        raise err

    if os.path.isfile(root):
        path = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(path), masks):
            yield path
        return
    for path, dirs, files in os.walk(root, onerror=onerror):
        if abspath:
            path = os.path.abspath(path)
        if not non_deterministic:
            files.sort()
        yield from (os.path.join(path, f) for f in files if match_masks(f, masks))
        if not recursive:
            break
        if not non_deterministic:
            dirs.sort()  # os.walk descends in this order


def get_file_binaries_from_pathnames(pathnames, mode, encoding=None):
    """(pathname, StreamWrapper(open file)) for each pathname."""
    if not isinstance(pathnames, Iterable):
        pathnames = [pathnames]
    if mode in ("b", "t"):
        mode = "r" + mode
    for pathname in pathnames:
        if not isinstance(pathname, str):
            raise TypeError(f"Expected string type for pathname, but got {type(pathname)}")
        yield pathname, StreamWrapper(open(pathname, mode, encoding=encoding))


def validate_pathname_binary_tuple(data):
    if not isinstance(data, tuple):
        raise TypeError(f"pathname binary data should be tuple type, but it is type {type(data)}")
    if len(data) != 2:
        raise TypeError(f"pathname binary stream tuple length should be 2, but got {len(data)}")
    if not isinstance(data[0], str):
        raise TypeError("pathname within the tuple should have string type pathname, but it is type "
                        f"{type(data[0])}")
    if not isinstance(data[1], (IOBase, StreamWrapper)):
        raise TypeError("binary stream within the tuple should have IOBase orits subclasses as type, but it is "
                        f"type {type(data[1])}")


class StreamWrapper:
    """A file object that closes itself when collected; child streams keep their parent open until the last
    one closes (after `autoclose()`)."""
    session_streams = {}
    debug_unclosed_streams = False

    def __init__(self, file_obj, parent_stream=None, name=None):
        self.file_obj = file_obj
        self.child_counter = 0
        self.parent_stream = parent_stream
        self.close_on_last_child = False
        self.name = name
        self.closed = False
        if parent_stream is not None:
            if not isinstance(parent_stream, StreamWrapper):
                raise RuntimeError(f"Parent stream should be StreamWrapper, {type(parent_stream)} was given")
            parent_stream.child_counter += 1
        if StreamWrapper.debug_unclosed_streams:
            StreamWrapper.session_streams[self] = 1

    @classmethod
    def close_streams(cls, v, depth=0):
        """Close every StreamWrapper found in v (dicts, lists, tuples; at most 10 levels deep)."""
        if depth > 10:
            return
        if isinstance(v, StreamWrapper):
            v.close()
        elif isinstance(v, (dict, list, tuple)):
            for item in (v.values() if isinstance(v, dict) else v):
                cls.close_streams(item, depth=depth + 1)

    def __getattr__(self, name):
        return getattr(self.__dict__["file_obj"], name)

    def close(self, *args, **kwargs):
        if self.closed:
            return
        if StreamWrapper.debug_unclosed_streams:
            del StreamWrapper.session_streams[self]
        parent = getattr(self, "parent_stream", None)
        if parent is not None:
            parent.child_counter -= 1
            if not parent.child_counter and parent.close_on_last_child:
                parent.close()
        try:
            self.file_obj.close(*args, **kwargs)
        except AttributeError:
            pass
        self.closed = True

    def autoclose(self):
        """Close now if no child stream is open, else when the last one closes."""
        self.close_on_last_child = True
        if self.child_counter == 0:
            self.close()

    def __dir__(self):
        return list(set(list(self.__dict__) + list(StreamWrapper.__dict__) + dir(self.file_obj)))

    def __del__(self):
        if not self.closed:
            self.close()

    def __iter__(self):
        yield from self.file_obj

    def __next__(self):
        return next(self.file_obj)

    def __repr__(self):
        inner = repr(self.file_obj)
        return f"StreamWrapper<{inner}>" if self.name is None else f"StreamWrapper<{self.name},{inner}>"

    def __getstate__(self):
        return self.file_obj

    def __setstate__(self, obj):
        self.file_obj = obj
