"""torch.onnx: ONNX export is not implemented; we are never inside an export."""


def is_in_onnx_export():
    return False


def export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.export is not implemented")


def dynamo_export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.dynamo_export is not implemented")


# symbolic functions registered for custom ops, by (name, opset): kept for an exporter, which
# mindtorch_v2 has not (libraries such as torchvision register theirs at import)
_CUSTOM_SYMBOLICS = {}


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if "::" not in symbolic_name:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name must match the format "
                         "domain::name, and should start with a letter and contain only alphanumerical characters")
    _CUSTOM_SYMBOLICS[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _CUSTOM_SYMBOLICS.pop((symbolic_name, opset_version), None)


class OnnxExporterError(RuntimeError):
    pass
