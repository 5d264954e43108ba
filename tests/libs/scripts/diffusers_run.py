"""diffusers, unmodified: a small UNet2DModel and AutoencoderKL, the DDPM and DDIM schedulers and one
AdamW training step. Under real PyTorch (argv[2] == "save") the models are drawn from a seed and written
with save_pretrained, with the inputs, into argv[3]; both runs then load them with from_pretrained, so
both sides compute on the same weights and inputs. Prints one RESULT line."""
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
import torch
import diffusers
from diffusers import (AutoencoderKL, DDIMScheduler, DDPMScheduler, DiTTransformer2DModel, EulerDiscreteScheduler,
                       UNet2DConditionModel, UNet2DModel)
from safetensors.torch import load_file, save_file

shared = sys.argv[3]


def values(t):
    return t.detach().flatten().tolist()


if sys.argv[2] == "save":
    torch.manual_seed(0)
    UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(16, 32),
                down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
                norm_num_groups=8, attention_head_dim=8).save_pretrained(os.path.join(shared, "unet"))
    AutoencoderKL(in_channels=3, out_channels=3, block_out_channels=(16, 32), layers_per_block=1, latent_channels=4,
                  down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                  norm_num_groups=8, sample_size=16).save_pretrained(os.path.join(shared, "vae"))
    UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(16, 32),
                         down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                         up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=24,
                         attention_head_dim=4, norm_num_groups=8).save_pretrained(os.path.join(shared, "cond"))
    DiTTransformer2DModel(num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4, num_layers=2,
                          sample_size=8, patch_size=2, norm_num_groups=4).save_pretrained(os.path.join(shared, "dit"))
    save_file({"x": torch.randn(2, 3, 16, 16), "noise": torch.randn(2, 3, 16, 16), "t": torch.tensor([10, 700]),
               "latents": torch.randn(2, 4, 8, 8), "text": torch.randn(2, 5, 24)}, os.path.join(shared, "inputs.safetensors"))

inputs = load_file(os.path.join(shared, "inputs.safetensors"))
x, noise, t = inputs["x"], inputs["noise"], inputs["t"]
unet = UNet2DModel.from_pretrained(os.path.join(shared, "unet")).eval()
result = {"_library": "mindtorch_v2" if "mindtorch_v2" in torch.__file__ else "torch", "version": diffusers.__version__}

with torch.no_grad():
    out = unet(x, t).sample
    result["unet"] = {"shape": list(out.shape), "sample": values(out)}

    ddpm = DDPMScheduler(num_train_timesteps=1000)
    noisy = ddpm.add_noise(x, noise, t)
    # eps-prediction at t=700 with the posterior's variance noise drawn from a seeded generator
    step = ddpm.step(out[:1], 700, noisy[:1], generator=torch.Generator().manual_seed(0))
    result["ddpm"] = {"noisy": values(noisy), "prev_sample": values(step.prev_sample),
                      "x0": values(step.pred_original_sample)}

    ddim = DDIMScheduler(num_train_timesteps=1000, beta_schedule="scaled_linear", clip_sample=False)
    ddim.set_timesteps(5)
    sample, trajectory = noise[:1].clone(), []
    for step_t in ddim.timesteps:  # a 5-step eta=0 sampling loop with the UNet
        sample = ddim.step(unet(sample, step_t).sample, step_t, sample).prev_sample
        trajectory.append(values(sample[0, 0, 0]))
    result["ddim"] = {"timesteps": ddim.timesteps.tolist(), "trajectory": trajectory, "final": values(sample)}

    vae = AutoencoderKL.from_pretrained(os.path.join(shared, "vae")).eval()
    posterior = vae.encode(x).latent_dist
    result["vae"] = {"mean": values(posterior.mean), "std": values(posterior.std),
                     "decoded": values(vae.decode(posterior.mean).sample), "forward": values(vae(x).sample)}

    # text-conditioned (cross-attention) UNet in a 4-step Euler loop, and a class-conditioned DiT
    cond = UNet2DConditionModel.from_pretrained(os.path.join(shared, "cond")).eval()
    euler = EulerDiscreteScheduler(num_train_timesteps=1000)
    euler.set_timesteps(4)
    latents = inputs["latents"] * euler.init_noise_sigma
    for step_t in euler.timesteps:
        eps = cond(euler.scale_model_input(latents, step_t), step_t, inputs["text"]).sample
        latents = euler.step(eps, step_t, latents).prev_sample
    dit = DiTTransformer2DModel.from_pretrained(os.path.join(shared, "dit")).eval()
    result["conditional"] = {"euler": values(latents), "dit": values(dit(inputs["latents"], timestep=t,
                                                                         class_labels=torch.tensor([1, 2])).sample)}

# one training step: the DDPM noise-prediction loss, backward, AdamW
unet.train()
opt = torch.optim.AdamW(unet.parameters(), lr=1e-3, weight_decay=1e-2)
noisy = DDPMScheduler(num_train_timesteps=1000).add_noise(x, noise, t)
loss = torch.nn.functional.mse_loss(unet(noisy, t).sample, noise)
loss.backward()
grads = {n: p.grad.norm().item() for n, p in unet.named_parameters()}
opt.step()
with torch.no_grad():
    loss_after = torch.nn.functional.mse_loss(unet(noisy, t).sample, noise)
result["train"] = {"loss": loss.item(), "grad_norms": grads, "loss_after": loss_after.item(),
                   "conv_in_after": values(unet.conv_in.weight[0])}
print("RESULT " + json.dumps(result))
