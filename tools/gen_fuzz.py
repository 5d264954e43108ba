"""The C fuzzer's call table, generated from the prototypes of csrc/include/mt.h.

tools/gen_ops.py writes it (with its other outputs; `gen_ops.py --check` fails when it is stale) to
tests/c/fuzz/fuzz_calls.h, which tests/c/fuzz/fuzz_ops.c includes. Every `mt_status mt_*(...)` entry
point gets one case that draws each parameter from the fuzz input by its C type (and, for a few, by
its name), calls the function and hands its results to the harness's registers. A function is either
drawn here, written by hand in fuzz_ops.c (HAND), or excluded with its reason (EXCLUDED); a new
function with a parameter type this file cannot draw stops the generator, so that every new op is
fuzzed or its exclusion is stated.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "csrc", "include", "mt.h")
HARNESS = os.path.join(ROOT, "tests", "c", "fuzz", "fuzz_ops.c")
OUTPUT = os.path.join(ROOT, "tests", "c", "fuzz", "fuzz_calls.h")

# Entry points that are not ops, each with why it is left out.
EXCLUDED = {
    # storage on memory the caller owns, released through the caller's deleter (Python's buffers)
    "mt_from_blob": "wraps caller memory with a deleter: no computation",
    "mt_storage_move_to": "moves a storage into caller memory (share_memory_): no computation",
    # autograd plumbing driven by the Python layer, with preconditions Python establishes
    "mt_tensor_set_data": "Python's .data setter: Python checks the new data first",
    "mt_function_record": "a custom Function's node: Python handles and callbacks",
    "mt_node_attach": "re-attaches a saved output to a node handle",
    "mt_node_saved": "graph introspection (grad_fn._saved_*) through node handles",
    "mt_tensor_rename_grad_fn": "names the node an op has just recorded (binding bookkeeping)",
    "mt_tensor_inplace_view": "called right after an in-place view op by the binding (bookkeeping)",
    # generator state (the harness seeds its generators itself)
    "mt_generator_create": "generator lifecycle",
    "mt_generator_get_state": "generator state",
    "mt_generator_set_state": "generator state",
    # configuration
    "mt_fft_use_mkl": "names the FFT engine's library, once at import (the harness runs on FFTW)",
    "mt_lapack_use_mkl": "names MKL's library for LAPACK, once at import (the harness runs on OpenBLAS)",
    # profiler
    "mt_profiler_start": "profiler",
    "mt_profiler_range_begin": "profiler",
}
# Ops called by hand-written cases of fuzz_ops.c (checked: the harness must call them).
HAND = {
    "mt_from_data": "create(): the tensor's bytes come from the input",
    "mt_read": "read(): a caller buffer of a given capacity",
}

# Tensor parameters that may be NULL (the others must not: a required tensor is never NULL, the call
# is skipped while the registers are empty). By name in every function, or function.name.
OPTIONAL_NAMES = {"out", "bias", "sorter", "weights", "pos_weight", "running_mean", "running_var"}
OPTIONAL = {
    "mt_scaled_dot_product_attention.mask", "mt_vision_deform_im2col.mask", "mt_vision_deform_col2im.mask",
    "mt_layer_norm.weight", "mt_batch_norm.weight", "mt_group_norm.weight", "mt_nll_loss.weight",
    "mt_cross_entropy.weight", "mt_pointwise_loss.weight", "mt_quantile.q", "mt_vision_roi_backward.index",
    "mt_normal_tensors.mean", "mt_normal_tensors.std", "mt_sgd_step.momentum_buffer",
    "mt_adam_step.max_exp_avg_sq", "mt_rmsprop_step.grad_avg", "mt_rmsprop_step.momentum_buffer",
    "mt_tensor_set_grad.grad",
    # arrays whose entries may be NULL
    "mt_index.indices", "mt_index_put_.indices", "mt_backward.grads",
}
# Calls the harness skips under a condition over the drawn parameters (a C expression of fuzz_ops.c's helpers).
SKIP_IF = {
    # a cycle of grads (a.grad = b, b.grad = a) is accepted and never freed, as in PyTorch: the program's
    # leak, which the harness's leak check would count as the library's
    "mt_tensor_set_grad": "grad_cycle(p_t, p_grad)",
}
# Outputs the caller may decline (a NULL pointer).
OPTIONAL_OUTS = {"mt_var.mean", "mt_pool.indices", "mt_vision_roi.index", "mt_unique.inverse", "mt_unique.counts"}
# Output arrays: how many entries the call writes (a C expression over the drawn parameters).
OUT_ARRAYS = {
    "mt_split_with_sizes.outs": "p_n",
    "mt_unbind.outs": "dim_size(p_t, p_dim)",
    "mt_unbind_copy.outs": "dim_size(p_t, p_dim)",
    "mt_backward.input_grads": "p_ninputs",
}
# Fixed-length int64 arrays (no count parameter before them): how many values are drawn (the rest
# of the buffer is 0); 3 otherwise (one per spatial dim).
ARRAY_LEN = {"mt_vision_deform_im2col.geometry": 8, "mt_vision_deform_col2im.geometry": 8,
             "mt_vision_roi_backward.input_size": 4}
# int64 arrays holding sizes: drawn small (0..5) rather than as dims
SIZE_ARRAYS = {"sizes", "shape", "repeats", "output_size", "kernel_size", "input_size"}
# Parameters drawn otherwise than their type says.
DRAW = {f"{fn}.op": "op_arg(b)" for fn in ("mt_unary", "mt_binary", "mt_binary_scalar", "mt_ternary")}
DTYPE_NAMES = {"dtype", "src_dtype", "dst_dtype"}
# Counts with a meaning when negative (every dim); the other counts are lengths, never negative from
# Python, and are drawn 0..6.
NEGATIVE_COUNTS = {"mt_squeeze.ndims", "mt_reduce.ndims", "mt_var.ndims", "mt_vector_norm.ndims",
                   "mt_logsumexp.ndims", "mt_backward.nroots", "mt_backward.ninputs"}

ARRAYS = ("const int64_t *", "const double *", "mt_tensor *const *")


def prototypes(header_text):
    """(name, [(type, name)]) of every mt_status function of the header, in order."""
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    out = []
    for name, params in re.findall(r"\bmt_status\s+(mt_\w+)\s*\(([^;{]*?)\)\s*;", text):
        ps = []
        for p in params.split(","):
            p = " ".join(p.split())
            m = re.match(r"^(.*?)\s*(\w+)$", p)
            if not m or "(" in p:
                ps.append((p, ""))  # a function pointer or an unnamed parameter: not drawable
                continue
            ctype = re.sub(r"\s*\*\s*", " *", m.group(1)).replace("* *", "**").replace("struct ", "").strip()
            ps.append((ctype, m.group(2)))
        out.append((name, ps))
    return out


class Undrawable(Exception):
    pass


def case(fn, params):
    """The C statements of one call case."""
    decl, skip, args, outs, post = [], [], [], [], []
    count = None  # the count parameter the next arrays use
    for i, (ctype, name) in enumerate(params):
        key, v = f"{fn}.{name}", f"p_{name}"
        nxt = params[i + 1][0] if i + 1 < len(params) else None
        optional = name in OPTIONAL_NAMES or key in OPTIONAL
        if key in DRAW:
            decl.append(f"{ctype} {v} = {DRAW[key]};")
        elif ctype == "int" and nxt in ARRAYS:
            decl.append(f"int {v} = count_arg(b, {int(key in NEGATIVE_COUNTS)});")
            count = v
        elif ctype == "int":
            decl.append(f"int {v} = {'dtype_arg' if name in DTYPE_NAMES else 'int_arg'}(b);")
        elif ctype == "int64_t":
            decl.append(f"int64_t {v} = i64(b);")
        elif ctype == "double":
            decl.append(f"double {v} = f64(b);")
        elif ctype == "mt_tensor *":
            decl.append(f"mt_tensor *{v} = {'out_arg' if name == 'out' else 'opt' if optional else 'need'}(m, b);")
            if not optional:
                skip.append(f"!{v}")
        elif ctype == "mt_tensor *const *":
            if count is None:
                raise Undrawable(f"{fn}: tensor array {name} without a count parameter before it")
            decl.append(f"mt_tensor *{v}[CAP] = {{0}};")
            decl.append(f"if (!tensors_arg(m, b, {v}, {count}, {int(optional)})) return;")
        elif ctype == "const int64_t *":
            n = count or str(ARRAY_LEN.get(key, 3))
            draw = "size_arg" if name in SIZE_ARRAYS else "i64"
            decl.append(f"int64_t {v}[CAP] = {{0}};")
            decl.append(f"for (int k = 0; k < {n} && k < CAP; k++) {v}[k] = {draw}(b);")
        elif ctype == "const double *":
            decl.append(f"double {v}[CAP] = {{0}};")
            decl.append(f"for (int k = 0; k < {count or 3} && k < CAP; k++) {v}[k] = f64(b);")
        elif ctype == "const char *" and fn == "mt_einsum":
            decl.append(f"char {v}[16];")
            decl.append(f"equation_arg(b, {v}, sizeof {v});")
        elif ctype == "mt_generator *":
            decl.append(f"mt_generator *{v} = gen_arg(b);")
        elif ctype in ("double *", "int64_t *"):
            decl.append(f"{ctype[:-2]} {v} = 0;")
            args.append(f"&{v}")
            continue
        elif ctype == "mt_tensor **" and key in OUT_ARRAYS:
            decl.append(f"mt_tensor *{v}[CAP] = {{0}};")
            skip.append(f"{OUT_ARRAYS[key]} < 0 || {OUT_ARRAYS[key]} > CAP")
            args.append(v)
            post.append(f"for (int k = 0; k < CAP; k++) results[nres++] = {v}[k];")
            continue
        elif ctype == "mt_tensor **":
            decl.append(f"mt_tensor *{v} = NULL;")
            if key in OPTIONAL_OUTS:
                decl.append(f"int want_{name} = u8(b) & 1;")
                args.append(f"want_{name} ? &{v} : NULL")
            else:
                args.append(f"&{v}")
            outs.append(v)
            continue
        else:
            raise Undrawable(f"{fn}: parameter '{ctype}{'' if ctype.endswith('*') else ' '}{name}' cannot be drawn")
        args.append(v)
    lines = [f"/* {fn} */"] + decl
    if fn in SKIP_IF:
        skip.append(SKIP_IF[fn])
    if skip:
        lines.append(f"if ({' || '.join(skip)}) return;")
    lines.append(f"mt_status st = {fn}({', '.join(args)});")
    lines.append(f"mt_tensor *results[{len(outs)} + {'CAP' if post else 0} + 1] = {{{', '.join(outs) or '0'}}};")
    lines.append(f"int nres = {len(outs)};")
    lines += post
    lines.append("finish(m, b, st, nres, results);")
    return lines


def generate(header_text, harness_text):
    protos = prototypes(header_text)
    names = {fn for fn, _ in protos}
    for fn in (*EXCLUDED, *HAND):
        if fn not in names:
            raise SystemExit(f"tools/gen_fuzz.py: {fn} is listed but is no mt_status function of mt.h")
    for fn in HAND:
        if f"{fn}(" not in harness_text:
            raise SystemExit(f"tools/gen_fuzz.py: {fn} is listed as hand-written but fuzz_ops.c does not call it")
    cases, problems = [], []
    for fn, params in protos:
        if fn in EXCLUDED or fn in HAND:
            continue
        try:
            cases.append((fn, case(fn, params)))
        except Undrawable as e:
            problems.append(str(e))
    if problems:
        raise SystemExit("tools/gen_fuzz.py: teach it these parameters, or list the function in EXCLUDED "
                         "with its reason:\n  " + "\n  ".join(problems))
    out = ["/* fuzz_calls.h: generated by tools/gen_fuzz.py (run by tools/gen_ops.py) from the prototypes of",
           " * csrc/include/mt.h; do not edit. One case per entry point: its parameters drawn from the input,",
           " * its results handed to the registers (finish() in fuzz_ops.c). */",
           f"#define NCALLS {len(cases)}",
           "",
           "static const char *const call_names[NCALLS] = {"]
    out += [f'    "{fn}",' for fn, _ in cases]
    out += ["};", "", "static void call(machine *m, bytes *b, int which) {", "    switch (which) {"]
    for k, (fn, lines) in enumerate(cases):
        out.append(f"    case {k}: {{ {lines[0]}")
        out += ["        " + line for line in lines[1:]]
        out.append("        return;")
        out.append("    }")
    out += ["    }", "}", ""]
    return "\n".join(out)


def outputs(header_text):
    with open(HARNESS) as f:
        return {OUTPUT: generate(header_text, f.read())}
