"""Write mindtorch_v2/_op_schemas.json from live PyTorch 2.13: every operator of the torch.ops
namespaces mindtorch_v2 serves from a table (aten, prim, prims, ...), each with its overloads in
PyTorch's order, their schema text and tags. torch.ops reads the file at run time, so no torch is
needed then.

    python tools/gen_op_schemas.py           # regenerate
    python tools/gen_op_schemas.py --check   # fail if the file differs from what live PyTorch gives
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "mindtorch_v2", "_op_schemas.json")
NAMESPACES = ("aten", "prim", "prims", "debugprims", "rngprims", "profiler", "export", "debug_mode_ops")
# PyTorch's public names whose implementation is the op's generated Python binding (the modules of
# native_functions.yaml's python_module): (public module, binding module, prefix the public name drops)
BINDINGS = (("torch", "_VariableFunctions", ""), ("Tensor", "TensorBase", ""), ("nn.functional", "_nn", ""),
            ("linalg", "_linalg", "linalg_"), ("special", "_special", "special_"), ("fft", "_fft", "fft_"))


def python_names(torch, op):
    """The public Python names that call aten::op's generated binding, e.g. ["torch.add", "Tensor.add"]."""
    import importlib
    out = []
    for public, binding, prefix in BINDINGS:
        if not op.startswith(prefix):
            continue
        name = op[len(prefix):]
        home = torch.Tensor if public == "Tensor" else importlib.import_module(f"torch.{public}") \
            if public != "torch" else torch
        target = getattr(torch._C.TensorBase if public == "Tensor" else getattr(torch._C, binding), op, None)
        if target is not None and getattr(home, name, None) is target:
            out.append(f"{public}.{name}")
    return out


def table():
    import torch
    import torch._prims  # noqa: F401  (defines the prims namespace)
    names = {}
    for s in torch._C._jit_get_all_schemas():
        ns, _, op = s.name.partition("::")
        if ns in NAMESPACES:
            names.setdefault(ns, set()).add(op)
    dispatcher = {tuple(n.split(".", 1)) if "." in n else (n, "") for n in torch._C._dispatch_get_all_op_names()}
    out = {"torch_version": torch.__version__.split("+")[0], "namespaces": {}}
    for ns in NAMESPACES:
        ops = {}
        for op in sorted(names.get(ns, ())):
            qual = f"{ns}::{op}"
            schemas = {s.overload_name: s for s in torch._C._jit_get_schemas_for_operator(qual)}
            rows = []
            for ov in torch._C._jit_get_operation(qual)[1]:  # PyTorch's order of packet.overloads()
                text = str(schemas[ov])
                tags = sorted(t.name for t in torch._C._get_operation_overload(qual, ov)[2])
                rows.append([ov or "default", text[text.index("("):]] + ([tags] if tags else []))
            entry = {"overloads": rows}
            jit_only = [r[0] for r in rows if r[0] != "default" and (qual, r[0]) not in dispatcher
                        or r[0] == "default" and (qual, "") not in dispatcher]
            if jit_only:  # TorchScript's builtins, not dispatcher operators
                entry["jit_only"] = jit_only
            if ns == "aten" and python_names(torch, op):
                entry["python"] = python_names(torch, op)
            ops[op] = entry
        out["namespaces"][ns] = ops
    return out


def main(argv):
    text = json.dumps(table(), indent=None, separators=(",", ":"), sort_keys=False)
    text = text.replace('},"', '},\n"')  # one op per line: readable diffs
    if "--check" in argv:
        with open(OUT) as f:
            if f.read() != text + "\n":
                print(f"{os.path.relpath(OUT, ROOT)} is stale: run tools/gen_op_schemas.py")
                return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text + "\n")
    print("wrote", os.path.relpath(OUT, ROOT), len(text), "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
