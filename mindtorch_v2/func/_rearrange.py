"""torch.func.rearrange: einops' rearrange ("b (h w) c -> b h w c"), PyTorch's pattern rules and texts.

PyTorch binds the pattern's axes to first-class dimensions (functorch.dim); here the same plan is a reshape to
the left side's elementary axes, a permute to the right side's order, and a reshape to its groups. A left
unit axis ("1" or "()") is summed over, as PyTorch's sums its anonymous dimensions (so a size-3 dim matched by
"1" is reduced, not rejected, there too).
"""
import keyword
import warnings

ELLIPSIS = "\u2026"  # "..." once parsed: one character, so it can be an identifier of its own


class DimensionBindError(Exception):
    """An axis size that does not fit the tensor (functorch.dim's error)."""


class _Side:
    """One side of a pattern: `groups` is a list of axis-name lists (an empty list is a unit axis) and
    ELLIPSIS entries."""

    def __init__(self, text):
        self.names, self.groups = set(), []
        self.has_ellipsis, self.ellipsis_in_group, self.non_unit_number = False, None, False
        if "." in text:
            if "..." not in text:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if text.count("...") != 1 or text.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ")
            text, self.has_ellipsis = text.replace("...", ELLIPSIS), True
        group, word = None, ""
        for ch in text + " ":
            if ch in "() ":
                if word:
                    self._add(word, group)
                word = ""
                if ch == "(":
                    if group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    group = []
                elif ch == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.groups.append(group)
                    group = None
            elif ch.isalnum() or ch in ("_", ELLIPSIS):
                word += ch
            else:
                raise ValueError(f"Unknown character '{ch}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")

    def _add(self, name, group):
        if name in self.names:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        target = self.groups if group is None else group
        if name == ELLIPSIS:
            self.names.add(name)
            target.append(name)
            self.ellipsis_in_group = group is not None
            return
        if name.isdecimal():
            if int(name) == 1:
                if group is None:
                    self.groups.append([])  # a unit axis; inside brackets a 1 changes nothing
                return
            if int(name) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(name)}")
            self.non_unit_number = True
            name = object()  # an anonymous axis: rearrange rejects it below, after the other checks
        else:
            _check_name(name)
        self.names.add(name)
        target.append([name] if group is None else name)


def _check_name(name):
    if not name.isidentifier():
        reason = "not a valid python identifier"
    elif name[0] == "_" or name[-1] == "_":
        reason = "axis name should should not start or end with underscore"
    else:
        if keyword.iskeyword(name):
            warnings.warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning)
        if name == "axis":
            warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error in future",
                          FutureWarning)
        return
    raise ValueError(f"Invalid axis identifier: {name}\n{reason}")


def _parse(pattern, axes_lengths):
    sides = pattern.split("->")
    if len(sides) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    if ELLIPSIS in axes_lengths:
        raise ValueError(f"'{ELLIPSIS}' is not an allowed axis identifier")
    left, right = _Side(sides[0]), _Side(sides[1])
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for n in axes_lengths.values():
        if type(n) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(n)}")
    if left.non_unit_number or right.non_unit_number:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    one_sided = left.names ^ right.names
    if one_sided:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {one_sided}")
    unknown = axes_lengths.keys() - left.names
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    return left, right


def _bind(size, axes, sizes, label):
    """Give the group's unknown axis (at most one) the size that makes the group's product `size`."""
    unknown = [a for a in axes if a not in sizes]
    if len(unknown) > 1:
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once {label[unknown[0]]} and "
                                 f"{label[unknown[1]]}")
    known = _product(sizes[a] for a in axes if a in sizes)
    if unknown:
        if size % known:
            shown = tuple(sizes.get(a, "?") for a in axes)
            raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {size} vs {shown}")
        sizes[unknown[0]] = size // known
        known = size
    if known != size:
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when matching dimension pack "
                                 f"({', '.join(label[a] for a in axes)}{',' if len(axes) == 1 else ''})")


def _product(values):
    n = 1
    for v in values:
        n *= v
    return n


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, split, merge, add or drop unit axes of tensor (or of a stack of tensors) by an einops pattern."""
    from .._shape_ops import stack
    from .._tensor import Tensor
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    left, right = _parse(pattern, axes_lengths)
    ndim = tensor.dim()
    units = sum(1 for g in left.groups if g == [])
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.groups) - 1)
        if units + len(left.names) - 1 > ndim:
            raise ValueError(f"Number of dimensions in pattern ({units + len(left.names) - 1}) must be less than or "
                             f"equal to the number of dimensions in the tensor ({ndim})")
    else:
        n_ellipsis = 0
        if len(left.groups) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.groups)}) must be equal to the number of "
                             f"dimensions in the tensor ({ndim})")
    if len(left.names) - left.has_ellipsis + n_ellipsis + units == 0 or left.groups == right.groups == [ELLIPSIS]:
        return tensor  # PyTorch's first-class dims hand these back as the tensor itself
    # the left side's elementary axes, in order (the ellipsis as its own axes, a unit group as a fresh one)
    packs, dim = [], 0
    for g in left.groups:
        if g == ELLIPSIS:
            packs += [[(ELLIPSIS, k)] for k in range(n_ellipsis)]
        else:
            packs.append(list(g) or [("unit", dim)])
        dim += 1
    elementary = [a for p in packs for a in p]
    label = {a: f"d{i}" for i, a in enumerate(elementary)}
    sizes = dict(axes_lengths)
    for size, p in zip(tensor.shape, packs):
        _bind(size, p, sizes, label)
    t = tensor.reshape([sizes[a] for a in elementary])
    unit_axes = [i for i, a in enumerate(elementary) if isinstance(a, tuple) and a[0] == "unit"]
    if unit_axes:
        t = t.sum(unit_axes)
        elementary = [a for a in elementary if not (isinstance(a, tuple) and a[0] == "unit")]
    def expand(items):
        return [x for a in items for x in ([(ELLIPSIS, k) for k in range(n_ellipsis)] if a == ELLIPSIS else [a])]
    order, shape = [], []
    for g in right.groups:
        axes = expand([g] if g == ELLIPSIS else g)
        order += [elementary.index(a) for a in axes]
        sizes_of = [sizes[a] for a in axes]
        shape += sizes_of if g == ELLIPSIS else [_product(sizes_of)]
    return t.permute(order).reshape(shape)
