"""torchvision's compiled operators, registered under torch.ops.torchvision.

torchvision loads its C++ extension with torch.ops.load_library, whose static TORCH_LIBRARY blocks
define the `torchvision::` schemas and their CPU kernels. That file links libtorch and cannot load
here, so load_library runs this module instead (_ops.NATIVE_EXTENSIONS): the same schemas, with
kernels over the C core (csrc/kernels/cpu/vision.c). torchvision's own Python then registers the
autograd (over the `_*_backward` ops), the fake kernels and autocast on top, unmodified.
"""
from . import library as _library
from ._core import ffi, lib, raise_status
from ._dispatch import call
from ._tensor import wrap

_NULL = ffi.NULL
_LIB = _library.Library("torchvision", "DEF")

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "SymInt batch_size, SymInt channels, SymInt height, SymInt width, int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)",
    "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, SymInt channels, "
    "SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)",
    "_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) "
    "-> Tensor",
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, "
    "SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, "
    "SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, "
    "SymInt groups, SymInt offset_groups, bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qroi_align(Tensor input, Tensor rois, float input_scale, int input_zero_point, float rois_scale, "
    "int rois_zero_point, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, "
    "bool aligned) -> Tensor",
    "box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor",
    "_cuda_version() -> int",
)
for _s in _SCHEMAS:
    _LIB.define(_s)


def _kernel(name):
    def register(fn):
        _LIB.impl(name, fn, "CPU")
        return fn
    return register


def _missing(name, why):
    def kernel(*args, **kwargs):
        raise NotImplementedError(f"torchvision::{name} is not implemented in mindtorch_v2 ({why})")
    _LIB.impl(name, kernel, "CPU")


_missing("qnms", "quantized tensors are out of scope")
_missing("qroi_align", "quantized tensors are out of scope")
_missing("box_iou_rotated", "not written yet")
# torchvision's CUDA check calls this with no tensor argument: a CPU build answers -1
_LIB.impl("_cuda_version", lambda: -1, "CompositeExplicitAutograd")


@_kernel("nms")
def nms(dets, scores, iou_threshold):
    return call(lib.mt_vision_nms, dets._h, scores._h, float(iou_threshold))


def _roi(kind, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio=0, aligned=False):
    out, idx = ffi.new("mt_tensor **"), ffi.new("mt_tensor **")
    st = lib.mt_vision_roi(kind, input._h, rois._h, float(spatial_scale), int(pooled_height), int(pooled_width),
                           int(sampling_ratio), 1 if aligned else 0, out, _NULL if kind == lib.MT_ROI_ALIGN else idx)
    if st:
        raise_status(st)
    return wrap(out[0]) if kind == lib.MT_ROI_ALIGN else (wrap(out[0]), wrap(idx[0]))


def _roi_backward(kind, grad, rois, index, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                  batch_size, channels, height, width):
    size = ffi.new("int64_t[4]", [int(batch_size), int(channels), int(height), int(width)])
    return call(lib.mt_vision_roi_backward, kind, grad._h, rois._h, _NULL if index is None else index._h,
                float(spatial_scale), int(pooled_height), int(pooled_width), int(sampling_ratio),
                1 if aligned else 0, size)


