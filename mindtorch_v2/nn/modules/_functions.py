"""torch.nn.modules._functions: the identity Function whose node carries module backward hooks."""
from ...autograd.function import Function


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args
