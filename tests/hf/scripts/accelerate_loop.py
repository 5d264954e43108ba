"""accelerate.Accelerator on CPU: prepare, backward, clip_grad_norm_, gather, gather_for_metrics,
save_state / load_state (the weights, the optimizer and the RNG states come back)."""
import os

from hf_common import WORK, emit, tolist

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed

set_seed(0)
accelerator = Accelerator(cpu=True)
model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
x = torch.randn(20, 6)
y = torch.randint(0, 3, (20,))
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4, shuffle=True)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

losses, norms, gathered = [], [], []
for epoch in range(2):
    for xb, yb in loader:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        accelerator.backward(loss)
        norms.append(float(accelerator.clip_grad_norm_(model.parameters(), 1.0)))
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        gathered.append(tolist(accelerator.gather(loss.detach())))
    if epoch == 0:
        accelerator.save_state(os.path.join(WORK, "state"))
        saved = {k: v.clone() for k, v in accelerator.unwrap_model(model).state_dict().items()}
        after_save = torch.rand(3)  # the RNG moves on; load_state puts it back

with torch.no_grad():
    preds = accelerator.gather_for_metrics(model(x).argmax(-1))
accelerator.load_state(os.path.join(WORK, "state"))
restored = accelerator.unwrap_model(model).state_dict()
emit({"losses": losses, "grad_norms": norms, "gathered": gathered, "preds": tolist(preds),
      "restored_equal": all(torch.equal(restored[k], saved[k]) for k in saved),
      "rng_restored": torch.equal(torch.rand(3), after_save),
      "optimizer_steps": [int(s["step"]) for s in optimizer.state_dict()["state"].values()],
      "files": sorted(os.listdir(os.path.join(WORK, "state"))), "unwrapped": type(accelerator.unwrap_model(model)).__name__})
