"""The public op surface of PyTorch 2.13 against mindtorch_v2's.

    python tools/op_coverage.py             # print the table (and the missing names with -v)
    python tools/op_coverage.py --write     # regenerate tests/fixtures/torch_surface.json from live PyTorch
    python tools/op_coverage.py --missing   # rewrite tests/fixtures/op_surface_missing.json: the in-scope
                                            # names still missing, which tests/core/test_op_coverage.py
                                            # holds us to (the list may only shrink)

The surface is every public callable (classes excluded: they are types, not ops) of
six namespaces: torch, Tensor, nn.functional, linalg, special and fft. The names come from live PyTorch
when it is installed, else from the committed list this script wrote. Names of out-of-scope families
(sparse layouts, quantized tensors, backend-specific entry points, TorchScript/compiler internals) are
counted apart, each with its reason; in mindtorch_v2 they raise NotImplementedError naming themselves
or are absent.
"""
import inspect
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's mindtorch_v2
SURFACE = os.path.join(ROOT, "tests", "fixtures", "torch_surface.json")
MISSING = os.path.join(ROOT, "tests", "fixtures", "op_surface_missing.json")
NAMESPACES = ("torch", "Tensor", "nn.functional", "linalg", "special", "fft")

# (pattern over "namespace.name", reason): the families outside the project's scope
OUT_OF_SCOPE = [
    # (the COO/CSR names mindtorch_v2.sparse implements are in scope)
    (r"(?!(torch\.sparse_(coo|csr)_tensor|Tensor\.(to_sparse(_coo|_csr)?|coalesce|is_coalesced|indices|values|"
     r"crow_indices|col_indices|sparse_dim|dense_dim|sparse_mask))$)"
     r".*(sparse|_coo|_csr|_csc|_bsr|_bsc|crow_|ccol_|row_indices|col_indices|coalesce|"
     r"smm$|hspmm|sspaddmm|saddmm|dense_dim|(?<!tril_)(?<!triu_)(?<!_with_)indices$|values$|_nnz).*",
     "sparse layouts"),
    (r"torch\.(native_norm|spmm)$", "sparse layouts"),  # CPU kernels for sparse tensors only
    (r".*(quantize|q_per_channel|q_scale|q_zero_point|qscheme|int_repr|fake_quant|quantized_|"
     r"_per_tensor|dequantize|choose_qparams|fused_moving_avg_obs).*", "quantized tensors"),
    (r".*(cudnn|miopen|mkldnn|fbgemm|mps_|nnpack|_cuda|cuda$|xpu|(?<!fl)ipu|hpu|mtia|vulkan|opengl|_gpu_|_xla_|"
     r"is_vulkan|is_mkldnn|is_xla|is_ort|is_maia|is_meta_tensor).*", "backend-specific entry points"),
    # (torch.trace is the matrix trace; the autocast state functions, sym_* on Python numbers, cond and
    # while_loop run eagerly, and are in scope)
    (r"torch\.(compiled_with_cxx11_abi|vmap_impl|export|jit|script|"
     r"import_ir_module.*|merge_type_from_type_comment|parse_.*|unify_type_list|fork|wait|"
     r"set_float32_matmul_precision_.*|classes|sym_constrain_range.*|sym_fresh_size|Sym.*|wrap_.*|"
     r"read_vitals|set_vital|vitals_enabled|has_.*)$",
     "TorchScript/compiler internals"),
    (r"Tensor\.(nested_.*|to_padded_tensor|is_nested|values|offsets|lengths)$", "nested tensors"),
    (r"Tensor\.index$", "functorch first-class dimensions"),  # binds positions to functorch.dim Dim objects
    # always a uint64 result, and uint16/32/64 tensors are absent (_unsupported_dtypes.py)
    (r"(torch|Tensor)\.hash_tensor$", "unsigned 16-64-bit results"),
]
_SCOPE_RE = [(re.compile(p), why) for p, why in OUT_OF_SCOPE]


def out_of_scope(qualified):
    for rx, why in _SCOPE_RE:
        if rx.fullmatch(qualified):
            return why
    return None


