"""torch.utils.benchmark's records: TaskSpec (what was timed), Measurement (the times and their statistics),
and the unit and significant-figure helpers.  The statistics go through tensor ops in the dtypes PyTorch uses
(float64 quantiles, float32 elsewhere), so the figures printed equal PyTorch's for the same times."""
import contextlib
import dataclasses
import textwrap

import mindtorch_v2 as torch  # the package; its attributes are read at call time

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns: timer resolution, below which spread is not meaningful
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _labelled(text, sub_label):
    return text + (f": {sub_label}" if sub_label else "")


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Measurement timed: the statement, its setup, and the labels Compare groups by."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (else the one-line statement) with the sub-label; a multi-line statement indented."""
        if self.label is not None:
            return _labelled(self.label, self.sub_label)
        if "\n" not in self.stmt:
            return _labelled(self.stmt, self.sub_label)
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as printed: nothing for "pass", indented when it spans lines."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """Title, description and setup, one per line; a multi-line part is followed by a blank line."""
        parts = (self.title, self.description or "", self.setup_str())
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """raw_times[i] is the duration of number_per_run runs of task_spec's statement."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        # stmt, label, num_threads... read through to the task spec
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        """Seconds per run, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    def _lazy_init(self) -> None:
        """The statistics, computed once, on first use (PyTorch's name: subclasses may call it)."""
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        t = torch.tensor(self._sorted_times, dtype=torch.float64)
        self._median, self._mean = t.quantile(0.5).item(), t.mean().item()
        self._p25, self._p75 = t.quantile(0.25).item(), t.quantile(0.75).item()
        for threshold, meaning in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                                   (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings += (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the "
                                   f"median measurement.\n           {meaning}",)
                break

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Digits of the median the spread of the middle half of the times supports (a 90% confidence
        interval of their mean), between 1 and 4."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:int(torch.tensor(3 * n / 4).ceil())]
        spread = torch.tensor(middle).std(unbiased=False).item()
        ci = max(1.645 * spread / torch.tensor(len(middle)).sqrt().item(), _MIN_CONFIDENCE_INTERVAL)
        digits = int(torch.tensor(torch.tensor(self._median / ci).log10().item()).floor())
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below threshold times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self):
        # PyTorch's property fails on a misspelt attribute and its __getattr__ then answers task_spec.env:
        # that (None when unset) is what its Compare sees, so it is what this returns
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct TaskSpec, holding the per-run times of all of its measurements."""
        by_spec = {}
        for m in measurements:
            by_spec.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
                for spec, times in by_spec.items()]


def select_unit(t: float):
    """(unit, seconds per unit) for displaying the time t: ns, us, ms or s."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(torch.tensor(t).log10().item() // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """x rounded to n significant figures."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (int(torch.tensor(x).abs().log10().ceil().item()) - n)
    return float(torch.tensor(x / scale).round() * scale)


def ordered_unique(elements):
    """The distinct elements, in order of first appearance."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int):
    """Run the block with n intra-op threads."""
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(n)
        yield
    finally:
        torch.set_num_threads(before)
