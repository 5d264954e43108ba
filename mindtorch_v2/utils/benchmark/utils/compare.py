"""torch.utils.benchmark.Compare: Measurements laid out as text tables, one per label: a row per (threads, env,
sub-label or statement), a column per description, in the unit of the fastest result."""
import enum

import mindtorch_v2 as torch  # the package; its attributes are read at call time
from . import common

__all__ = ["Colorize", "Compare"]

# ANSI styles of the colorized cells, relative to the best time compared with
BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x):
    return int(torch.tensor(x).log10().ceil())


class _CellFormat:
    """How one column prints its numbers: a common width and number of decimals; with highlighting, a
    ' (! NN%)' note of the relative spread where a measurement has warnings."""

    def __init__(self, cells, scale, trim, highlight):
        present = [m for m in cells if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in present)
        digits = [_leading_digits(m.median / scale) for m in present]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, digits)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def text(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.text(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self.template.format(value, note)


def _colored(text, value, best):
    """text styled by how far value is from best (within 1%: best; 10%: good; 2x: bad; 5x: very bad)."""
    if value <= best * 1.01 or value <= best + 1e-7:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


def _min_median(results):
    medians = [m.median for m in results if m is not None]
    return min(medians) if medians else None


def _table(results, colorize, trim, highlight):
    """The text table of results, which share one label."""
    if len({r.label for r in results}) != 1:
        raise AssertionError("All results must share the same label")
    unit, scale = common.select_unit(min(r.median for r in results))

    def row_key(m):
        return m.num_threads, m.env, m.as_row_name
    row_keys = common.ordered_unique([row_key(r) for r in results])
    row_keys.sort(key=lambda k: k[:2])  # by threads and env; statements keep their order
    col_keys = common.ordered_unique([r.description for r in results])
    row_of = {k: i for i, k in enumerate(row_keys)}
    col_of = {k: j for j, k in enumerate(col_keys)}
    grid = [[None] * len(col_keys) for _ in row_keys]
    for r in results:
        grid[row_of[row_key(r)]][col_of[r.description]] = r

    envs = {r.env for r in results}
    env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
    # rows with one thread count form a group, headed by a separator; an env is named where it changes
    group_of, header_of, env_shown = [], [], []
    prev_threads, prev_env = -1, ""
    for threads, env, _ in row_keys:
        if threads != prev_threads:
            prev_threads, prev_env = threads, ""
            group_of.append(group_of[-1] + 1 if group_of else 0)
            header_of.append(threads)
        else:
            group_of.append(group_of[-1])
            header_of.append(None)
        env_shown.append(len(envs) > 1 and env != prev_env)
        prev_env = env
    formats = [_CellFormat([row[j] for row in grid], scale, trim, highlight) for j in range(len(col_keys))]

    text = [[""] + col_keys]
    for row, show_env in zip(grid, env_shown):
        first = next(m for m in row if m is not None)
        env_text = (f"({first.env})" if show_env else "").ljust(env_width + 4)
        cells = ["  " + env_text + first.as_row_name]
        for m, fmt in zip(row, formats):
            cells.append(fmt.text(None, 1, None) if m is None else
                         fmt.text(m.median / scale, m.significant_figures, m.iqr / m.median if m.has_warnings else None))
        text.append(cells)
    widths = [max(len(s) for s in column) for column in zip(*text)]
    lines = ["  |  ".join(s.center(w) for s, w in zip(text[0], widths))]
    total_width = len(lines[0])
    for i, (cells, row) in enumerate(zip(text[1:], grid)):
        if header_of[i] is not None:
            lines.append(f"{header_of[i]} threads: ".ljust(total_width, "-"))
        if colorize == Colorize.ROWWISE:
            best = [_min_median(row)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            best = [_min_median(r[j] for r, g in zip(grid, group_of) if g == group_of[i]) for j in range(len(row))]
        out = [cells[0].ljust(widths[0])]
        for j, (s, w, m) in enumerate(zip(cells[1:], widths[1:], row)):
            s = s.center(w)
            if colorize != Colorize.NONE and m is not None and best[j] is not None:
                s = _colored(s, m.median, best[j])
            out.append(s)
        lines.append("  |  ".join(out))
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if highlight and any(r.has_warnings for r in results) else "")
    label = results[0].label
    return (f"[{(' ' + (label or '') + ' ').center(total_width - 2, '-')}]\n" + "\n".join(lines) +
            f"\n\nTimes are in {common.unit_to_english(unit)}s ({unit}).\n{note}")


class Compare:
    """Collects Measurements and prints them as tables (the times of equal TaskSpecs merged)."""

    def __init__(self, results) -> None:
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add Measurements (anything else is a ValueError)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print only the digits each measurement's spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False) -> None:
        """Color each time against the best of its column (or of its row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark the times whose measurements have a high spread."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self):
        by_label = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings)
                for group in by_label.values()]
