"""PackedSequence and the padding/packing helpers (PyTorch's torch/nn/utils/rnn.py).

Packing and padding are each one gather/scatter over the (T*B) time-major rows: sorted lengths make the
rows with `t < length[b]`, read in row-major order, exactly the packed order. No Python loop over rows.
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import _creation, _dtype
from ..._shape_ops import cat, sort
from ..._tensor import Tensor
from ...utils._typing_utils import copy_method_params  # noqa: F401  (PyTorch's module binds it)

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and list of batch_sizes of a packed sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, bind(self.sorted_indices, lambda t: t.pin_memory()),
                          bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731  (indices follow the data's device, keep their dtype)
        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, move), bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = _creation.empty_like(permutation)
    output.scatter_(0, permutation, _creation.arange(0, permutation.numel(), device=permutation.device))
    return output


def _time_mask(lengths, T):
    """(T, B) bool: step t of sequence b exists."""
    return _creation.arange(T).unsqueeze(1) < lengths.unsqueeze(0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a Tensor containing padded sequences of variable length."""
    if not isinstance(lengths, Tensor):
        lengths = _creation.as_tensor(lengths, dtype=_dtype.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=_dtype.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu Long "
                           "tensor")
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if lengths.size(0) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size(0)} "
                           f"(batch_size={B})")
    if int(lengths[B - 1]) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if B > 1 and bool((lengths[1:] > lengths[:-1]).any()):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    max_len = int(lengths[0])
    if max_len > T:
        # PyTorch reads past the end here; we refuse instead
        raise RuntimeError(f"Expected sequence length to be at least {max_len}, but got {T}")
    mask = _time_mask(lengths, max_len)
    data = input[:max_len].reshape((max_len * B,) + tuple(input.shape[2:]))[mask.reshape(-1)]
    return PackedSequence(data, mask.sum(1), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch of variable length sequences (the inverse of pack_padded_sequence)."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data, batch_sizes = sequence.data, sequence.batch_sizes
    B = int(batch_sizes[0])
    # lengths[b] = number of steps whose batch holds b
    lengths = (_creation.arange(B).unsqueeze(0) < batch_sizes.unsqueeze(1)).sum(0)
    mask = _time_mask(lengths, max_seq_length).reshape(-1)
    rows = mask.nonzero().squeeze(1)
    tail = tuple(data.shape[1:])
    padded = _creation.full((max_seq_length * B,) + tail, padding_value, dtype=data.dtype, device=data.device)
    padded = padded.index_copy(0, rows, data).reshape((max_seq_length, B) + tail)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        return padded.index_select(0 if batch_first else 1, sequence.unsorted_indices), \
            lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pads a list of variable length Tensors with padding_value."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    lengths = _creation.tensor([s.size(0) for s in sequences], dtype=_dtype.int64)
    B, L = len(sequences), int(lengths.max())
    tail = tuple(sequences[0].shape[1:])
    steps = _creation.arange(L).unsqueeze(0)
    mask = steps < lengths.unsqueeze(1) if padding_side == "right" else steps >= (L - lengths).unsqueeze(1)
    data = cat([s.reshape((s.size(0),) + tail) for s in sequences], 0)
    out = _creation.full((B * L,) + tail, padding_value, dtype=data.dtype, device=data.device)
    out = out.index_copy(0, mask.reshape(-1).nonzero().squeeze(1), data).reshape((B, L) + tail)
    return out if batch_first else out.transpose(0, 1).contiguous()


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Unpads a padded Tensor into a list of variable length Tensors."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable length Tensors."""
    lengths = _creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Unpacks a PackedSequence into a list of variable length Tensors."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
