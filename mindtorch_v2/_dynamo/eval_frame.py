"""torch._dynamo.eval_frame: torch.compile returns the module itself here (there is no graph compiler),
so no OptimizedModule is ever made. The class exists for the isinstance checks libraries make
(accelerate's is_compiled_module, transformers' unwrapping before save_pretrained), which answer
False, as they do in PyTorch for a module that was not compiled."""
from ..nn import Module


class OptimizedModule(Module):
    def __init__(self, mod, dynamo_ctx=None):
        raise NotImplementedError("torch._dynamo.eval_frame.OptimizedModule is not implemented in mindtorch_v2: "
                                  "torch.compile returns the module itself")
