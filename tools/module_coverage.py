"""The public names of PyTorch 2.13's modules (torch.optim, nn.utils, cpu, ...) against mindtorch_v2's.

    python tools/module_coverage.py             # print the table (and the missing names with -v)
    python tools/module_coverage.py --write     # regenerate tests/fixtures/module_surface.json from live PyTorch
    python tools/module_coverage.py --missing   # rewrite tests/fixtures/module_surface_missing.json: the in-scope
                                                # names still missing, which tests/core/test_module_coverage.py
                                                # holds us to (the list may only shrink)

A module's public names are its __all__, its submodules, and the other non-underscore names it binds to
PyTorch's functions and classes (torch.autograd.handle_torch_function is one), but not the classes every
module imports from torch, torch.nn or torch.optim (Tensor, Module, Optimizer...): they are the public API
of those. Names of families the project leaves out (OUT_OF_SCOPE) are counted apart with their reason;
in mindtorch_v2 they raise NotImplementedError naming themselves or are absent. tools/op_coverage.py does
the same for the op surface; the table and the missing-list file are its.
"""
import importlib
import inspect
import json
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_coverage  # noqa: E402  (also puts this checkout's mindtorch_v2 first on sys.path)

ROOT = op_coverage.ROOT
SURFACE = os.path.join(ROOT, "tests", "fixtures", "module_surface.json")
MISSING = os.path.join(ROOT, "tests", "fixtures", "module_surface_missing.json")
MODULES = ("optim", "optim.lr_scheduler", "optim.swa_utils", "distributions", "nn", "nn.init", "nn.utils",
           "nn.utils.parametrize", "nn.utils.parametrizations", "nn.utils.stateless", "nn.utils.fusion",
           "nn.utils.rnn", "utils.data", "autograd", "func", "library", "ops", "cpu", "amp", "sparse", "masked",
           "signal", "utils.benchmark", "utils.hooks", "random", "overrides", "testing")

_QUANT = "quantization (torch.ao)"
_BACKEND = "backend-specific (CUDA/Triton/oneDNN kernels)"
_CALLGRIND = "Callgrind instruction counts (Timer.collect_callgrind runs valgrind on a worker built against libtorch)"
# "module.name" -> why it is out of the project's scope (the list: quantization, nested tensors,
# ONNX export, TorchScript compilation; and, as for the op surface, other backends' entry points)
OUT_OF_SCOPE = {
    "nn.qat": _QUANT, "nn.quantizable": _QUANT, "nn.quantized": _QUANT, "nn.intrinsic": _QUANT,
    "ops.quantized": _QUANT,
    "ops.mkldnn": _BACKEND, "ops.onednn": _BACKEND, "ops.mkl": _BACKEND, "ops.inductor": _BACKEND,
    "library.triton_op": _BACKEND, "library.wrap_triton": _BACKEND,
    "sparse.SparseSemiStructuredTensorCUSPARSELT": _BACKEND, "sparse.SparseSemiStructuredTensorCUTLASS": _BACKEND,
    "sparse.SparseSemiStructuredTensor": _BACKEND, "sparse.semi_structured": _BACKEND,
    **{f"utils.benchmark.{n}": _CALLGRIND for n in ("CallgrindStats", "CopyIfCallgrind", "FunctionCount",
                                                    "FunctionCounts")},
}
# classes that are the public API of the module they come from, not of every module importing them
_HOMES = ("torch", "torch.nn", "torch.optim", "torch.optim.lr_scheduler")


def _reexported_class(lib, mod, name, value):
    if not inspect.isclass(value) or name in (getattr(mod, "__all__", None) or ()):
        return False
    return any(getattr(importlib.import_module(h.replace("torch", lib, 1)), name, None) is value
               for h in _HOMES if h.replace("torch", lib, 1) != mod.__name__)


def public_names(mod, qual):
    """PyTorch's public names of mod (its qualified name qual), as the module docstring defines them."""
    every = set(getattr(mod, "__all__", None) or ())
    out = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n, None)
        if n in every:
            out.append(n)
        elif isinstance(v, types.ModuleType):
            if v.__name__.startswith(qual + "."):  # a submodule, not an import such as math or torch
                out.append(n)
        elif inspect.isclass(v) or callable(v):
            home = getattr(v, "__module__", None)
            if isinstance(home, str) and home.split(".")[0] == "torch" and not _reexported_class("torch", mod, n, v):
                out.append(n)
    return sorted(out)


def _module(lib, name):
    """lib.name as a module (ops is an object of torch, not an importable module); None if absent."""
    try:
        return importlib.import_module(f"{lib.__name__}.{name}")
    except ImportError:
        obj = lib
        for part in name.split("."):
            obj = getattr(obj, part, None)
        return obj


def torch_surface():
    try:
        import torch
    except ImportError:
        with open(SURFACE) as f:
            return json.load(f)["names"]
    return {m: public_names(_module(torch, m), f"torch.{m}") for m in MODULES}


def ours():
    import mindtorch_v2 as mt
    found = {}
    for m in MODULES:
        mod = _module(mt, m)
        found[m] = set() if mod is None else {n for n in dir(mod) if op_coverage.implemented(mod, n)}
    return found


def report():
    """{module: (in-scope names, present in-scope names, {reason: out-of-scope names})}"""
    theirs, mine = torch_surface(), ours()
    rows = {}
    for m in MODULES:
        scope, skipped = [], {}
        for n in theirs[m]:
            why = OUT_OF_SCOPE.get(f"{m}.{n}")
            if why:
                skipped.setdefault(why, []).append(n)
            else:
                scope.append(n)
        rows[m] = (scope, [n for n in scope if n in mine[m]], skipped)
    return rows


def main(argv):
    if "--write" in argv:
        import torch
        with open(SURFACE, "w") as f:
            json.dump({"torch_version": torch.__version__.split("+")[0], "names": torch_surface()}, f, indent=0)
            f.write("\n")
        print("wrote", os.path.relpath(SURFACE, ROOT))
        return 0
    rows = report()
    if "--missing" in argv:
        op_coverage.write_missing(rows, MISSING)
    op_coverage.print_table({f"torch.{m}": r for m, r in rows.items()}, "module", verbose="-v" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
