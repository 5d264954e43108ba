"""torch.cpu (device functions, no-op streams and events, capabilities, the deprecated amp aliases)
against live PyTorch."""
import warnings

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def test_device_functions():
    for name in ("is_available", "is_initialized", "device_count", "current_device"):
        assert getattr(mt.cpu, name)() == getattr(torch.cpu, name)(), name
    assert mt.cpu.synchronize() is None and mt.cpu.synchronize("cpu") is None and mt.cpu.set_device("cpu") is None
    assert sorted(mt.cpu.__all__) == sorted(torch.cpu.__all__)


def test_streams_and_events():
    default = mt.cpu.current_stream()
    assert isinstance(default, mt.cpu.Stream) and mt.cpu.current_stream("cpu") is default
    s = mt.cpu.Stream(priority=0)
    with mt.cpu.stream(s):
        assert mt.cpu.current_stream() is s
        with mt.cpu.StreamContext(None):  # None leaves the current stream
            assert mt.cpu.current_stream() is s
    assert mt.cpu.current_stream() is default
    e = mt.cpu.Event()
    assert e.query() is True and e.record() is None and e.synchronize() is None and e.wait() is None
    assert s.wait_stream(default) is None and s.record_event() is None and s.wait_event(e) is None


def test_capabilities():
    """The same instruction-set flags, core counts and cache sizes as PyTorch's cpuinfo reads (the CPU's
    display name is normalised differently there, so it is only checked to be a string)."""
    ours, theirs = dict(mt.cpu.get_capabilities()), dict(torch.cpu.get_capabilities())
    assert set(ours) == set(theirs)
    assert isinstance(ours.pop("cpu_name"), str)
    theirs.pop("cpu_name")
    assert ours == theirs
    with pytest.raises(TypeError):
        mt.cpu.get_capabilities()["avx2"] = False  # read-only, as PyTorch's MappingProxyType


def test_amp_aliases_warn_and_work():
    msgs = []
    for L in (mt, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.cpu.amp.autocast():
                y = L.mm(L.ones(2, 2), L.ones(2, 2))
            scaler = L.cpu.amp.GradScaler(init_scale=4.0, enabled=False)  # an enabled CPU scaler: not yet here
        msgs.append(([(x.category.__name__, str(x.message)) for x in w], str(y.dtype), scaler.get_scale()))
    assert msgs[0] == msgs[1]
    assert issubclass(mt.cpu.amp.autocast, mt.amp.autocast)


def _outcome(fn):
    try:
        return repr(fn())
    except Exception as e:  # the same exception type and text as PyTorch
        return f"{type(e).__name__}: {e}"


def test_generic_stream_and_event():
    """torch.Stream/torch.Event (device-generic): made on cpu and meta, queried, waited on; recording an
    event raises as on PyTorch's CPU backend; accelerator devices raise PyTorch's texts."""
    def cases(lib):
        s, e = lib.Stream(), lib.Event()
        return [lambda: (s, s.device, s.device_type, s.device_index, s.stream_id, e, e.device, e.event_id),
                lambda: (s.query(), s.synchronize(), s.wait_event(e), s.is_capturing(), e.query(), e.synchronize(), e.wait()),
                lambda: (lib.Stream("cpu:0"), lib.Stream(device="meta", priority=-1).device_type, s == lib.Stream(),
                         s == lib.Stream("meta"), lib.Event(enable_timing=True)),
                lambda: s.record_event(), lambda: s.wait_stream(s), lambda: e.record(), lambda: lib.Event("meta").record(),
                lambda: e.elapsed_time(e), lambda: lib.Event(enable_timing=True).elapsed_time(lib.Event(enable_timing=True)),
                lambda: s.native_handle, lambda: lib.Stream("cuda"), lambda: lib.Event("mps"), lambda: lib.Stream(1),
                lambda: lib.Stream(device=1.5)]
    assert [_outcome(f) for f in cases(mt)] == [_outcome(f) for f in cases(torch)]
