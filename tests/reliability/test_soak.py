"""Leaks: many tensors and autograd graphs created and freed leave the live-tensor
count unchanged and resident memory flat."""
import gc
import os

import pytest

import mindtorch_v2 as mt
from mindtorch_v2._C import lib

UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
RSS_BOUND = 16 << 20  # bytes of growth allowed after warm-up (allocator and interpreter noise)


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_million_tensors_created_and_freed():
    x = mt.ones(4)
    for _ in range(1000):  # warm-up: caches, allocator arenas
        (x + 1).view(2, 2)[0]
    gc.collect()  # earlier tests' garbage must not be counted as freed here
    live, before = lib.mt_live_tensors(), rss()
    for _ in range(250_000):  # four tensors per round: 10^6 in all
        y = (x + 1).view(2, 2)[0]
        z = y.t() if y.dim() == 2 else y.unsqueeze(0)
        del y, z
    gc.collect()
    assert lib.mt_live_tensors() == live
    if not UNDER_ASAN:  # ASan's quarantine keeps freed memory resident on purpose
        assert rss() - before < RSS_BOUND, (rss() - before) >> 20


def test_ten_thousand_forward_backward_graphs():
    w = mt.ones(16, 16, requires_grad=True)
    b = mt.zeros(16, requires_grad=True)
    x = mt.linspace(-1, 1, 64).reshape(4, 16)

    def step():
        y = ((x @ w + b).tanh() * 0.5).sum()
        y.backward()

    for _ in range(100):
        step()
    gc.collect()
    live, before = lib.mt_live_tensors(), rss()
    for _ in range(10_000):
        step()
    gc.collect()
    assert lib.mt_live_tensors() == live
    if not UNDER_ASAN:
        assert rss() - before < RSS_BOUND, (rss() - before) >> 20


def test_graph_kept_by_a_cycle_is_collected():
    gc.collect()  # earlier tests' garbage must not be counted as collected here
    live = lib.mt_live_tensors()
    for _ in range(100):
        x = mt.ones(3, requires_grad=True)
        y = x * 2

        class Holder:
            pass

        h = Holder()
        h.self, h.y = h, y  # a Python reference cycle holding graph tensors
        del h, x, y
    gc.collect()
    assert lib.mt_live_tensors() == live


def test_in_place_write_into_a_saved_input_forms_no_cycle():
    """t1.copy_(t2) where t2's graph saved t1: t1's new grad_fn leads to a node that saved t1.
    A saved input is kept as an alias plus the history it had when saved, so nothing cycles
    (PyTorch 2.13 keeps this graph alive forever; found by the C fuzzer)."""
    live = lib.mt_live_tensors()
    for _ in range(100):
        x = mt.ones(3, requires_grad=True)
        t1 = mt.addcdiv(x, x, x)
        t2 = mt.addcdiv(t1, t1, t1)
        t1.copy_(t2)
        del x, t1, t2
    assert lib.mt_live_tensors() == live


def test_out_of_memory_is_an_error_and_the_process_keeps_working():
    import pytest
    with pytest.raises(RuntimeError) as got:
        mt.empty(1 << 40)
    # PyTorch's text on Linux (c10's alloc_cpu), as live PyTorch gives it
    assert str(got.value) == ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                              "you tried to allocate 4398046511104 bytes. Error code 12 (Cannot allocate memory)")
    assert type(got.value) is RuntimeError
    with pytest.raises(RuntimeError, match="overflow"):
        mt.empty(1 << 62, 4)
    assert mt.ones(3).sum().item() == 3.0


def test_base_copied_from_its_leaf_view_is_freed():
    gc.collect()
    live = lib.mt_live_tensors()
    for _ in range(10):
        b = mt.zeros(4)
        v = b.view(-1)
        v.requires_grad_()
        b.copy_(v)
        del b, v
    gc.collect()
    assert lib.mt_live_tensors() == live


def test_leaf_view_saved_for_backward_then_its_base_written_is_freed():
    # dot saves its leaf-view inputs; writing the base through another view gives the base a
    # history back to that node: the saved slot holds the view weakly (fuzzer, session 11)
    gc.collect()
    live = lib.mt_live_tensors()
    for _ in range(10):
        base = mt.zeros(()).half()
        v = base.expand(4)
        v.requires_grad_()
        d = mt.dot(v, v)
        base.expand(4).div_(d, rounding_mode="trunc")
        del base, v, d
    gc.collect()
    assert lib.mt_live_tensors() == live


def test_saved_leaf_view_still_gets_its_gradient():
    base = mt.zeros(3)
    v = base[:2]
    v.requires_grad_()
    y = (v * v).sum()
    y.backward()
    assert v.grad.tolist() == [0.0, 0.0]
    v2 = mt.ones(3)[:2]
    v2.requires_grad_()
    g, = mt.autograd.grad((v2 * v2 * v2).sum(), v2, create_graph=True)
    g.sum().backward()  # double backward through the saved leaf view: d/dv (3 v^2) = 6 v
    assert v2.grad.tolist() == [6.0, 6.0]


def test_saved_leaf_written_after_requires_grad_false_is_freed():
    # logsumexp saves its leaf input; the leaf, no longer requiring grad, is then written from the
    # result: its accumulator stops holding it once it has a history (fuzzer, session 11)
    gc.collect()
    live = lib.mt_live_tensors()
    for _ in range(10):
        x = mt.tensor(1.0, dtype=mt.float64, requires_grad=True)
        r = mt.logsumexp(x, 0, keepdim=True)
        x.requires_grad_(False)
        x.copy_(r)
        del x, r
    gc.collect()
    assert lib.mt_live_tensors() == live


def test_out_of_memory_error_class_as_pytorch():
    """torch.OutOfMemoryError (a device's allocation failure; torch.cuda's is the same class)"""
    import pytest
    torch = pytest.importorskip("torch")
    for lib in (mt, torch):
        assert lib.cuda.OutOfMemoryError is lib.OutOfMemoryError
    assert [c.__name__ for c in mt.OutOfMemoryError.__mro__] == [c.__name__ for c in torch.OutOfMemoryError.__mro__]
    assert str(mt.OutOfMemoryError) == str(torch.OutOfMemoryError)
