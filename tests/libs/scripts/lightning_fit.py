"""Lightning Trainer.fit of a small regression model, with Adam and with LBFGS: per-step losses."""
import json
import sys
import warnings

warnings.filterwarnings("ignore")
import torch
import lightning
from lightning.pytorch.utilities.model_summary import ModelSummary


class Regressor(lightning.LightningModule):
    def __init__(self, optimizer):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        self.optimizer = optimizer
        self.losses = []
        self.example_input_array = torch.zeros(2, 4)  # the model summary runs it under FlopCounterMode

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.losses.append(loss.item())
        return loss

    def configure_optimizers(self):
        if self.optimizer == "lbfgs":
            return torch.optim.LBFGS(self.parameters(), lr=0.5, max_iter=4, line_search_fn="strong_wolfe")
        return torch.optim.Adam(self.parameters(), lr=0.01)


def run(optimizer):
    torch.manual_seed(0)
    x = torch.randn(32, 4)
    y = (x.sum(1, keepdim=True) * 0.5).sin()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8, shuffle=True)
    model = Regressor(optimizer)
    trainer = lightning.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                                enable_progress_bar=False)
    trainer.fit(model, loader)
    summary = ModelSummary(model, max_depth=2)
    return {"losses": model.losses, "global_step": trainer.global_step, "flops": summary.total_flops,
            "layer_flops": [sum(c.values()) for c in summary.flop_counts.values()], "params": summary.param_nums,
            "weight": model.net[0].weight.flatten().tolist()}


result = {"_library": "mindtorch_v2" if "mindtorch_v2" in torch.__file__ else "torch",
          "adam": run("adam"), "lbfgs": run("lbfgs")}
print("RESULT " + json.dumps(result))
