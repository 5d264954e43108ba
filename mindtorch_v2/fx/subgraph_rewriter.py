"""torch.fx.subgraph_rewriter: find the occurrences of a pattern graph in a GraphModule and replace them."""
import copy
from dataclasses import dataclass, field
from typing import NamedTuple

from ._compatibility import compatibility
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


@compatibility(is_backward_compatible=True)
class Match(NamedTuple):
    anchor: Node  # the node from which the match was found
    nodes_map: dict  # pattern node -> matched graph node


@compatibility(is_backward_compatible=False)
@dataclass
class ReplacedPatterns:
    anchor: Node
    nodes_map: dict
    replacements: list  # the nodes added to the graph


@dataclass
class InternalMatch:
    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)

    def __copy__(self):
        return InternalMatch(self.anchors, self.nodes_map.copy(), self.placeholder_nodes.copy(),
                             self.returning_nodes.copy())


class SubgraphMatcher:
    """Occurrences of a pattern graph: matching starts at the pattern's sinks (anchors) and walks up the
    arguments; pattern placeholders match any value; a match's inner nodes may have no users outside it."""

    def __init__(self, pattern, ignore_literals=False):
        self.pattern = pattern
        self.ignore_literals = ignore_literals
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        self.pattern_returning_nodes = output_node.all_input_nodes
        self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    def _match_attributes(self, pn, gn):
        import mindtorch_v2 as torch
        pn_value = getattr(pn.graph.owning_module, pn.target)
        gn_value = getattr(gn.graph.owning_module, gn.target)
        if type(pn_value) is not type(gn_value):
            return False
        if isinstance(pn_value, torch.Tensor):
            return isinstance(gn_value, torch.Tensor)
        raise RuntimeError(f"Unsupported type {pn_value} when matching attributes")

    def _nodes_are_equal(self, pn, gn):
        if pn.op == "placeholder":
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "output":
            return True
        if pn.op == "get_attr":
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match):
        if isinstance(pn, Node) and not isinstance(gn, Node):
            if pn.op == "placeholder":  # a pattern input may stand for a literal
                if pn in match.nodes_map:
                    return match.nodes_map[pn] == gn
                match.nodes_map[pn] = gn
                return True
            return False
        if not isinstance(pn, Node) and isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match):
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values() or not self._nodes_are_equal(pn, gn):
            return False
        saved = match.nodes_map.copy()
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True

        def match_args(args1, args2):
            if len(args1) != len(args2):
                return False
            for a1, a2 in zip(args1, args2):
                if isinstance(a1, Node) and isinstance(a2, Node):
                    matched = self._match_nodes(a1, a2, match)
                elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                    matched = match_args(a1, a2)
                else:
                    matched = self._match_literals(a1, a2, match) or self.ignore_literals
                if not matched:
                    return False
            return True

        if list(pn.kwargs) != list(gn.kwargs) or not match_args(list(pn.args) + list(pn.kwargs.values()),
                                                               list(gn.args) + list(gn.kwargs.values())):
            match.nodes_map.clear()
            match.nodes_map.update(saved)
            return False
        return True

    def _is_contained(self, nodes_map):
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def match(self, graph):
        candidates = [(a, [n for n in graph.nodes if self._nodes_are_equal(a, n)]) for a in self.pattern_anchors]
        matches = []

        def backtracking(anchor_index, match):
            if anchor_index == len(candidates):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[anchor_index]
            saved = copy.copy(match)
            for node in nodes:
                if self._match_nodes(anchor, node, match):
                    backtracking(anchor_index + 1, match)
                match = copy.copy(saved)

        if candidates:
            backtracking(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        kept, nodes_matched = [], set()  # without overlaps, the earlier match first
        for m in matches:
            inner = [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if not any(gn in nodes_matched for gn in inner):
                kept.append(m)
                nodes_matched.update(inner)
        return kept


def _graph_of(g):
    return g.graph if isinstance(g, GraphModule) else g if isinstance(g, Graph) else symbolic_trace(g).graph


def _replace_attributes(gm, replacement):
    """Give gm the submodules and attributes that the inserted nodes take from the replacement module."""
    import mindtorch_v2 as torch
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()

    def try_get_attr(mod, target):
        module_path, _, attr_name = target.rpartition(".")
        try:
            mod = mod.get_submodule(module_path)
        except AttributeError:
            return None
        return getattr(mod, attr_name, None)

    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            if try_get_attr(gm, node.target) is not None:
                continue
            replacement_attr = try_get_attr(replacement, node.target)
            if replacement_attr is None:
                raise RuntimeError('Attempted to create a "', node.op, '" node during subgraph rewriting with '
                                   "target ", node.target, ", but the referenced attribute does not exist in the "
                                   "replacement GraphModule")
            new_attr = copy.deepcopy(replacement_attr)
            if isinstance(replacement_attr, torch.nn.Module):
                gm.add_submodule(node.target, new_attr)
            else:
                setattr(gm, node.target, new_attr)
    gm.graph.lint()


def _replace_pattern(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                     replacement_callback=None):
    import mindtorch_v2 as torch
    original_graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matches = SubgraphMatcher(pattern_graph, ignore_literals=ignore_literals).match(original_graph)
    matches = [m for m in matches if all(f(m, original_graph, pattern_graph) for f in match_filters or ())]
    common_replacement_graph = _graph_of(replacement) if replacement is not None else None
    match_changed_node = {}  # a node replaced by an earlier match -> its replacement
    replaced = []
    for match in matches:
        replacement_graph = (replacement_callback(match, original_graph, pattern_graph)
                             if replacement_callback is not None else common_replacement_graph)
        replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(replacement_placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs "
                                 f"{len(replacement_placeholders)}")
        val_map = {}
        for rn, gn in zip(replacement_placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                val_map[rn] = match_changed_node.get(gn, gn)
                if gn != val_map[rn]:  # an input an earlier replacement changed
                    match.placeholder_nodes[match.placeholder_nodes.index(gn)] = val_map[rn]
                    key = next(k for k, v in match.nodes_map.items() if v is gn)
                    match.nodes_map[key] = val_map[rn]
            else:
                val_map[rn] = gn
        # insert before the first user of the matched outputs (else after the match's last node)
        user_nodes = {u for n in match.returning_nodes for u in n.users}
        insert_point = next((n for n in original_graph.nodes if n in user_nodes), None)
        if insert_point is None:
            next_node = None
            for n in reversed(original_graph.nodes):
                if n in match.returning_nodes:
                    insert_point = next_node
                    break
                next_node = n
        if insert_point is None:
            raise AssertionError("The insert point can't be None")
        with original_graph.inserting_before(insert_point):
            copied_returning_nodes = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied_returning_nodes, Node):
            copied_returning_nodes = (copied_returning_nodes,)
        replacement_nodes = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied_returning_nodes):
            raise AssertionError(f"Returning nodes count mismatch: {len(match.returning_nodes)} vs "
                                 f"{len(copied_returning_nodes)}")
        for gn, copied_node in zip(match.returning_nodes, copied_returning_nodes):
            gn.replace_all_uses_with(copied_node)
            match_changed_node[gn] = copied_node
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                gm.graph.erase_node(match.nodes_map[node])
        replaced.append(ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map,
                                         replacements=replacement_nodes))
    gm.recompile()
    if isinstance(replacement, torch.nn.Module):
        _replace_attributes(gm, replacement)
    return replaced


@compatibility(is_backward_compatible=True)
def replace_pattern(gm, pattern, replacement):
    """Replace every non-overlapping occurrence of pattern (a function, Graph or GraphModule) in gm's
    graph with replacement (the same kinds, with as many inputs and outputs); returns the Matches.
    gm is recompiled."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


@compatibility(is_backward_compatible=False)
def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                                 replacement_callback=None, node_name_match=""):
    """replace_pattern keeping only the matches every filter(match, graph, pattern_graph) accepts."""
    if node_name_match:
        raise NotImplementedError("torch.fx.subgraph_rewriter.replace_pattern_with_filters: node_name_match "
                                  "is not implemented")
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback)
