"""Embedding and EmbeddingBag (PyTorch's torch/nn/modules/sparse.py)."""
from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`."""

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = F._padding_idx(padding_idx, num_embeddings, "Padding_idx must be within num_embeddings")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_creation.empty((num_embeddings, embedding_dim), **factory_kwargs),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (F.embedding_bag)."""

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = F._padding_idx(padding_idx, num_embeddings, "padding_idx must be within num_embeddings")
        if _weight is None:
            self.weight = Parameter(_creation.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{k: repr(v) if k == "mode" else v for k, v in self.__dict__.items()})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
