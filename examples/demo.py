"""A short tour of mindtorch_v2: tensors, views, broadcasting, promotion, bfloat16."""
import time

import mindtorch_v2 as torch

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("x =", x.tolist())
print("x.t() is a view:", x.t().stride(), "shares storage:", x.t().data_ptr() == x.data_ptr())
print("reshape of a transposed tensor copies correctly:", x.t().reshape(12).tolist())
print("broadcast add:", (x + torch.tensor([10, 20, 30, 40])).tolist())
print("int tensor / 2 ->", (torch.arange(4) / 2).dtype, "; int tensor + 1 ->", (torch.arange(4) + 1).dtype)
b = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
print("bfloat16 arithmetic (rounded to nearest even):", (b / 3).tolist())
print("masked_fill:", x.masked_fill(x > 5, -1.0).tolist())
print("advanced indexing:", x[[0, 2], 1:3].tolist())

n = 10000
a = torch.ones(16)
t0 = time.perf_counter()
for _ in range(n):
    a + a
print(f"tiny add: {(time.perf_counter() - t0) / n * 1e6:.2f} us per op")
