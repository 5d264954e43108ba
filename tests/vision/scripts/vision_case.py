"""One torchvision/timm case, run under whichever torch this process imports: real PyTorch, or
mindtorch_v2 through `python -m torch_proxy`. Usage: vision_case.py CASE DIR. The real run writes the
model weights and inputs it drew into DIR/CASE_in.npz; every run writes its results to
DIR/CASE_<torch|ours>.npz. tests/vision/test_vision.py runs both and compares.

PyPI's torchvision 0.28.0 is a CUDA build: beside the CPU PyTorch its _C.so cannot load (it needs
libtorch_cuda.so), and torchvision's _meta_registrations then fails on the undefined torchvision::nms.
Under real PyTorch this script defines the operator schemas (without kernels) before importing it,
so its Python (models, transforms, box ops) imports; the compiled operators are compared there with
torchvision's own Python roi_align (_roi_align) and the greedy nms below."""
import os
import sys

import numpy as np
import torch

OURS = "mindtorch_v2" in getattr(torch, "__file__", "") or hasattr(torch, "_vision_ops")
CASE, DIR = sys.argv[1], sys.argv[2]
INP = os.path.join(DIR, f"{CASE}_in.npz")


def import_torchvision():
    if not OURS:
        import importlib.util
        so = os.path.join(os.path.dirname(importlib.util.find_spec("torchvision").origin), "_C.so")
        try:
            torch.ops.load_library(so)
        except OSError:
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
            import mindtorch_v2._vision_ops as ours  # only its schema texts
            lib = torch.library.Library("torchvision", "DEF")
            for s in ours._SCHEMAS:
                lib.define(s)
            globals()["_keep_lib"] = lib
    import torchvision
    return torchvision


def greedy_nms(boxes, scores, thr):
    from torchvision.ops import box_iou
    order = torch.sort(scores, descending=True).indices.tolist()
    iou = box_iou(boxes, boxes)
    keep, dead = [], set()
    for i in order:
        if i in dead:
            continue
        keep.append(i)
        dead.update(j for j in order if iou[i, j] > thr)
    return torch.tensor(keep, dtype=torch.int64)


def inputs(make):
    """The real run draws the inputs (make()) and saves them; ours loads the same ones."""
    if not OURS:
        arrays = make()
        np.savez(INP, **arrays)
    with np.load(INP) as f:
        return {k: f[k] for k in f.files}


def state(model, arrays, prefix="w."):
    sd = {k[len(prefix):]: torch.from_numpy(v.copy()) for k, v in arrays.items() if k.startswith(prefix)}
    model.load_state_dict(sd)
    return model.eval()


def model_arrays(model, x):
    out = {"x": x}
    out.update({"w." + k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    return out


def run():
    results = {}
    if CASE == "ops":
        tv = import_torchvision()
        from torchvision import ops

        def make():
            g = np.random.default_rng(0)
            xy = g.uniform(0, 50, (200, 2))
            wh = g.uniform(1, 20, (200, 2))
            feat = g.standard_normal((2, 3, 16, 16))
            r = g.uniform(0, 12, (7, 2))
            rois = np.concatenate([g.integers(0, 2, (7, 1)), r, r + g.uniform(0.5, 8, (7, 2))], 1)
            return {"boxes": np.concatenate([xy, xy + wh], 1).astype(np.float32),
                    "scores": g.permutation(200).astype(np.float32) / 200, "idxs": g.integers(0, 4, 200),
                    "feat": feat, "rois": rois, "gout": g.standard_normal((7, 3, 4, 5))}
        a = inputs(make)
        boxes, scores = torch.from_numpy(a["boxes"]), torch.from_numpy(a["scores"])
        for thr in (0.3, 0.5, 0.7):
            results[f"nms{thr}"] = (ops.nms(boxes, scores, thr) if OURS else greedy_nms(boxes, scores, thr)).numpy()
        if OURS:
            results["batched_nms"] = ops.batched_nms(boxes, scores, torch.from_numpy(a["idxs"]), 0.5).numpy()
        else:  # torchvision's coordinate trick over the same greedy nms
            off = torch.from_numpy(a["idxs"]).to(boxes) * (boxes.max() + 1)
            results["batched_nms"] = greedy_nms(boxes + off[:, None], scores, 0.5).numpy()
        from torchvision.ops.roi_align import _roi_align
        for aligned in (False, True):
            for ratio in (-1, 2):
                x = torch.from_numpy(a["feat"]).requires_grad_()
                rois = torch.from_numpy(a["rois"])
                if OURS:
                    y = ops.roi_align(x, rois, (4, 5), spatial_scale=0.5, sampling_ratio=ratio, aligned=aligned)
                else:
                    y = _roi_align(x, rois, 0.5, 4, 5, ratio, aligned)
                (y * torch.from_numpy(a["gout"])).sum().backward()
                results[f"roi_align_{aligned}_{ratio}"] = y.detach().numpy()
                results[f"roi_align_grad_{aligned}_{ratio}"] = x.grad.numpy()
    elif CASE == "resnet18":
        tv = import_torchvision()
        torch.manual_seed(0)
        m = tv.models.resnet18(num_classes=10)
        a = inputs(lambda: model_arrays(m, np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32)))
        state(m, a)
        with torch.no_grad():
            results["out"] = m(torch.from_numpy(a["x"])).numpy()
    elif CASE == "transforms":
        tv = import_torchvision()
        from torchvision.transforms import v2
        a = inputs(lambda: {"img": np.random.default_rng(2).integers(0, 256, (3, 60, 80), dtype=np.uint8)})
        img = tv.tv_tensors.Image(torch.from_numpy(a["img"]))
        # resized in float32 without antialias: mindtorch_v2 has neither antialiased nor uint8 interpolation yet
        pipe = v2.Compose([v2.Pad(2, fill=7), v2.ToDtype(torch.float32, scale=True), v2.Resize(40, antialias=False),
                           v2.CenterCrop((32, 36)), v2.RandomHorizontalFlip(p=1.0),
                           v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        results["out"] = pipe(img).as_subclass(torch.Tensor).numpy()
        results["gray"] = v2.functional.rgb_to_grayscale(torch.from_numpy(a["img"])).numpy()
    elif CASE in ("timm_resnet18", "timm_vit"):
        import_torchvision()  # timm imports it
        import timm
        torch.manual_seed(0)
        if CASE == "timm_resnet18":
            m, shape = timm.create_model("resnet18", num_classes=10), (2, 3, 64, 64)
        else:
            m, shape = timm.create_model("vit_tiny_patch16_224", img_size=32, patch_size=8, num_classes=10), (2, 3, 32, 32)
        a = inputs(lambda: model_arrays(m, np.random.default_rng(3).standard_normal(shape).astype(np.float32)))
        state(m, a)
        with torch.no_grad():
            results["out"] = m(torch.from_numpy(a["x"])).numpy()
    else:
        raise SystemExit(f"unknown case {CASE}")
    np.savez(os.path.join(DIR, f"{CASE}_{'ours' if OURS else 'torch'}.npz"), **results)


run()
