"""One torchvision/timm case, run under whichever torch this process imports: real PyTorch, or
mindtorch_v2 through `python -m torch_proxy`. Usage: vision_case.py CASE DIR. The real run writes the
model weights and inputs it drew into DIR/CASE_in.npz; every run writes its results to
DIR/CASE_<torch|ours>.npz. tests/vision/test_vision.py runs both and compares.

PyPI's torchvision 0.28.0 is a CUDA build: beside the CPU PyTorch its _C.so cannot load (it needs
libtorch_cuda.so), and torchvision's _meta_registrations then fails on the undefined torchvision::nms.
Under real PyTorch this script defines the operator schemas (without kernels) before importing it,
so its Python (models, transforms, box ops) imports; the compiled operators are compared there with
torchvision's own Python roi_align (_roi_align) and the greedy nms below."""
import math
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


def cround(v):
    """C's round (half away from zero), which torchvision's pooling kernels use; Python's is half-even"""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def ref_roi_pool(x, rois, scale, ph, pw):
    """torchvision's roi_pool CPU kernel in torch ops: the max of each bin (autograd gives the argmax's
    gradient), zero for an empty bin"""
    H, W = x.shape[2:]
    out = []
    for r in rois.tolist():
        b, sw, sh, ew, eh = int(r[0]), *(cround(v * scale) for v in r[1:])
        bh, bw = max(eh - sh + 1, 1) / ph, max(ew - sw + 1, 1) / pw
        for i in range(ph):
            for j in range(pw):
                hs, he = (min(max(v + sh, 0), H) for v in (math.floor(i * bh), math.ceil((i + 1) * bh)))
                ws, we = (min(max(v + sw, 0), W) for v in (math.floor(j * bw), math.ceil((j + 1) * bw)))
                empty = he <= hs or we <= ws
                out.append(x.new_zeros(x.shape[1]) if empty else x[b, :, hs:he, ws:we].amax((1, 2)))
    return torch.stack(out).view(len(rois), ph, pw, -1).permute(0, 3, 1, 2)


def ps_pool_bins(r, scale, ph, pw, H, W, backward):
    """the bins of one roi in torchvision's ps_roi_pool: its forward clips to H - 1 / W - 1 and rounds in
    the input's type, its backward clips to H / W and rounds in float32 (roundf)"""
    rnd = (lambda v: cround(float(np.float32(v * scale)))) if backward else (lambda v: cround(v * scale))
    sw, sh, ew, eh = (rnd(v) for v in r[1:])
    bh, bw = max(eh - sh, 1) / ph, max(ew - sw, 1) / pw
    hmax, wmax = (H, W) if backward else (H - 1, W - 1)
    for i in range(ph):
        for j in range(pw):
            hs, he = (min(max(v + sh, 0), hmax) for v in (math.floor(i * bh), math.ceil((i + 1) * bh)))
            ws, we = (min(max(v + sw, 0), wmax) for v in (math.floor(j * bw), math.ceil((j + 1) * bw)))
            yield i, j, hs, he, ws, we


def ref_ps_roi_pool(x, rois, scale, ph, pw, gout):
    """torchvision's ps_roi_pool: values (the mean of each bin over its own channel) and, as its backward
    is not the forward's adjoint at the border, the input gradient for gout written out"""
    H, W = x.shape[2:]
    co = x.shape[1] // (ph * pw)
    out = np.zeros((len(rois), co, ph, pw))
    grad = np.zeros(x.shape)
    xs = x.numpy()
    for n, r in enumerate(rois.tolist()):
        b = int(r[0])
        for c in range(co):
            for i, j, hs, he, ws, we in ps_pool_bins(r, scale, ph, pw, H, W, False):
                if he > hs and we > ws:
                    out[n, c, i, j] = xs[b, (c * ph + i) * pw + j, hs:he, ws:we].sum() / ((he - hs) * (we - ws))
            for i, j, hs, he, ws, we in ps_pool_bins(r, scale, ph, pw, H, W, True):
                if he > hs and we > ws:
                    grad[b, (c * ph + i) * pw + j, hs:he, ws:we] += gout[n, c, i, j] / ((he - hs) * (we - ws))
    return out, grad


