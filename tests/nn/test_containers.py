"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict against live PyTorch."""
from collections import OrderedDict

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def same(fn):
    a, b = fn(mt), fn(torch)
    assert a == b, (a, b)


def raises_same(fn):
    out = []
    for lib in (mt, torch):
        with pytest.raises(Exception) as ei:
            fn(lib)
        out.append(ei.value)
    assert type(out[0]).__name__ == type(out[1]).__name__ and str(out[0]).replace("mindtorch_v2", "torch") == str(out[1]), out


def seq(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(2, 3), nn.Identity(), nn.Linear(3, 1), nn.Flatten())


def test_sequential():
    same(lambda lib: repr(seq(lib)))
    same(lambda lib: repr(seq(lib)[1:3]))
    same(lambda lib: type(seq(lib)[-1]).__name__)
    same(lambda lib: repr(lib.nn.Sequential(OrderedDict(a=lib.nn.Identity(), b=lib.nn.Flatten()))))

    def edits(lib):
        s = seq(lib)
        r = [len(s)]
        del s[1]
        r.append(list(s._modules))
        s.insert(0, lib.nn.Identity())
        s.append(lib.nn.Identity())
        s.extend([lib.nn.Flatten()])
        r.append(repr(s))
        r.append(type(s.pop(1)).__name__)
        s[0] = lib.nn.Linear(5, 5)
        r.append(repr(s))
        r.append(repr(s + seq(lib)))
        s += seq(lib)
        r.append(len(s))
        r.append(repr(lib.nn.Sequential(lib.nn.Identity()) * 3))
        t = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Flatten())
        t *= 2
        r.append(repr(t))
        del t[0:2]
        r.append(list(t._modules))
        r.append([d for d in dir(t) if d.isdigit()])
        return r
    same(edits)
    raises_same(lambda lib: seq(lib)[7])
    raises_same(lambda lib: seq(lib) + 3)
    raises_same(lambda lib: seq(lib) * 0)
    raises_same(lambda lib: seq(lib) * 1.5)
    raises_same(lambda lib: seq(lib).insert(9, lib.nn.Identity()))

    def fwd(lib):
        lib.manual_seed(1)
        return seq(lib)(lib.ones(4, 2)).tolist()
    a, b = fwd(mt), fwd(torch)
    assert sum(a, []) == pytest.approx(sum(b, []), rel=1e-6)


def test_module_list():
    def run(lib):
        nn = lib.nn
        ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Identity(), nn.Identity(), nn.Identity()])
        r = [repr(ml), len(ml), type(ml[-1]).__name__, repr(ml[1:3])]
        ml.append(nn.Flatten())
        ml.insert(1, nn.Identity())
        ml.extend([nn.Identity()])
        ml += [nn.Identity()]
        r.append(repr(ml))
        del ml[0]
        del ml[1:3]
        r.append(list(ml._modules))
        r.append(type(ml.pop(0)).__name__)
        ml[0] = nn.Linear(1, 1)
        r.append(repr(ml + nn.ModuleList([nn.Identity()])))
        r.append(repr(nn.ModuleList()))
        r.append([k for k, _ in nn.ModuleList([nn.Linear(1, 1)] * 2).named_parameters()])
        return r
    same(run)
    raises_same(lambda lib: lib.nn.ModuleList([lib.nn.Identity()])[3])
    raises_same(lambda lib: lib.nn.ModuleList().extend(3))
    raises_same(lambda lib: lib.nn.ModuleList([3]))


def test_module_dict():
    def run(lib):
        nn = lib.nn
        md = nn.ModuleDict({"b": nn.Identity(), "a": nn.Linear(1, 1)})
        r = [repr(md), list(md), list(md.keys()), "a" in md, len(md)]
        md["c"] = nn.Flatten()
        md.update([("d", nn.Identity())])
        md.update(nn.ModuleDict({"e": nn.Identity()}))
        r.append(list(md.keys()))
        r.append(type(md.pop("a")).__name__)
        del md["b"]
        r.append([type(v).__name__ for v in md.values()])
        r.append([k for k, _ in md.items()])
        md.clear()
        r.append(len(md))
        return r
    same(run)
    raises_same(lambda lib: lib.nn.ModuleDict().update(3))
    raises_same(lambda lib: lib.nn.ModuleDict().update([(1, 2, 3)]))
    raises_same(lambda lib: lib.nn.ModuleDict().update([3]))


def test_parameter_list_dict():
    def run(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3, 2)), "x"])
        r = [repr(pl), len(pl), [type(p).__name__ for p in pl], [k for k, _ in pl.named_parameters()]]
        pl.append(lib.ones(1, dtype=lib.float64))
        pl.extend([lib.ones(1)])
        pl[0] = lib.zeros(4)
        r += [repr(pl), repr(pl[1:3]), pl[0].tolist()]
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1)), "s": 3})
        r += [repr(pd), list(pd), list(pd.keys()), "a" in pd, pd.get("zz", 5)]
        pd["c"] = lib.ones(3)
        r += [type(pd["c"]).__name__, [k for k, _ in pd.named_parameters()], pd.pop("c").tolist()]
        pd.setdefault("d", lib.ones(1))
        r.append(pd.popitem()[0])
        r.append(list((pd | nn.ParameterDict({"z": lib.ones(1)})).keys()))
        r.append(list(pd.copy().keys()))
        r.append(list(reversed(pd)))
        pd.update(OrderedDict(y=lib.ones(1)))
        r.append(list(pd.keys()))
        pd.clear()
        r.append(len(pd))
        return r
    same(run)
    raises_same(lambda lib: lib.nn.ParameterList()(1))
    raises_same(lambda lib: lib.nn.ParameterDict()(1))
    raises_same(lambda lib: lib.nn.ParameterDict()[1])
    raises_same(lambda lib: lib.nn.ParameterList().extend(lib.ones(2)))
    raises_same(lambda lib: lib.nn.ParameterList()[0])
