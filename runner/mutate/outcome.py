"""What mutate found, as plain data: each mutant's fate (killed, survived, equivalent) with its reason, each
case's kill rate (killed ÷ mutants that are not equivalent), each suite file's and the whole run's. JSON in,
JSON out: the cache keeps a case's outcome, the report formats render the whole."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

KILLED, SURVIVED, EQUIVALENT = "killed", "survived", "equivalent"


@dataclass
class MutantOutcome:
    family: str
    operator: str
    change: str
    status: str  # killed, survived or equivalent
    detail: str  # killed: the failure that caught it; survived: what let it through and the fix; equivalent: why
    message: int | None = None
    call_index: int | None = None
    arg_path: str | None = None
    line: str | None = None  # a survivor: file:line of the suite that let it through


@dataclass
class CaseMutation:
    id: str
    source: str  # file:line:column of the case
    file: str  # the suite file, as messages show it
    mutated: bool
    reason: str | None = None  # why the case was not mutated
    mutants: list[MutantOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for m in self.mutants if m.status == status)

    @property
    def kill_rate(self) -> float | None:
        return kill_rate(self.count(KILLED), self.count(SURVIVED))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(killed=self.count(KILLED), survived=self.count(SURVIVED), equivalent=self.count(EQUIVALENT),
                    kill_rate=self.kill_rate)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseMutation:
        fields = {k: data[k] for k in ("id", "source", "file", "mutated", "reason", "notes")}
        return cls(**fields, mutants=[MutantOutcome(**m) for m in data["mutants"]])


def kill_rate(killed: int, survived: int) -> float | None:
    return None if killed + survived == 0 else killed / (killed + survived)


@dataclass
class MutateReport:
    cases: list[CaseMutation]
    seed: int
    mutants_per_case: int
    judged: bool
    min_kill_rate: float | None = None
    notes: list[str] = field(default_factory=list)
    folder: str | None = None

    def mutated(self) -> list[CaseMutation]:
        return [c for c in self.cases if c.mutated]

    def totals(self) -> dict[str, Any]:
        killed = sum(c.count(KILLED) for c in self.cases)
        survived = sum(c.count(SURVIVED) for c in self.cases)
        equivalent = sum(c.count(EQUIVALENT) for c in self.cases)
        return {"cases": len(self.cases), "mutated": len(self.mutated()), "mutants": killed + survived + equivalent,
                "killed": killed, "survived": survived, "equivalent": equivalent,
                "kill_rate": kill_rate(killed, survived)}

    def by_file(self) -> dict[str, dict[str, Any]]:
        """Each suite file's kill rate over its mutated cases."""
        files: dict[str, list[int]] = {}
        for case in self.mutated():
            counts = files.setdefault(case.file, [0, 0])
            counts[0] += case.count(KILLED)
            counts[1] += case.count(SURVIVED)
        return {name: {"killed": k, "survived": s, "kill_rate": kill_rate(k, s)} for name, (k, s) in files.items()}

    def weakest(self) -> list[CaseMutation]:
        """The mutated cases below --min-kill-rate, weakest first (ties by id)."""
        if self.min_kill_rate is None:
            return []
        low = [c for c in self.mutated() if c.kill_rate is not None and c.kill_rate < self.min_kill_rate]
        return sorted(low, key=lambda c: (c.kill_rate, c.id))

    def gate_failed(self) -> bool:
        rate = self.totals()["kill_rate"]
        return self.min_kill_rate is not None and (bool(self.weakest()) or (rate is not None and rate < self.min_kill_rate))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "evalrun-mutate", "seed": self.seed, "mutants_per_case": self.mutants_per_case,
                "judged": self.judged, "min_kill_rate": self.min_kill_rate, "gate_failed": self.gate_failed(),
                "weakest": [c.id for c in self.weakest()], "totals": self.totals(), "files": self.by_file(),
                "notes": self.notes, "cases": [c.to_json() for c in self.cases]}
