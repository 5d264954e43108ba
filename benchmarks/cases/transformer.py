"""Benchmark cases: a training step of a 2-layer TransformerEncoder (batch 8, seq 128, d_model 256, nhead 8).

PyTorch's defaults otherwise (dim_feedforward 2048, dropout 0.1, post-norm, ReLU); batch_first.
The step is forward + mean-square loss + backward + optimizer step, with the optimizer's zero_grad."""
from ..registry import case

B, L, D, H, FF, LAYERS = 8, 128, 256, 8, 2048, 2

# forward GEMMs per layer (in-proj, scores, attn @ v, out-proj, two FFN linears); backward is twice that
_FWD = LAYERS * 2 * (B * L * D * 3 * D + 2 * B * L * L * D + B * L * D * D + 2 * B * L * D * FF)
FLOPS = 3 * _FWD


def _encoder_step(lib, optimizer):
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True)
    model = lib.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
    model.train()
    g = lib.Generator().manual_seed(1)
    x = lib.randn(B, L, D, generator=g)
    target = lib.randn(B, L, D, generator=g)
    opt = optimizer(lib, model.parameters())

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
    return step


@case(f"TransformerEncoder train step ({LAYERS} layers, {B}x{L}x{D}, {H} heads, ff {FF}, SGD)", flops=FLOPS)
def _encoder_sgd(lib):
    return _encoder_step(lib, lambda lib, ps: lib.optim.SGD(ps, lr=0.01, momentum=0.9))


@case(f"TransformerEncoder train step ({LAYERS} layers, {B}x{L}x{D}, {H} heads, ff {FF}, AdamW)", flops=FLOPS)
def _encoder_adamw(lib):
    return _encoder_step(lib, lambda lib, ps: lib.optim.AdamW(ps, lr=1e-4))
