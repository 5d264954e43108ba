"""torch.onnx: ONNX export is not implemented; we are never inside an export."""


def is_in_onnx_export():
    return False


def export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.export is not implemented")


def dynamo_export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.dynamo_export is not implemented")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    raise NotImplementedError("torch.onnx.register_custom_op_symbolic is not implemented")


class OnnxExporterError(RuntimeError):
    pass
