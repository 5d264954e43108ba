"""torchmetrics (Accuracy, MeanSquaredError, F1Score, AUROC... updated over batches) and einops
(rearrange/reduce/repeat/einsum, and their nn layers with a gradient) on seeded inputs."""
import json
import warnings

warnings.filterwarnings("ignore")
import torch

torch.manual_seed(0)
result = {"_library": "mindtorch_v2" if "mindtorch_v2" in torch.__file__ else "torch"}


def values(t):
    return t.detach().flatten().tolist() if isinstance(t, torch.Tensor) else t


try:
    import torchmetrics
    from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score, BinaryAUROC, MulticlassConfusionMatrix
    logits, target = torch.randn(3, 16, 4), torch.randint(0, 4, (3, 16))
    scores, labels = torch.rand(40), torch.randint(0, 2, (40,))
    preds, y = torch.randn(3, 10), torch.randn(3, 10)
    metrics = {"acc": MulticlassAccuracy(num_classes=4), "acc_micro": torchmetrics.Accuracy("multiclass", num_classes=4, average="micro"),
               "f1": MulticlassF1Score(num_classes=4, average="macro"), "confusion": MulticlassConfusionMatrix(num_classes=4)}
    out = {}
    for name, m in metrics.items():
        out[name + "_steps"] = [values(m(logits[i], target[i])) for i in range(3)]
        out[name] = values(m.compute())
    mse, mae, r2 = torchmetrics.MeanSquaredError(), torchmetrics.MeanAbsoluteError(), torchmetrics.R2Score()
    for i in range(3):
        mse.update(preds[i], y[i]), mae.update(preds[i], y[i]), r2.update(preds[i], y[i])
    out.update(mse=values(mse.compute()), mae=values(mae.compute()), r2=values(r2.compute()),
               auroc=values(BinaryAUROC()(scores, labels)),
               functional_f1=values(torchmetrics.functional.f1_score(logits[0], target[0], "multiclass", num_classes=4)))
    result["torchmetrics"] = out
except ImportError:
    pass

try:
    import einops
    from einops.layers.torch import Rearrange, Reduce
    x = torch.randn(2, 3, 4, 6)
    layer = torch.nn.Sequential(Rearrange("b c h w -> b (h w) c"), torch.nn.Linear(3, 5), Reduce("b n d -> b d", "mean"))
    w = torch.randn(5, 3, requires_grad=True)
    xg = x.clone().requires_grad_()
    y = einops.einsum(einops.rearrange(xg, "b c h w -> b h w c"), w, "b h w c, d c -> b d")
    y.sum().backward()
    result["einops"] = {
        "rearrange": values(einops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (c p1 p2)", p1=2, p2=3)),
        "reduce_max": values(einops.reduce(x, "b c h w -> b c", "max")),
        "reduce_mean": values(einops.reduce(x, "b c (h 2) w -> b c h w", "mean")),
        "repeat": values(einops.repeat(x[0, 0], "h w -> h w k", k=2)),
        "pack": [values(t) for t in einops.pack([x[0], x[1, 0]], "* h w")[0:1]],
        "layers": values(layer(x)), "einsum": values(y), "grad_x": values(xg.grad), "grad_w": values(w.grad)}
except ImportError:
    pass

print("RESULT " + json.dumps(result))
