"""torch.utils._pytree against PyTorch's own (live)."""
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import mindtorch_v2.utils._pytree as mp

torch = pytest.importorskip("torch")
import torch.utils._pytree as tp  # noqa: E402

Point = namedtuple("Point", "x y")

TREES = [
    1, None, [], (), {}, [1, 2, (3, 4)], {"b": 1, "a": [2, None]}, (None, [None]), Point(1, [2, 3]),
    OrderedDict([("z", 1), ("y", (2, 3))]), defaultdict(list, {"k": [1, 2]}), deque([1, [2]], maxlen=5),
    [{"a": Point(1, 2)}, (OrderedDict(q=[3]),)],
]


def _types(spec):
    return (spec.type.__name__ if spec.type is not None else None, [_types(c) for c in spec.children()])


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_unflatten_like_pytorch(tree):
    leaves, spec = mp.tree_flatten(tree)
    tleaves, tspec = tp.tree_flatten(tree)
    assert leaves == tleaves
    assert repr(spec) == repr(tspec)
    assert spec.num_leaves == tspec.num_leaves and spec.num_nodes == tspec.num_nodes
    assert _types(spec) == _types(tspec)
    back = mp.tree_unflatten(leaves, spec)
    assert back == tree and type(back) is type(tree)
    assert mp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert mp.tree_map(lambda x: (x, 0), tree) == tp.tree_map(lambda x: (x, 0), tree)


def test_tree_map_multi_and_prefix_errors():
    assert mp.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    for a, b in [([1, 2], [1]), ({"a": 1}, {"b": 1}), ((1, 2), [1, 2])]:
        with pytest.raises(ValueError) as e1:
            mp.tree_map(lambda x, y: x, a, b)
        with pytest.raises(ValueError) as e2:
            tp.tree_map(lambda x, y: x, a, b)
        assert str(e1.value) == str(e2.value)


def test_is_leaf_and_map_only():
    tree = {"a": (1, 2.0), "b": [3, "s"]}
    assert mp.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == \
        tp.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert mp.tree_map_only(int, lambda x: x * 10, tree) == tp.tree_map_only(int, lambda x: x * 10, tree)
    assert mp.tree_any(lambda x: x == "s", tree) and not mp.tree_all(lambda x: x == "s", tree)


def test_register_pytree_node_keywords_and_duplicates():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __eq__(self, other):
            return type(other) is Box and (self.a, self.b) == (other.a, other.b)

    mp.register_pytree_node(Box, lambda b: ([b.a, b.b], "ctx"), lambda v, c: Box(*v),
                            serialized_type_name="tests.Box",
                            flatten_with_keys_fn=lambda b: ([(mp.GetAttrKey("a"), b.a), (mp.GetAttrKey("b"), b.b)],
                                                            "ctx"))
    try:
        leaves, spec = mp.tree_flatten([Box(1, (2, 3))])
        assert leaves == [1, 2, 3] and spec.children()[0].type is Box and spec.children()[0].context == "ctx"
        assert mp.tree_unflatten(leaves, spec) == [Box(1, (2, 3))]
        paths = [mp.keystr(p) for p, _ in mp.tree_flatten_with_path([Box(1, (2, 3))])[0]]
        assert paths == ["[0].a", "[0].b[0]", "[0].b[1]"]
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            mp.register_pytree_node(Box, lambda b: ([], None), lambda v, c: Box(0, 0))
        with pytest.raises(ValueError, match="to_dumpable_context and from_dumpable_context"):
            mp._private_register_pytree_node(int, lambda x: ([], None), lambda v, c: 0,
                                             to_dumpable_context=lambda c: c)
    finally:
        mp._deregister_pytree_node(Box)
        mp.SUPPORTED_NODES.pop(int, None)


def test_paths_like_pytorch():
    tree = {"a": [1, Point(2, 3)], "b": OrderedDict(c=4)}
    mine = [(mp.keystr(p), v) for p, v in mp.tree_flatten_with_path(tree)[0]]
    theirs = [(tp.keystr(p), v) for p, v in tp.tree_flatten_with_path(tree)[0]]
    assert mine == theirs


def test_unflatten_length_error():
    _, spec = mp.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2 items"):
        spec.unflatten([1])
