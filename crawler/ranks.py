"""The rank index of the frontier: how many frontier keys are smaller than a key.

A sorted multiset of ``(-priority, url_id)`` keys in blocks of :attr:`RankIndex._LOAD`
with a Fenwick tree over the block sizes (the ``sortedcontainers`` layout): add, remove
and rank in O(log n) amortised.  It holds a tuple per key, about 120 bytes a frontier
URL, which is why rank recording (``frontier_record_rank``) is optional.
"""

from __future__ import annotations

from bisect import bisect_left, insort

__all__ = ["RankIndex"]

_Key = tuple[float, int]


class RankIndex:
    """Sorted multiset of keys answering rank queries in O(log n) (amortised)."""

    _LOAD = 512

    def __init__(self) -> None:
        self._blocks: list[list[_Key]] = []
        self._maxes: list[_Key] = []
        self._tree: list[int] = [0]

    def rebuild(self, sorted_keys: list[_Key]) -> None:
        """Replace the contents with ``sorted_keys`` (ascending) in O(n).

        Blocks of :attr:`_LOAD` keys (the layout :meth:`add` splits into), then the
        Fenwick tree over their sizes.
        """
        load = self._LOAD
        self._blocks = [sorted_keys[i:i + load] for i in range(0, len(sorted_keys), load)]
        self._maxes = [block[-1] for block in self._blocks]
        self._rebuild_tree()

    def _rebuild_tree(self) -> None:
        n = len(self._blocks)
        tree = [0] * (n + 1)
        for i, block in enumerate(self._blocks, 1):
            tree[i] += len(block)
            parent = i + (i & -i)
            if parent <= n:
                tree[parent] += tree[i]
        self._tree = tree

    def _bump(self, i: int, delta: int) -> None:
        i += 1
        tree = self._tree
        n = len(tree)
        while i < n:
            tree[i] += delta
            i += i & -i

    def _prefix(self, i: int) -> int:
        total, tree = 0, self._tree
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def add(self, key: _Key) -> None:
        blocks, maxes = self._blocks, self._maxes
        if not blocks:
            blocks.append([key])
            maxes.append(key)
            self._rebuild_tree()
            return
        i = bisect_left(maxes, key)
        if i == len(blocks):
            i -= 1
            blocks[i].append(key)
            maxes[i] = key
        else:
            insort(blocks[i], key)
        self._bump(i, 1)
        if len(blocks[i]) > 2 * self._LOAD:
            block = blocks[i]
            blocks[i:i + 1] = [block[: self._LOAD], block[self._LOAD:]]
            maxes[i:i + 1] = [block[self._LOAD - 1], block[-1]]
            self._rebuild_tree()

    def remove(self, key: _Key) -> None:
        i = bisect_left(self._maxes, key)
        block = self._blocks[i]
        del block[bisect_left(block, key)]
        if block:
            self._maxes[i] = block[-1]
            self._bump(i, -1)
        else:
            del self._blocks[i], self._maxes[i]
            self._rebuild_tree()

    def rank(self, key: _Key) -> int:
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):
            return self._prefix(i)
        return self._prefix(i) + bisect_left(self._blocks[i], key)
