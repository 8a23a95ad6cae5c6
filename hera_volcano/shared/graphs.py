"""Cycles in dependency graphs: Argo DAG tasks and Volcano task ``dependsOn`` must both form DAGs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence


def cycles(graph: Mapping[str, Sequence[str]]) -> Iterator[list[str]]:
    """One cycle per back edge of a depth-first search, as a closed path ``a, b, a``.

    Iterative, so long chains do not hit Python's recursion limit; edges to unknown nodes are ignored (callers
    report those themselves).
    """
    done: set[str] = set()
    for root in graph:
        if root in done:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(graph.get(root, ())))]
        position = {root: 0}  # node -> its index on the current path (the stack)
        while stack:
            node, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                stack.pop()
                del position[node]
                done.add(node)
            elif nxt in position:
                yield [*(n for n, _ in stack[position[nxt] :]), nxt]
            elif nxt not in done:
                position[nxt] = len(stack)
                stack.append((nxt, iter(graph.get(nxt, ()))))
