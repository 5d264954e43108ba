"""torch.utils.benchmark.Timer: timeit for tensor code, with the warm-up, thread count and block sizing that
make its measurements comparable, returning Measurements."""
import enum
import textwrap
import timeit as _timeit_module

import mindtorch_v2 as torch  # the package; its attributes are read at call time
from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """timeit.default_timer, after waiting for an accelerator (none here) to finish its queued work."""
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    return _timeit_module.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    """Dedented, without one leading newline and trailing whitespace (the form stored in the TaskSpec)."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


_INT32_MAX = 2 ** 31 - 1


class Timer:
    """Times stmt (after setup) with timeit; the blocked and adaptive modes choose how many runs to time at once."""

    _timer_cls = _timeit_module.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", torch)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                                 "be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("torch.utils.benchmark.Timer(language='cpp') is not implemented: C++ "
                                      "statements would need a C++ toolchain and PyTorch's headers")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # never 0, so that ratios stay finite

    def _measurement(self, number, times):
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000):
        """One measurement of number runs, after a warm-up of a hundredth as many (at least 2)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number, time_hook, stop_hook, min_run_time, max_run_time=None,
                                   callback=None):
        """Time blocks until min_run_time has passed and stop_hook agrees, or max_run_time has passed."""
        times, total, can_stop = [], 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = time_hook()
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of runs whose time dwarfs the timer's own overhead (1e-4 of it) and is a
        thousandth of min_run_time, or already exceeds min_run_time."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = torch.tensor([self._timeit(0) for _ in range(5)]).median().item()
            number = 1
            while True:
                took = self._timeit(number)
                if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                    break
                if took > min_run_time or number * 10 > _INT32_MAX:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2):
        """Blocks of an estimated size, timed until min_run_time has passed."""
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(number, lambda: self._timeit(number), lambda times: True,
                                                min_run_time=min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None):
        """Blocks timed until more than three agree (IQR below threshold times the median) and min_run_time has
        passed, or max_run_time has."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)
        times = self._threaded_measurement_loop(number, lambda: self._timeit(number), confident, min_run_time,
                                                max_run_time, callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number: int = 100, *, repeats=None, collect_baseline: bool = True,
                          retain_out_file: bool = False):
        if not isinstance(self._task_spec.stmt, str):
            raise ValueError("`collect_callgrind` currently only supports string `stmt`")
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        raise NotImplementedError("torch.utils.benchmark.Timer.collect_callgrind is not implemented: it needs "
                                  "valgrind and PyTorch's callgrind bindings")
