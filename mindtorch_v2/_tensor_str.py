"""PyTorch-compatible tensor printing (``Tensor.__repr__`` / ``__str__``).

This is a port of the formatting rules of PyTorch's ``torch/_tensor_str.py`` that works
on plain Python values: the caller gathers the elements that will be shown (see
:func:`summarize_indices`) as nested Python lists and :func:`format_tensor` turns them
into exactly the text PyTorch prints.  No tensor maths happens here.
"""
import dataclasses
import math

__all__ = ["PRINT_OPTS", "set_printoptions", "get_printoptions", "printoptions",
           "summarize_indices", "format_tensor"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None  # None (automatic), True or False


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set printing options, like ``torch.set_printoptions``.

    A ``profile`` ("default", "short" or "full") is applied first and the explicit options
    override it.  As in PyTorch, ``sci_mode`` is always reset to the value passed (so a
    call without it returns to automatic selection).
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current options as a dict that can be passed back to :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


class printoptions:
    """Context manager that temporarily changes the print options."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._saved = None

    def __enter__(self):
        self._saved = get_printoptions()
        set_printoptions(**self._kwargs)
        return self

    def __exit__(self, *exc):
        set_printoptions(**self._saved)
        return False


# ---------------------------------------------------------------------------------------
# summarization


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def summarize_indices(shape, threshold=None, edgeitems=None):
    """For each dim of ``shape``, the indices whose values the printed text depends on.

    All indices when the tensor has at most ``threshold`` elements; otherwise the first and
    last ``edgeitems`` of every dim longer than ``2 * edgeitems`` (shorter dims are kept
    whole).  With ``edgeitems == 0`` a summarized tensor prints as ``[...]`` whatever its
    values; index 0 of each dim is returned then, so that callers never gather with an
    empty index list.
    """
    threshold = PRINT_OPTS.threshold if threshold is None else threshold
    edgeitems = PRINT_OPTS.edgeitems if edgeitems is None else edgeitems
    shape = tuple(shape)
    if _numel(shape) <= threshold:
        return [list(range(s)) for s in shape]
    if not edgeitems:
        return [[0] for _ in shape]
    keep = []
    for s in shape:
        if s > 2 * edgeitems:
            keep.append(list(range(edgeitems)) + list(range(s - edgeitems, s)))
        else:
            keep.append(list(range(s)))
    return keep


def _summarized_values(values, shape, edgeitems):
    """``values`` restricted to the summarized indices.  Values that were already gathered
    with :func:`summarize_indices` pass through unchanged; full data is cut down here."""
    if not shape or not isinstance(values, (list, tuple)):
        return values
    size = shape[0]
    if size > 2 * edgeitems and len(values) == size:
        values = list(values[:edgeitems]) + list(values[size - edgeitems:])
    if len(shape) == 1:
        return list(values)
    return [_summarized_values(v, shape[1:], edgeitems) for v in values]


def _flatten(values, out):
    if isinstance(values, (list, tuple)):
        for v in values:
            _flatten(v, out)
    else:
        out.append(values)
    return out


# ---------------------------------------------------------------------------------------
# element formatting


class _Formatter:
    """Chooses the notation and column width from the (summarized) values, like PyTorch."""

    def __init__(self, flat_values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = PRINT_OPTS.precision

        if not floating:
            for value in flat_values:
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite = [float(v) for v in flat_values if math.isfinite(v) and v != 0]
        if not nonzero_finite:
            return
        abs_vals = [abs(v) for v in nonzero_finite]
        vmin, vmax = min(abs_vals), max(abs_vals)

        self.int_mode = all(v == math.ceil(v) for v in nonzero_finite)

        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in nonzero_finite)
        elif self.int_mode:
            # an integer-valued float prints with a trailing '.', hence the + 1
            widths = (len(f"{v:.0f}") + 1 for v in nonzero_finite)
        else:
            widths = (len(f"{v:.{precision}f}") for v in nonzero_finite)
        self.max_width = max(self.max_width, max(widths))

    def width(self):
        return self.max_width

    def format(self, value):
        precision = PRINT_OPTS.precision
        if self.floating_dtype:
            value = float(value)
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """Formats complex values with separate formatters for the real and imaginary parts."""

    def __init__(self, flat_values):
        self.real = _Formatter([complex(v).real for v in flat_values], True)
        self.imag = _Formatter([complex(v).imag for v in flat_values], True)

    def width(self):
        # width of both parts plus the 'j'
        return self.real.width() + self.imag.width() + 1

    def format(self, value):
        value = complex(value)
        real_str = self.real.format(value.real)
        imag_str = (self.imag.format(value.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str


# ---------------------------------------------------------------------------------------
# layout


def _vector_str(values, size, indent, summarize, formatter):
    edgeitems = PRINT_OPTS.edgeitems
    element_length = formatter.width() + 2  # includes ", "
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and size > 2 * edgeitems:
        data = ([formatter.format(v) for v in values[:edgeitems]] + [" ..."]
                + [formatter.format(v) for v in values[len(values) - edgeitems:]])
    else:
        data = [formatter.format(v) for v in values]

    lines = [", ".join(data[i:i + elements_per_line])
             for i in range(0, len(data), elements_per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, shape, indent, summarize, formatter):
    dim = len(shape)
    if dim == 0:
        return formatter.format(values)
    if dim == 1:
        return _vector_str(values, shape[0], indent, summarize, formatter)

    edgeitems = PRINT_OPTS.edgeitems
    sub = shape[1:]
    if summarize and shape[0] > 2 * edgeitems:
        slices = ([_nested_str(v, sub, indent + 1, summarize, formatter)
                   for v in values[:edgeitems]]
                  + ["..."]
                  + [_nested_str(v, sub, indent + 1, summarize, formatter)
                     for v in values[len(values) - edgeitems:]])
    else:
        slices = [_nested_str(v, sub, indent + 1, summarize, formatter) for v in values]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_body(values, shape, indent, is_floating, is_complex):
    """The bracketed data part of the repr (PyTorch's ``_tensor_str``)."""
    if _numel(shape) == 0:
        return "[]"
    summarize = _numel(shape) > PRINT_OPTS.threshold
    edgeitems = PRINT_OPTS.edgeitems

    if not shape:
        # 0-dim: accept a bare scalar or a one-element (nested) list
        while isinstance(values, (list, tuple)):
            values = values[0]
        flat = [values]
    elif summarize and not edgeitems:
        flat = []  # prints as [...]; the formatter is not consulted
    else:
        if summarize:
            values = _summarized_values(values, shape, edgeitems)
        flat = _flatten(values, [])

    if is_complex:
        formatter = _ComplexFormatter(flat)
    else:
        formatter = _Formatter(flat, is_floating)
    return _nested_str(values, shape, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False):
    parts = [tensor_str]
    # (this over-counts by 2 on a single line; PyTorch does the same)
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(*, values, shape, dtype_name, is_floating, is_bool, default_dtype_name,
                  device=None, requires_grad=False, grad_fn_name=None, is_meta=False,
                  prefix="tensor(", extra_suffixes=()):
    """The text PyTorch's ``repr`` gives for a tensor.

    ``values``: nested lists of Python scalars (a bare scalar for 0-dim), either the full
    data or only the elements chosen by :func:`summarize_indices`; ignored for meta and
    empty tensors.  ``shape`` is always the full shape.  ``device`` is printed unless it is
    None or "cpu" (meta tensors print ``device='meta'``).  ``extra_suffixes`` are appended
    after all the built-in suffixes.
    """
    shape = tuple(int(s) for s in shape)
    indent = len(prefix)
    is_complex = dtype_name.startswith("complex")
    dtype_str = "torch." + dtype_name
    default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
    has_default_dtype = dtype_name in (default_dtype_name, default_complex, "int64", "bool")

    suffixes = []
    if is_meta and device is None:
        device = "meta"
    if device is not None and str(device) != "cpu":
        suffixes.append(f"device='{device}'")

    if is_meta:
        suffixes.append("size=" + str(shape))
        if dtype_name != default_dtype_name:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = "..."
    elif _numel(shape) == 0:
        # match NumPy: the shape is printed unless it is (0,)
        if len(shape) != 1:
            suffixes.append("size=" + str(shape))
        # no elements to infer the dtype from, so anything but the default float is shown
        if dtype_name != default_dtype_name:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = _tensor_body(values, shape, indent, is_floating and not is_bool,
                                  is_complex)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    suffixes.extend(extra_suffixes)

    return _add_suffixes(prefix + tensor_str, suffixes, indent)