def ref_align(x, rois, scale, ph, pw, ratio, aligned, ps):
    """torchvision's roi_align (ps=False) and ps_roi_align (ps=True, aligned) CPU kernels, one sample at
    a time over torch indexing (autograd gives the gradients). torchvision's Python _roi_align differs
    from its kernels at the bottom/right border (it does not move a point past the last row onto it),
    so it is no reference there."""
    H, W = x.shape[2:]

    def sample(plane, y, xx):
        if not (-1.0 <= y <= H and -1.0 <= xx <= W):
            return 0
        y, xx = max(y, 0.0), max(xx, 0.0)
        y0, x0 = min(int(y), H - 1), min(int(xx), W - 1)
        y, xx = (float(y0) if y0 == H - 1 else y), (float(x0) if x0 == W - 1 else xx)
        y1, x1 = min(y0 + 1, H - 1), min(x0 + 1, W - 1)
        ly, lx = y - y0, xx - x0
        return ((1 - ly) * (1 - lx) * plane[y0, x0] + (1 - ly) * lx * plane[y0, x1] + ly * (1 - lx) * plane[y1, x0]
                + ly * lx * plane[y1, x1])

    co = x.shape[1] // (ph * pw) if ps else x.shape[1]
    out = []
    for r in rois.tolist():
        off = 0.5 if aligned or ps else 0.0
        sw, sh, ew, eh = (v * scale - off for v in r[1:])
        rw, rh = ew - sw, eh - sh
        if not aligned and not ps:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        count = gh * gw if ps else max(gh * gw, 1)
        for c in range(co):
            for i in range(ph):
                for j in range(pw):
                    plane = x[int(r[0]), (c * ph + i) * pw + j if ps else c]
                    acc = 0
                    for iy in range(gh):
                        for ix in range(gw):
                            acc = acc + sample(plane, sh + i * bh + (iy + 0.5) * bh / gh,
                                               sw + j * bw + (ix + 0.5) * bw / gw)
                    out.append(acc / count if torch.is_tensor(acc) else x.new_zeros(()))
    return torch.stack(out).view(len(rois), co, ph, pw)