@_kernel("roi_align")
def roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    return _roi(lib.MT_ROI_ALIGN, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


@_kernel("_roi_align_backward")
def _roi_align_backward(grad, rois, spatial_scale, pooled_height, pooled_width, batch_size, channels, height, width,
                        sampling_ratio, aligned):
    return _roi_backward(lib.MT_ROI_ALIGN, grad, rois, None, spatial_scale, pooled_height, pooled_width,
                         sampling_ratio, aligned, batch_size, channels, height, width)


@_kernel("roi_pool")
def roi_pool(input, rois, spatial_scale, pooled_height, pooled_width):
    return _roi(lib.MT_ROI_POOL, input, rois, spatial_scale, pooled_height, pooled_width)


@_kernel("_roi_pool_backward")
def _roi_pool_backward(grad, rois, argmax, spatial_scale, pooled_height, pooled_width, batch_size, channels, height,
                       width):
    return _roi_backward(lib.MT_ROI_POOL, grad, rois, argmax, spatial_scale, pooled_height, pooled_width, 0, False,
                         batch_size, channels, height, width)


@_kernel("ps_roi_align")
def ps_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    return _roi(lib.MT_PS_ROI_ALIGN, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio)


@_kernel("_ps_roi_align_backward")
def _ps_roi_align_backward(grad, rois, channel_mapping, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                           batch_size, channels, height, width):
    return _roi_backward(lib.MT_PS_ROI_ALIGN, grad, rois, channel_mapping, spatial_scale, pooled_height,
                         pooled_width, sampling_ratio, False, batch_size, channels, height, width)


@_kernel("ps_roi_pool")
def ps_roi_pool(input, rois, spatial_scale, pooled_height, pooled_width):
    return _roi(lib.MT_PS_ROI_POOL, input, rois, spatial_scale, pooled_height, pooled_width)


@_kernel("_ps_roi_pool_backward")
def _ps_roi_pool_backward(grad, rois, channel_mapping, spatial_scale, pooled_height, pooled_width, batch_size,
                          channels, height, width):
    return _roi_backward(lib.MT_PS_ROI_POOL, grad, rois, channel_mapping, spatial_scale, pooled_height,
                         pooled_width, 0, False, batch_size, channels, height, width)


# deform_conv2d: the per-point bilinear sampling (im2col) and its adjoint (col2im) are C loops; the
# products with the weight are grouped matmuls, as torchvision's addmm_ over its columns.

def _geometry(weight, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w):
    return ffi.new("int64_t[8]", [int(weight.shape[2]), int(weight.shape[3]), int(stride_h), int(stride_w),
                                  int(pad_h), int(pad_w), int(dilation_h), int(dilation_w)])


def _deform_check(input, weight, groups):
    if weight.dim() != 4 or input.dim() != 4:
        raise RuntimeError("deform_conv2d: input and weight must be 4-D")
    if groups <= 0 or weight.shape[1] * groups != input.shape[1] or weight.shape[0] % groups:
        raise RuntimeError(f"deform_conv2d: weight of shape {list(weight.shape)} does not fit input channels "
                           f"{input.shape[1]} in {groups} groups")


@_kernel("deform_conv2d")
def deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                  groups, offset_groups, use_mask):
    _deform_check(input, weight, groups)
    geom = _geometry(weight, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    cols = call(lib.mt_vision_deform_im2col, input._h, offset._h, mask._h if use_mask else _NULL, geom,
                int(offset_groups))
    n, o = input.shape[0], weight.shape[0]
    oh, ow = offset.shape[2], offset.shape[3]
    out = weight.reshape(groups, o // groups, -1).matmul(cols.view(groups, cols.shape[0] // groups, -1))
    out = out.reshape(o, n, oh, ow).transpose(0, 1)
    return (out + bias.view(1, o, 1, 1)).contiguous()


@_kernel("_deform_conv2d_backward")
def _deform_conv2d_backward(grad, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h,
                            dilation_w, groups, offset_groups, use_mask):
    _deform_check(input, weight, groups)
    geom = _geometry(weight, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    n, o = input.shape[0], weight.shape[0]
    # grad [N, O, oh, ow] -> [groups, O / groups, N * oh * ow], the columns' layout
    g = grad.transpose(0, 1).reshape(groups, o // groups, -1)
    w = weight.reshape(groups, o // groups, -1)
    grad_cols = w.transpose(1, 2).matmul(g).reshape(-1, g.shape[2])
    m = mask._h if use_mask else _NULL
    outs = ffi.new("mt_tensor *[3]")
    st = lib.mt_vision_deform_col2im(grad_cols._h, input._h, offset._h, m, geom, int(offset_groups), outs, outs + 1,
                                     outs + 2)
    if st:
        raise_status(st)
    grad_input, grad_offset = wrap(outs[0]), wrap(outs[1])
    grad_mask = wrap(outs[2]) if use_mask else mask.new_zeros(mask.shape)
    cols = call(lib.mt_vision_deform_im2col, input._h, offset._h, m, geom, int(offset_groups))
    grad_weight = g.matmul(cols.view(groups, cols.shape[0] // groups, -1).transpose(1, 2)).reshape(weight.shape)
    grad_bias = grad.sum((0, 2, 3)) if n else bias.new_zeros(bias.shape)
    return grad_input, grad_weight, grad_offset, grad_mask, grad_bias