def public_callables(obj):
    """Public functions and methods; classes (types such as Tensor or dtype, typing imports) are not ops."""
    names = []
    for n in dir(obj):
        v = getattr(obj, n, None)
        if n.startswith("_") or v is None or not callable(v) or inspect.isclass(v):
            continue
        if getattr(v, "__module__", None) == "typing":
            continue
        names.append(n)
    return sorted(names)


def namespaces(lib):
    return {"torch": lib, "Tensor": lib.Tensor, "nn.functional": lib.nn.functional, "linalg": lib.linalg,
            "special": lib.special, "fft": getattr(lib, "fft", None)}


def torch_surface():
    try:
        import torch
    except ImportError:
        with open(SURFACE) as f:
            return json.load(f)["names"]
    return {ns: public_callables(obj) for ns, obj in namespaces(torch).items()}


def implemented(obj, name):
    """obj.name exists and is not one of _missing.py's stubs (a getattr that raises counts as absent)."""
    try:
        v = getattr(obj, name)
    except Exception:
        return False
    return not getattr(v, "_mindtorch_missing", False)


def ours():
    import mindtorch_v2 as mt
    found = {}
    for ns, obj in namespaces(mt).items():
        found[ns] = set() if obj is None else {n for n in dir(obj) if implemented(obj, n)
                                               and callable(getattr(obj, n))}
    return found


def report():
    """{namespace: (in-scope names, present in-scope names, {reason: out-of-scope names})}"""
    theirs, mine = torch_surface(), ours()
    rows = {}
    for ns in NAMESPACES:
        scope, skipped = [], {}
        for n in theirs[ns]:
            why = out_of_scope(f"{ns}.{n}")
            if why:
                skipped.setdefault(why, []).append(n)
            else:
                scope.append(n)
        rows[ns] = (scope, [n for n in scope if n in mine[ns]], skipped)
    return rows


def main(argv):
    if "--write" in argv:
        import torch
        surface = {ns: public_callables(obj) for ns, obj in namespaces(torch).items()}
        with open(SURFACE, "w") as f:
            json.dump({"torch_version": torch.__version__.split("+")[0], "names": surface}, f, indent=0)
            f.write("\n")
        print("wrote", os.path.relpath(SURFACE, ROOT))
        return 0
    rows = report()
    if "--missing" in argv:
        write_missing(rows, MISSING)
    print_table(rows, "namespace", verbose="-v" in argv)
    return 0


def write_missing(rows, path):
    """The in-scope names still missing, per namespace: the list the coverage test holds us to."""
    missing = {ns: sorted(set(scope) - set(have)) for ns, (scope, have, _) in rows.items()}
    with open(path, "w") as f:
        json.dump(missing, f, indent=0)
        f.write("\n")
    print("wrote", os.path.relpath(path, ROOT))


def print_table(rows, first, verbose=False):
    """rows: {namespace: (in-scope names, present names, {reason: out-of-scope names})} as a markdown
    table; verbose: then the missing and out-of-scope names of each namespace."""
    print(f"| {first} | in scope | present | missing | coverage | out of scope |")
    print("|---|---|---|---|---|---|")
    tot = [0, 0, 0]
    for ns, (scope, have, skipped) in rows.items():
        oos = sum(len(v) for v in skipped.values())
        tot[0] += len(scope); tot[1] += len(have); tot[2] += oos
        print(f"| {ns} | {len(scope)} | {len(have)} | {len(scope) - len(have)} | "
              f"{100 * len(have) / max(len(scope), 1):.0f}% | {oos} |")
    print(f"| all | {tot[0]} | {tot[1]} | {tot[0] - tot[1]} | {100 * tot[1] / tot[0]:.0f}% | {tot[2]} |")
    if verbose:
        for ns, (scope, have, skipped) in rows.items():
            missing = sorted(set(scope) - set(have))
            print(f"\n{ns} missing ({len(missing)}): {' '.join(missing)}")
            for why, names in skipped.items():
                print(f"{ns} out of scope, {why} ({len(names)}): {' '.join(names)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
