"""torch.utils.data DataPipes against live PyTorch: each case builds the same pipeline with both libraries and
compares what it yields, its len() or the error (type and text); shuffles under the same seeds (set_seed, the
global generator, DataLoader's shared seed); the single-iterator rule; pickling; DataLoader over pipes with
and without worker processes; the graph functions and the decorators."""
import functools
import importlib
import pickle
import warnings

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")
LIBS = {"mt": mt, "torch": torch}


class NS:
    """One library's data API: lib, data, iter (datapipes.iter), map (datapipes.map)."""

    def __init__(self, lib):
        self.lib = lib
        self.data = importlib.import_module(lib.__name__ + ".utils.data")
        self.iter = importlib.import_module(lib.__name__ + ".utils.data.datapipes.iter")
        self.map = importlib.import_module(lib.__name__ + ".utils.data.datapipes.map")
        self.graph = importlib.import_module(lib.__name__ + ".utils.data.graph")
        self.settings = importlib.import_module(lib.__name__ + ".utils.data.graph_settings")


def outcome(fn, ns):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", plain(fn(ns))
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)


def plain(x):
    """Tensors to lists and DataChunks to lists, recursively, so both libraries' results compare."""
    if hasattr(x, "tolist") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).replace("mindtorch_v2", "torch"), x.tolist())
    if isinstance(x, (list, tuple)):
        return type(x).__name__ if type(x).__name__ not in ("list", "tuple", "DataChunk") else None, \
            [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def same(fn):
    a, b = outcome(fn, NS(mt)), outcome(fn, NS(torch))
    assert a == b
    return a


# module-level functions: picklable by both libraries
def double(x):
    return x * 2


def is_even(x):
    return x % 2 == 0


def add(a, b):
    return a + b


def mod3(x):
    return x % 3


def bad_filter(x):
    return x


def needs_kw(x, *, y):
    return x


def raise_at_3(x):
    if x == 3:
        raise KeyError("three")
    return x


CHAINS = {
    "map_filter_batch": lambda n: n.iter.IterableWrapper(range(17)).map(double).filter(is_even).batch(4),
    "batch_drop_last": lambda n: n.iter.IterableWrapper(range(10)).batch(3, drop_last=True),
    "unbatch": lambda n: n.iter.IterableWrapper([[[1, 2], [3]], [[4]], []]).unbatch(unbatch_level=2),
    "unbatch_all": lambda n: n.iter.IterableWrapper([[[1, [2]], [3]], 5]).unbatch(unbatch_level=-1),
    "unbatch_too_deep": lambda n: n.iter.IterableWrapper([[1], 2]).unbatch(unbatch_level=2),
    "unbatch_bad_level": lambda n: n.iter.IterableWrapper([[1]]).unbatch(unbatch_level=-2),
    "input_col": lambda n: n.iter.IterableWrapper([(1, 2, 3), (4, 5, 6)]).map(double, input_col=1),
    "input_cols": lambda n: n.iter.IterableWrapper([[1, 2, 3], [4, 5, 6]]).map(add, input_col=[0, 2]),
    "output_col_append": lambda n: n.iter.IterableWrapper([(1, 2), (3, 4)]).map(double, input_col=0, output_col=-1),
    "output_col_list": lambda n: n.iter.IterableWrapper([{"a": 1}, {"a": 2}]).map(double, input_col="a",
                                                                                   output_col=["b"]),
    "output_col_without_input": lambda n: n.iter.IterableWrapper([1]).map(double, output_col=1),
    "output_col_two": lambda n: n.iter.IterableWrapper([1]).map(double, input_col=0, output_col=[1, 2]),
    "input_col_arity": lambda n: n.iter.IterableWrapper([1]).map(add, input_col=0),
    "input_col_arity_many": lambda n: n.iter.IterableWrapper([1]).map(double, input_col=[0, 1]),
    "kw_only": lambda n: n.iter.IterableWrapper([1]).map(needs_kw),
    "not_callable": lambda n: n.iter.IterableWrapper([1]).map(3),
    "filter_input_col": lambda n: n.iter.IterableWrapper([(1, 2), (2, 3)]).filter(is_even, input_col=1),
    "filter_not_bool": lambda n: n.iter.IterableWrapper([1, 2]).filter(bad_filter),
    "collate": lambda n: n.iter.IterableWrapper([[n.lib.tensor([1.0, 2.0]), n.lib.tensor([3.0, 4.0])]]).collate(),
    "collate_batches": lambda n: n.iter.IterableWrapper(range(6)).batch(4).collate(),
    "collate_fn": lambda n: n.iter.IterableWrapper([[1, 2], [3]]).collate(collate_fn=sum),
    "concat": lambda n: n.iter.IterableWrapper(range(3)).concat(n.iter.IterableWrapper("ab")),
    "concat_empty": lambda n: n.iter.Concater(),
    "concat_type": lambda n: n.iter.Concater(n.iter.IterableWrapper([1]), [2]),
    "zip": lambda n: n.iter.IterableWrapper(range(5)).zip(n.iter.IterableWrapper("abc")),
    "zip_type": lambda n: n.iter.Zipper([1]),
    "mux": lambda n: n.iter.IterableWrapper(range(5)).mux(n.iter.IterableWrapper("abc"),
                                                          n.iter.IterableWrapper([10, 11, 12, 13])),
    "groupby": lambda n: n.iter.IterableWrapper(range(12)).groupby(mod3, group_size=3),
    "groupby_keep_key": lambda n: n.iter.IterableWrapper(range(10)).groupby(mod3, keep_key=True, buffer_size=4),
    "groupby_guaranteed": lambda n: n.iter.IterableWrapper(range(10)).groupby(
        mod3, buffer_size=4, group_size=3, guaranteed_group_size=2, drop_remaining=True),
    "groupby_fail": lambda n: n.iter.IterableWrapper(range(10)).groupby(mod3, buffer_size=3, group_size=3),
    "groupby_bad_size": lambda n: n.iter.IterableWrapper(range(3)).groupby(mod3, buffer_size=3, group_size=4),
    "sharding": lambda n: n.iter.IterableWrapper(range(10)).sharding_filter(),
    "sampler": lambda n: n.iter.Sampler(n.iter.IterableWrapper(range(5))),
    "shuffle_off": lambda n: n.iter.IterableWrapper(range(8)).shuffle().set_shuffle(False),
    "shuffle_bad_buffer": lambda n: n.iter.IterableWrapper(range(8)).shuffle(buffer_size=0),
    "batch_bad_size": lambda n: n.iter.IterableWrapper(range(8)).batch(0),
    "iter_error_named": lambda n: n.iter.IterableWrapper(range(5)).map(raise_at_3),
    "map_style": lambda n: n.map.SequenceWrapper(range(7)).map(double).batch(3),
    "map_style_zip_concat": lambda n: n.map.SequenceWrapper("abcd").zip(n.map.SequenceWrapper(range(3))).concat(
        n.map.SequenceWrapper([("z", 9)])),
    "map_style_dict": lambda n: n.map.SequenceWrapper({"a": 1, "b": 2}).map(double),
    "map_style_shuffle_off": lambda n: n.map.SequenceWrapper(range(6)).shuffle().set_shuffle(False),
}


def materialise(dp):
    """(items...) for a pipe: iterated if iterable-style, indexed 0..len-1 if map-style."""
    if hasattr(dp, "__getitem__") and not hasattr(type(dp), "__next__") and hasattr(type(dp), "__len__") \
            and "MapDataPipe" in [c.__name__ for c in type(dp).__mro__]:
        return [dp[i] for i in range(len(dp))]
    return list(dp)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chains_match_torch(name):
    same(lambda n: materialise(CHAINS[name](n)))


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_lengths_match_torch(name):
    same(lambda n: len(CHAINS[name](n)))


def test_len_errors():
    cases = [lambda n: n.iter.IterableWrapper(iter([1, 2])),
             lambda n: n.iter.IterableWrapper(iter([1, 2])).map(double),
             lambda n: n.iter.IterableWrapper(iter([1, 2])).batch(2),
             lambda n: n.iter.IterableWrapper(iter([1, 2])).shuffle(),
             lambda n: n.iter.IterableWrapper(iter([1, 2])).sharding_filter(),
             lambda n: n.iter.IterableWrapper([1]).concat(n.iter.IterableWrapper(iter([1, 2]))),
             lambda n: n.iter.IterableWrapper([1]).zip(n.iter.IterableWrapper(iter([1, 2]))),
             lambda n: n.iter.IterableWrapper([1]).mux(n.iter.IterableWrapper(iter([1, 2]))),
             lambda n: n.iter.IterableWrapper([1]).filter(is_even),
             lambda n: n.iter.IterableWrapper([1]).unbatch(),
             lambda n: n.iter.IterableWrapper([1]).demux(2, mod3)[0],
             lambda n: n.iter.FileLister("."),
             lambda n: n.data.DataLoader(n.iter.IterableWrapper(iter([1, 2]))),
             lambda n: n.data.DataLoader(n.iter.IterableWrapper([1, 2, 3]), batch_size=2)]
    for make in cases:
        kind, text = same(lambda n: len(make(n)))
        assert kind in ("TypeError", "ok"), text


def test_len_sharded_and_forked():
    for k in range(4):
        same(lambda n: [len(d) for d in n.iter.IterableWrapper(range(10)).fork(3)] +
             [len(n.settings.apply_sharding(n.iter.IterableWrapper(range(10)).sharding_filter(), 4, k))])


@pytest.mark.parametrize("seed", [0, 3, 12345])
def test_shuffle_seeds_match_torch(seed):
    def run(n):
        dp = n.iter.IterableWrapper(range(30)).shuffle(buffer_size=7)
        first = list(dp.set_seed(seed))
        n.lib.manual_seed(seed)  # later iterators draw their seed from torch's generator
        again = [list(dp), list(dp)]
        m = n.map.SequenceWrapper(range(12)).shuffle()
        n.lib.manual_seed(seed)
        unbatched = list(n.iter.IterableWrapper([[1, 2], [3, 4], [5, 6]]).shuffle(unbatch_level=1).set_seed(seed))
        return first, again, list(m.set_seed(seed)), list(m), unbatched
    assert same(run)[0] == "ok"


def test_fork_and_demux():
    same(lambda n: [list(d) for d in n.iter.IterableWrapper(range(6)).fork(3, copy="deep")])
    same(lambda n: n.iter.IterableWrapper(range(6)).fork(1).__class__.__name__)

    def interleaved(n):
        a, b = n.iter.IterableWrapper(range(6)).fork(2, buffer_size=2)
        ia, ib = iter(a), iter(b)
        return [next(ia), next(ia), next(ib), next(ia), next(ib), next(ib), list(ia), list(ib)]
    same(interleaved)
    same(lambda n: list(n.iter.IterableWrapper(range(6)).fork(2, buffer_size=2)[0]))  # the overflow
    same(lambda n: n.iter.IterableWrapper(range(6)).fork(0))
    same(lambda n: n.iter.IterableWrapper(range(6)).fork(2, copy="other"))
    same(lambda n: [list(d) for d in n.iter.IterableWrapper(range(10)).demux(3, mod3)])
    same(lambda n: list(n.iter.IterableWrapper(range(10)).demux(2, mod3)[0]))  # 2 is out of range
    same(lambda n: list(n.iter.IterableWrapper(range(10)).demux(3, mod3, buffer_size=2)[2]))


def test_single_iterator_rule():
    def second_iterator(n):
        dp = n.iter.IterableWrapper(range(5)).map(double)
        it1 = iter(dp)
        first = next(it1)
        it2 = iter(dp)
        return first, next(it2), next(it1)
    same(second_iterator)

    def fork_children(n):
        a, b = n.iter.IterableWrapper(range(5)).fork(2)
        ia = iter(a)
        got = [next(ia), next(iter(b))]
        ia2 = iter(a)
        return got + [next(ia2), next(ia)]
    same(fork_children)

    def lazy_generators(n):  # the id is claimed at the first next(), not at iter()
        dp = n.iter.IterableWrapper(range(3))
        it1, it2 = iter(dp), iter(dp)
        return next(it2), next(it1), list(it1), next(it2)
    same(lazy_generators)

    def counts(n):
        dp = n.iter.IterableWrapper(range(5)).shuffle().set_shuffle(False)
        list(dp)
        return dp._number_of_samples_yielded, dp._valid_iterator_id, dp.datapipe._valid_iterator_id
    same(counts)


def test_pickle_round_trip():
    def run(n):
        dp = n.iter.IterableWrapper(range(12)).map(double).shuffle().set_seed(5).batch(3)
        a, b = n.iter.IterableWrapper(range(4)).fork(2)
        m = n.map.SequenceWrapper(range(5)).map(double)
        copies = [pickle.loads(pickle.dumps(x)) for x in (dp, a, m)]
        return list(copies[0]), list(copies[1]), [copies[2][i] for i in range(5)], type(copies[0]).__name__
    same(run)

    def mid_shuffle(n):  # a shuffler pickled mid-iteration keeps its RNG state and buffer
        dp = n.iter.IterableWrapper(range(20)).shuffle(buffer_size=5).set_seed(2)
        it = iter(dp)
        head = [next(it) for _ in range(4)]
        clone = pickle.loads(pickle.dumps(dp))
        return head, clone._buffer, clone._rng.getstate() == dp._rng.getstate()
    same(mid_shuffle)


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_over_datapipes(workers):
    def run(n):
        n.lib.manual_seed(1)
        dp = n.iter.IterableWrapper(range(16)).shuffle().sharding_filter().map(lambda x: x + 1)
        dl = n.data.DataLoader(dp, batch_size=3, num_workers=workers, shuffle=True, timeout=60 if workers else 0)
        off = n.data.DataLoader(n.iter.IterableWrapper(range(7)).shuffle(), batch_size=2, shuffle=False)
        g = n.lib.Generator()
        g.manual_seed(4)
        seeded = n.data.DataLoader(n.iter.IterableWrapper(range(9)).shuffle(), batch_size=None, generator=g)
        ms = n.data.DataLoader(n.map.SequenceWrapper(range(6)).map(double), batch_size=4, num_workers=workers,
                               timeout=60 if workers else 0)
        return [list(dl), list(dl), list(off), list(seeded), list(ms), len(off), type(dl.dataset).__name__]
    kind, _ = same(run)
    assert kind == "ok"


def test_dataloader_shuffle_without_shuffler():
    def run(n):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dl = n.data.DataLoader(n.iter.IterableWrapper(range(5)), shuffle=True, batch_size=None)
        return [str(x.message) for x in w], list(dl)
    same(run)


def names(graph):
    return sorted((type(dp).__name__, names(sub)) for dp, sub in graph.values())


def test_graph():
    def build(n):
        src = n.iter.IterableWrapper(range(4))
        a, b = src.map(double).fork(2)
        return a.zip(b.filter(is_even)).shuffle()
    same(lambda n: names(n.graph.traverse_dps(build(n))))
    same(lambda n: sorted(type(d).__name__ for d in n.settings.get_all_graph_pipes(n.graph.traverse_dps(build(n)))))
    same(lambda n: names(n.graph.traverse_dps(n.iter.IterableWrapper([1]).map(lambda x: x))))  # through dill
    same(lambda n: n.graph.traverse_dps([1]))
    same(lambda n: list(n.settings.apply_sharding(n.iter.IterableWrapper(range(9)).sharding_filter().map(double),
                                                  3, 1)))
    same(lambda n: n.settings.apply_sharding(n.iter.IterableWrapper(range(9)).sharding_filter().sharding_filter(),
                                             3, 1))
    same(lambda n: list(n.settings.apply_shuffle_settings(n.iter.IterableWrapper(range(5)).shuffle(), False)))

    def groups(n):
        sf = n.iter.IterableWrapper(range(20)).sharding_filter()
        prio = importlib.import_module(n.lib.__name__ + ".utils.data.datapipes.iter.sharding").SHARDING_PRIORITIES
        sf.apply_sharding(2, 1, prio.DISTRIBUTED)
        sf.apply_sharding(3, 2, prio.MULTIPROCESSING)
        out = [list(sf), len(sf)]
        try:
            sf.apply_sharding(2, 0)
        except RuntimeError as e:
            out.append(str(e))
        return out
    same(groups)
    same(lambda n: n.iter.IterableWrapper(range(3)).sharding_filter().apply_sharding(2, 2))

    def seeds(n):
        g = n.lib.Generator()
        g.manual_seed(9)
        dp = n.iter.IterableWrapper(range(10)).shuffle().zip(n.iter.IterableWrapper(range(10)).shuffle())
        return list(n.settings.apply_random_seed(dp, g))
    same(seeds)


def test_functional_registration_and_decorators():
    for n in (NS(mt), NS(torch)):
        assert {"map", "filter", "batch", "shuffle", "fork", "demux", "zip", "concat", "groupby", "unbatch",
                "collate", "mux", "sharding_filter", "list_files", "open_files", "read_from_stream"} <= \
            set(n.data.IterDataPipe.functions)
        assert set(n.data.MapDataPipe.functions) == {"batch", "concat", "map", "shuffle", "zip"}

    def custom(n):
        name = "_mt_test_plus_" + n.lib.__name__

        @n.data.functional_datapipe(name)
        class Plus(n.data.IterDataPipe):
            def __init__(self, dp, k):
                self.dp, self.k = dp, k

            def __iter__(self):
                for x in self.dp:
                    yield x + self.k
        dp = getattr(n.iter.IterableWrapper(range(3)), name)(10)
        out = [list(dp), name in dir(dp), repr(dp), str(dp)]
        try:
            n.data.functional_datapipe(name)(Plus)
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e).replace(name, "NAME")))
        del n.data.IterDataPipe.functions[name]
        return out
    a, b = outcome(custom, NS(mt)), outcome(custom, NS(torch))
    assert a == b
    same(lambda n: n.iter.IterableWrapper([1]).no_such_method)

    def determinism(n):
        @n.data.non_deterministic
        class Rand(n.data.IterDataPipe):
            def __iter__(self):
                yield 1

        def predicate(flag):
            return flag

        @n.data.non_deterministic(predicate)
        class Maybe(n.data.IterDataPipe):
            def __init__(self, flag):
                self.flag = flag

            def __iter__(self):
                yield 2
        out = [list(Rand()), list(Maybe(True))]
        for make in (Rand, lambda: Maybe(True), lambda: Maybe(False), lambda: Maybe(3)):
            try:
                with n.data.guaranteed_datapipes_determinism():
                    out.append(list(make()))
            except TypeError as e:
                out.append(str(e))
        for bad in (int, 3):
            try:
                n.data.non_deterministic(bad)
            except TypeError as e:
                out.append(str(e))
        return out
    same(determinism)

    def validation(n):
        class P(n.data.IterDataPipe):
            def __init__(self):
                self.x = 1

            @n.data.runtime_validation
            def __iter__(self):
                yield 1
        out = [outcome(lambda _: list(P()), n)]
        with n.data.runtime_validation_disabled():
            out.append(list(P()))

        @n.data.argument_validation
        def f(dp: n.data.IterDataPipe, k: int):
            return k
        out += [outcome(lambda _: f([1], 2), n), outcome(lambda _: f(n.iter.IterableWrapper([1]), 2), n)]
        try:
            n.data.runtime_validation(double)
        except TypeError as e:
            out.append(str(e))
        return out
    same(validation)