def ref_deform_conv2d(x, offset, weight, bias, stride, pad, dil, mask):
    """torchvision's deform_conv2d in torch ops: each kernel tap samples the input bilinearly at its
    offset position (corners outside the image read zero, a point outside (-1, H) x (-1, W) is zero),
    times the mask; then a grouped product with the weight"""
    B, C, H, W = x.shape
    O, cpg, kh, kw = weight.shape
    groups = C // cpg
    og = offset.shape[1] // (2 * kh * kw)
    oh, ow = offset.shape[2:]
    off = offset.view(B, og, kh * kw, 2, oh, ow)
    m = mask.view(B, og, kh * kw, oh, ow) if mask is not None else None
    base_y = (torch.arange(oh) * stride[0] - pad[0]).to(x.dtype)[:, None]
    base_x = (torch.arange(ow) * stride[1] - pad[1]).to(x.dtype)[None, :]
    xg = x.view(B, og, C // og, H * W)
    cols = []
    for k in range(kh * kw):
        i, j = divmod(k, kw)
        y = base_y + i * dil[0] + off[:, :, k, 0]  # [B, og, oh, ow]
        xx = base_x + j * dil[1] + off[:, :, k, 1]
        inside = (y > -1) & (y < H) & (xx > -1) & (xx < W)
        y0, x0 = y.floor(), xx.floor()
        ly, lx = y - y0, xx - x0
        val = 0
        for cy, cx, w in ((y0, x0, (1 - ly) * (1 - lx)), (y0, x0 + 1, (1 - ly) * lx), (y0 + 1, x0, ly * (1 - lx)),
                          (y0 + 1, x0 + 1, ly * lx)):
            ok = inside & (cy >= 0) & (cy <= H - 1) & (cx >= 0) & (cx <= W - 1)
            idx = (cy.clamp(0, H - 1) * W + cx.clamp(0, W - 1)).long().view(B, og, 1, -1)
            v = xg.gather(3, idx.expand(B, og, C // og, oh * ow)).view(B, og, C // og, oh, ow)
            val = val + v * (w * ok)[:, :, None]
        if m is not None:
            val = val * m[:, :, k][:, :, None]
        cols.append(val.reshape(B, C, oh, ow))
    col = torch.stack(cols, 2).view(B, groups, cpg * kh * kw, oh * ow)  # channel-major, then tap
    out = torch.einsum("gok,bgkp->bgop", weight.view(groups, O // groups, cpg * kh * kw), col)
    return out.reshape(B, O, oh, ow) + bias.view(1, O, 1, 1)


def deform_inputs(g, B, C, O, groups, og, H, W, k, stride, pad, dil):
    oh = (H + 2 * pad[0] - (dil[0] * (k[0] - 1) + 1)) // stride[0] + 1
    ow = (W + 2 * pad[1] - (dil[1] * (k[1] - 1) + 1)) // stride[1] + 1
    return {"x": g.standard_normal((B, C, H, W)), "w": g.standard_normal((O, C // groups, *k)) * 0.3,
            "b": g.standard_normal(O), "off": g.uniform(-2.5, 2.5, (B, 2 * og * k[0] * k[1], oh, ow)),
            "mask": g.uniform(0, 1, (B, og * k[0] * k[1], oh, ow)), "gout": g.standard_normal((B, O, oh, ow))}


# deform_conv2d configurations: (B, C, O, groups, offset_groups, H, W, kernel, stride, padding, dilation)
DEFORM = {"plain": (2, 4, 6, 1, 1, 7, 8, (3, 3), (1, 1), (1, 1), (1, 1)),
          "grouped": (1, 6, 4, 2, 3, 9, 7, (3, 2), (2, 1), (0, 1), (1, 2))}


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
    elif CASE == "roi_ops":  # roi_pool, ps_roi_align, ps_roi_pool, deform_conv2d, masks_to_boxes
        import_torchvision()
        from torchvision import ops

        def make():
            g = np.random.default_rng(4)
            r = g.uniform(0, 13, (9, 2))
            rois = np.concatenate([g.integers(0, 2, (9, 1)), r, r + g.uniform(0.5, 9, (9, 2))], 1)
            rois[-1, 1:] = [14.0, 3.0, 30.0, 9.5]  # reaches past the border
            arrays = {"feat": g.standard_normal((2, 12, 16, 16)), "rois": rois,
                      "gpool": g.standard_normal((9, 12, 3, 4)), "gps": g.standard_normal((9, 3, 2, 2)),
                      "masks": g.uniform(size=(5, 11, 13)) > 0.8}
            arrays["masks"][2, 4, 6] = True
            for name, cfg in DEFORM.items():
                arrays.update({f"{name}.{k}": v for k, v in deform_inputs(g, *cfg).items()})
            return arrays
        a = inputs(make)
        rois = torch.from_numpy(a["rois"])
        for scale in (0.5, 1.0):
            x = torch.from_numpy(a["feat"]).requires_grad_()
            y = ops.roi_pool(x, rois, (3, 4), scale) if OURS else ref_roi_pool(x, rois, scale, 3, 4)
            (y * torch.from_numpy(a["gpool"])).sum().backward()
            results[f"roi_pool_{scale}"], results[f"roi_pool_grad_{scale}"] = y.detach().numpy(), x.grad.numpy()
            x = torch.from_numpy(a["feat"]).requires_grad_()
            if OURS:
                y = ops.ps_roi_pool(x, rois, 2, scale)
                (y * torch.from_numpy(a["gps"])).sum().backward()
                y, gx = y.detach().numpy(), x.grad.numpy()
            else:
                y, gx = ref_ps_roi_pool(x.detach(), rois, scale, 2, 2, a["gps"])
            results[f"ps_roi_pool_{scale}"], results[f"ps_roi_pool_grad_{scale}"] = y, gx
            for ratio in (-1, 2):
                x = torch.from_numpy(a["feat"]).requires_grad_()
                y = (ops.ps_roi_align(x, rois, 2, scale, ratio) if OURS
                     else ref_align(x, rois, scale, 2, 2, ratio, True, True))
                (y * torch.from_numpy(a["gps"])).sum().backward()
                results[f"ps_roi_align_{scale}_{ratio}"] = y.detach().numpy()
                results[f"ps_roi_align_grad_{scale}_{ratio}"] = x.grad.numpy()
            # roi_align past the border (the "ops" case compares it with _roi_align inside the image)
            x = torch.from_numpy(a["feat"][:, :3]).requires_grad_()
            y = (ops.roi_align(x, rois, (3, 4), scale, 2, scale == 1.0) if OURS
                 else ref_align(x, rois, scale, 3, 4, 2, scale == 1.0, False))
            (y * torch.from_numpy(a["gpool"][:, :3])).sum().backward()
            results[f"roi_align_{scale}"], results[f"roi_align_grad_{scale}"] = y.detach().numpy(), x.grad.numpy()
        for name, (B, C, O, groups, og, H, W, k, stride, pad, dil) in DEFORM.items():
            for use_mask in (False, True):
                t = {n: torch.from_numpy(a[f"{name}.{n}"]).requires_grad_() for n in ("x", "w", "b", "off", "mask")}
                m = t["mask"] if use_mask else None
                if OURS:
                    y = ops.deform_conv2d(t["x"], t["off"], t["w"], t["b"], stride, pad, dil, m)
                else:
                    y = ref_deform_conv2d(t["x"], t["off"], t["w"], t["b"], stride, pad, dil, m)
                (y * torch.from_numpy(a[f"{name}.gout"])).sum().backward()
                key = f"deform_{name}_{use_mask}"
                results[key] = y.detach().numpy()
                for n in ("x", "w", "b", "off") + (("mask",) if use_mask else ()):
                    results[f"{key}_grad_{n}"] = t[n].grad.numpy()
        results["masks_to_boxes"] = ops.masks_to_boxes(torch.from_numpy(a["masks"])).numpy()
    elif CASE == "gradcheck":  # ours only: torch.autograd.gradcheck of each operator in float64
        import_torchvision()
        from torchvision import ops
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2, 8, 10, 10, dtype=torch.float64, generator=g, requires_grad=True)
        # rois inside the image: there ps_roi_pool's backward is its forward's adjoint (see ps_pool_bins)
        rois = torch.tensor([[0, 1.2, 0.7, 6.3, 7.9], [1, 2.4, 3.1, 8.2, 8.6], [0, 0.3, 4.2, 3.9, 8.4]],
                            dtype=torch.float64)
        checks = {
            "roi_align": lambda x: ops.roi_align(x, rois, (3, 2), 0.9, 2, True),
            "roi_pool": lambda x: ops.roi_pool(x, rois, (3, 2), 0.9),
            "ps_roi_align": lambda x: ops.ps_roi_align(x, rois, (2, 2), 0.9, -1),
            "ps_roi_pool": lambda x: ops.ps_roi_pool(x, rois, (2, 2), 0.9),
        }
        for name, fn in checks.items():
            results[name] = np.array(torch.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5))
        for name, (B, C, O, groups, og, H, W, k, stride, pad, dil) in DEFORM.items():
            d = deform_inputs(np.random.default_rng(5), B, C, O, groups, og, H, W, k, stride, pad, dil)
            t = [torch.from_numpy(d[n]).requires_grad_() for n in ("x", "off", "w", "b", "mask")]
            results[f"deform_{name}"] = np.array(torch.autograd.gradcheck(
                lambda x, off, w, b, m: ops.deform_conv2d(x, off, w, b, stride, pad, dil, m), t, eps=1e-6, atol=1e-5))
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
        # resized in float32 with Resize's default antialias (the "resize" case resizes uint8)
        pipe = v2.Compose([v2.Pad(2, fill=7), v2.ToDtype(torch.float32, scale=True), v2.Resize(40),
                           v2.CenterCrop((32, 36)), v2.RandomHorizontalFlip(p=1.0),
                           v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        results["out"] = pipe(img).as_subclass(torch.Tensor).numpy()
        results["gray"] = v2.functional.rgb_to_grayscale(torch.from_numpy(a["img"])).numpy()
    elif CASE == "resize":  # v2.Resize with its defaults (bilinear, antialias=True) on uint8 images: exact
        tv = import_torchvision()
        from torchvision.transforms import v2
        a = inputs(lambda: {"img": np.random.default_rng(6).integers(0, 256, (3, 61, 83), dtype=np.uint8),
                            "batch": np.random.default_rng(7).integers(0, 256, (2, 3, 20, 24), dtype=np.uint8),
                            "mask": np.random.default_rng(8).integers(0, 5, (1, 61, 83), dtype=np.uint8)})
        img = tv.tv_tensors.Image(torch.from_numpy(a["img"]))
        for size in (40, (17, 29), 100):
            results[f"resize_{size}"] = v2.Resize(size)(img).as_subclass(torch.Tensor).numpy()
        results["bicubic"] = v2.Resize(33, interpolation=v2.InterpolationMode.BICUBIC)(img).as_subclass(torch.Tensor).numpy()
        results["no_antialias"] = v2.Resize(33, antialias=False)(img).as_subclass(torch.Tensor).numpy()
        results["batch"] = v2.Resize((9, 31))(torch.from_numpy(a["batch"])).numpy()
        mask = tv.tv_tensors.Mask(torch.from_numpy(a["mask"]))
        results["mask"] = v2.Resize(30)(mask).as_subclass(torch.Tensor).numpy()
        pipe = v2.Compose([v2.Resize(48), v2.CenterCrop(40), v2.ToDtype(torch.float32, scale=True),
                           v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        results["pipeline"] = pipe(img).as_subclass(torch.Tensor).numpy()
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
