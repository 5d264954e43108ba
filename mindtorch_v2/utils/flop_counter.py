"""torch.utils.flop_counter: FlopCounterMode counts the flops of the matrix products run inside it.

PyTorch intercepts each aten op with a TorchDispatchMode. Here every op already passes the core's
profiler (core/profiler.c), which records its name, nesting and input shapes: the mode records a
profiler session and applies PyTorch's formulas to the events, so what is counted is what ran
(matmul counts as its mm/bmm, linear as its addmm, each backward formula's products as well).
Modules are followed with global forward hooks: an op belongs to every module whose forward was
running when it started. Ops run by backward count under "Global" only (PyTorch's ModuleTracker also
attributes them to the modules they flow back through)."""
from collections import defaultdict
from math import prod

__all__ = ["FlopCounterMode", "register_flop_formula"]


def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


# op name in the core's profiler -> flops from its input shapes. scaled_dot_product_attention is not
# here because PyTorch's CPU kernel (_scaled_dot_product_flash_attention_for_cpu) has no formula either.
flop_registry = {
    "aten.mm": mm_flop,
    "aten.addmm": lambda self_shape, a, b, *args, **kw: mm_flop(a, b),
    "aten.bmm": bmm_flop,
    "aten.baddbmm": lambda self_shape, a, b, *args, **kw: bmm_flop(a, b),
}
# ops with a PyTorch formula that needs arguments the profiler does not record (stride, padding...)
_UNCOUNTED = {"aten.convolution", "aten.conv_transpose1d", "aten.conv_transpose2d", "aten.conv_transpose3d"}


def register_flop_formula(targets, get_raw=False):
    raise NotImplementedError("torch.utils.flop_counter.register_flop_formula is not implemented: mindtorch_v2 "
                              "has no aten op overloads to register against")


suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    return "0%" if denom == 0 else f"{num / denom:.2%}"


class FlopCounterMode:
    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is not None:
            import warnings
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        if custom_mapping:
            raise NotImplementedError("FlopCounterMode(custom_mapping=...) is not implemented in mindtorch_v2")
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth, self.display = depth, display
        self._session = None

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        import tabulate
        tabulate.PRESERVE_WHITESPACE = True
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        subsumed = False

        def process_mod(mod_name, depth):
            nonlocal subsumed
            total = sum(self.flop_counts[mod_name].values())
            subsumed |= total >= global_flops
            pad = " " * depth
            rows = [[pad + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            rows += [[pad + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                      convert_to_percent_str(v, global_flops)] for k, v in self.flop_counts[mod_name].items()]
            return rows

        values = []
        for mod in sorted(self.flop_counts):
            if mod != "Global" and mod.count(".") + 1 <= depth:
                values.extend(process_mod(mod, mod.count(".")))
        if "Global" in self.flop_counts and not subsumed:
            for v in values:
                v[0] = " " + v[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return tabulate.tabulate(values, headers=["Module", "FLOP", "% Total"], colalign=("left", "right", "right"))

    # ---- recording ----
    def _name(self, mod):
        if mod not in self._known:
            self._known[mod] = type(mod).__name__
        name = self._known[mod]
        if mod not in self._seen:
            for child_name, child in mod.named_children():
                self._known[child] = f"{name}.{child_name}"
                self._name(child)
            self._seen.add(mod)
        return name

    def _pre(self, mod, args):
        self._spans.append([self._name(mod), self._lib.mt_profiler_count(), None])
        self._open.append(self._spans[-1])

    def _post(self, mod, args, out):
        if self._open:
            self._open.pop()[2] = self._lib.mt_profiler_count()

    def __enter__(self):
        from ..autograd.profiler import _Session
        from ..nn.modules.module import register_module_forward_pre_hook, register_module_forward_hook
        from .._C import lib
        if _Session.active is not None:
            raise NotImplementedError("FlopCounterMode inside a running torch.profiler session is not implemented "
                                      "in mindtorch_v2 (both use the core's one profiler timeline)")
        self.flop_counts.clear()
        self._lib, self._known, self._seen, self._spans, self._open = lib, {}, set(), [], []
        self._session = _Session(record_shapes=True)
        self._session.start()
        self._hooks = [register_module_forward_pre_hook(self._pre), register_module_forward_hook(self._post)]
        return self

    def __exit__(self, *exc):
        from .._C import ffi
        for h in self._hooks:
            h.remove()
        lib = self._lib
        n = lib.mt_profiler_count()
        lib.mt_profiler_stop()
        type(self._session).active = None
        self._session = None
        events, shapes = lib.mt_profiler_events(), lib.mt_profiler_shapes()
        counted = set()  # events counted: a product inside a counted one (addmm's own mm) is not counted again
        for i in range(n):
            e = events[i]
            name = "aten." + ffi.string(e.name).decode("utf-8", "replace")
            p = e.parent
            while p >= 0 and p not in counted:
                p = events[p].parent
            if p >= 0:
                counted.add(i)
                continue
            if name in _UNCOUNTED:
                raise NotImplementedError(f"FlopCounterMode: flops of {name} are not counted in mindtorch_v2")
            formula = flop_registry.get(name)
            if formula is None:
                continue
            counted.add(i)
            args, k = [], e.shapes
            for _ in range(e.ninputs):
                nd = shapes[k]
                args.append([shapes[k + 1 + d] for d in range(nd)] if nd >= 0 else None)
                k += 1 + max(nd, 0)
            flops = formula(*args)
            self.flop_counts["Global"][name] += flops
            for mod in {m for m, start, end in self._spans if start <= i < (n if end is None else end)}:
                self.flop_counts[mod][name] += flops
        if self.display:
            print(self.get_table(self.depth))
        return False
