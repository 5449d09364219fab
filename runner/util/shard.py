"""`--shard I/N`: one of N parts of a suite, chosen by a hash of each case's id.

The split depends on the id alone, never on a case's position, so adding, removing or reordering
cases moves only those cases between shards, and every machine of a CI matrix computes the same split
whatever order it collected the files in. Shards are numbered from 1, as CI matrices count.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, case_id: str) -> bool:
        return shard_of(case_id, self.count) == self.index


def shard_of(case_id: str, count: int) -> int:
    """The shard (1..count) a case id belongs to: sha256 of the id, so Python's per-process hash
    randomisation cannot move a case between the machines of a matrix."""
    digest = hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; ValueError with the reason otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if match is None:
        raise ValueError(f"expected I/N (for example 2/4), got '{text}'")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"I/N needs 1 <= I <= N, got '{text}'")
    return Shard(index, count)
