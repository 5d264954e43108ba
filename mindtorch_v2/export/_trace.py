def _export(*args, **kwargs):
    raise NotImplementedError("torch.export._trace._export is not implemented (mindtorch_v2 has no graph capture)")
