"""torch.nn.common_types: the type aliases nn's signatures use (an int or a tuple of ints, ...)."""
from typing import Tuple, TypeVar, Union

from .._tensor import Tensor

T = TypeVar("T")
# a scalar or a tuple of n of them (any length for _any_)
_scalar_or_tuple_any_t = Union[T, Tuple[T, ...]]
_scalar_or_tuple_1_t, _scalar_or_tuple_2_t, _scalar_or_tuple_3_t, _scalar_or_tuple_4_t, _scalar_or_tuple_5_t, \
    _scalar_or_tuple_6_t = (Union[T, Tuple[(T,) * n]] for n in range(1, 7))

_size_any_t = _scalar_or_tuple_any_t[int]
_size_1_t, _size_2_t, _size_3_t, _size_4_t, _size_5_t, _size_6_t = (
    a[int] for a in (_scalar_or_tuple_1_t, _scalar_or_tuple_2_t, _scalar_or_tuple_3_t, _scalar_or_tuple_4_t,
                     _scalar_or_tuple_5_t, _scalar_or_tuple_6_t))
_size_any_opt_t = _scalar_or_tuple_any_t[Union[int, None]]
_size_2_opt_t = _scalar_or_tuple_2_t[Union[int, None]]
_size_3_opt_t = _scalar_or_tuple_3_t[Union[int, None]]

_ratio_2_t = _scalar_or_tuple_2_t[float]
_ratio_3_t = _scalar_or_tuple_3_t[float]
_ratio_any_t = _scalar_or_tuple_any_t[float]

_tensor_list_t = _scalar_or_tuple_any_t[Tensor]
_maybe_indices_t = _scalar_or_tuple_2_t[Tensor]
