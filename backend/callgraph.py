"""The call graph of a run: which model call waited for which, and its critical path.

Edges come from ``LLMCall.parents`` (a method names the calls whose output a call needed, including
control dependencies such as a stopping rule). The critical path is the heaviest dependency chain; with
every uncached call costing the same latency, its length in calls times that latency is the least wall
time any schedule can reach, which is what ``benchmarks/critical_path.py`` compares a run against.
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.schema import LLMCall


def edges(calls: Iterable[LLMCall]) -> list[tuple[str, str]]:
    """(parent id, child id) for every dependency between calls of the given list."""
    calls = list(calls)
    known = {c.id for c in calls}
    return [(p, c.id) for c in calls for p in c.parents if p in known]


def _weight(call: LLMCall, by: str) -> float:
    if by == "count":
        return 0.0 if call.cache_hit else 1.0
    return call.latency_s


def critical_path(calls: Iterable[LLMCall], by: str = "count") -> list[str]:
    """Call ids along the heaviest chain of dependencies (``by``: "count" of uncached calls, or "latency").

    Raises ``ValueError`` on a cycle, which would mean a method recorded a dependency on a later call.
    """
    calls = list(calls)
    by_id = {c.id: c for c in calls}
    children: dict[str, list[str]] = {c.id: [] for c in calls}
    indegree = {c.id: 0 for c in calls}
    for parent, child in edges(calls):
        children[parent].append(child)
        indegree[child] += 1
    order = [cid for cid, d in indegree.items() if d == 0]
    best = {cid: _weight(by_id[cid], by) for cid in order}
    prev: dict[str, str | None] = {cid: None for cid in order}
    seen = 0
    while order:
        cid = order.pop()
        seen += 1
        for child in children[cid]:
            total = best[cid] + _weight(by_id[child], by)
            if child not in best or total > best[child]:
                best[child], prev[child] = total, cid
            indegree[child] -= 1
            if indegree[child] == 0:
                order.append(child)
    if seen != len(calls):
        raise ValueError("the call graph has a cycle")
    if not best:
        return []
    node: str | None = max(best, key=lambda k: (best[k], k))
    path = []
    while node is not None:
        path.append(node)
        node = prev[node]
    return path[::-1]


def critical_path_length(calls: Iterable[LLMCall], by: str = "count") -> float:
    calls = list(calls)
    by_id = {c.id: c for c in calls}
    return sum(_weight(by_id[i], by) for i in critical_path(calls, by))