def test_datachunk():
    same(lambda n: (n.data.DataChunk([1, 2, 3]).as_str("  "), list(n.data.DataChunk(range(3)).raw_iterator()),
                    n.data.DataChunk([1]).items, isinstance(n.data.DataChunk([]), list)))


def test_files(tmp_path):
    (tmp_path / "sub").mkdir()
    for name, text in (("b.txt", "bee"), ("a.txt", "ay\nline2"), ("c.csv", "1,2"), ("sub/d.txt", "dee")):
        (tmp_path / name).write_text(text)
    root = str(tmp_path)

    def rel(paths):
        return [p.replace(root, "ROOT") for p in paths]
    same(lambda n: rel(list(n.iter.FileLister(root, "*.txt"))))
    same(lambda n: rel(list(n.iter.FileLister([root], ["*.csv", "*.txt"], recursive=True))))
    same(lambda n: rel(list(n.iter.FileLister(root + "/a.txt"))))
    same(lambda n: [(p.replace(root, "ROOT"), d) for p, d in
                    n.iter.FileLister(root, "*.txt").open_files(mode="b").read_from_stream(chunk=2)])
    same(lambda n: [(p.replace(root, "ROOT"), s.read()) for p, s in n.iter.FileOpener([root + "/a.txt"])])
    same(lambda n: n.iter.FileOpener([root], mode="w"))
    same(lambda n: n.iter.FileOpener([root], mode="b", encoding="utf-8"))
    same(lambda n: list(n.iter.FileOpener([3])))
    same(lambda n: len(n.iter.FileLister(root, length=4)))
