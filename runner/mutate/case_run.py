"""One case mutated: its recording read and scored (it must pass), its mutants made and each scored through
the case runner's one scoring path (runner.run.execute.CaseRunner.score_recording, as a replay is scored),
each survivor explained. Offline unless --judged: the judge is left out of the cascade and the checks that
need a model are left out of the case (said in the case's notes). A case's outcome is cached, keyed on
everything it depends on."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import LoadedConfig, with_project_defaults
from ..run.case_index import CaseChanged, CaseRef
from ..run.case_results import internal_error
from ..run.execute import CaseRunner
from ..run.recordings import recordings_of
from ..run.run_options import RunOptions
from ..suite.models import Case
from ..transcripts.opening import opening_problem
from ..transcripts.read import TranscriptError
from ..transcripts.recording import Recording
from ..transcripts.transcript_file import read_recording
from .diagnose import diagnose
from .equivalent import equivalence
from .generate import case_mutants
from .locate import Locator
from .outcome import EQUIVALENT, KILLED, SURVIVED, CaseMutation, MutantOutcome

CACHE_FORMAT = 1  # bump when what a cached outcome holds changes


@dataclass
class MutateOptions:
    seed: int = 0
    per_case: int = 20
    judged: bool = False
    replay_dir: Path | None = None
    no_cache: bool | str = False  # as --cache/--no-cache say: False (on), "refresh" (write only), "off"


class CaseMutator:
    """Mutates the cases of one collection; built once per process (a worker forks with it)."""

    def __init__(self, loaded: LoadedConfig, roots: Sequence[Path], options: MutateOptions) -> None:
        self.options = options
        self.loaded = loaded
        scoring = loaded if options.judged else loaded.model_copy(
            update={"config": loaded.config.model_copy(update={"judge": None})})
        self.runner = CaseRunner(scoring, RunOptions(replay_dir=options.replay_dir, concurrency=1), roots=roots)
        self.cache_dir = None if options.no_cache == "off" else loaded.resolve(loaded.config.cache_dir) / "mutate"
        self._config_key = json.dumps(scoring.config.model_dump(mode="json"), sort_keys=True, default=str)

    def mutate(self, ref: CaseRef) -> list[CaseMutation]:
        """The case's outcomes (one per recorded run when it has several); never raises."""
        shown = ref.source.path
        try:
            return self._mutate(ref)
        except CaseChanged as exc:
            return [CaseMutation(ref.id, str(ref.source), shown, False, str(exc))]
        except Exception as exc:  # a bug must not take the other cases down
            return [CaseMutation(ref.id, str(ref.source), shown, False, internal_error("mutating the case", exc))]

    def _mutate(self, ref: CaseRef) -> list[CaseMutation]:
        case = self.runner.load(ref)
        shown = ref.source.path
        if case.skip:
            return [CaseMutation(ref.id, str(ref.source), shown, False, "skipped by the suite (`skip`)")]
        case, notes = self._offline(with_project_defaults(case, self.loaded.config))
        try:
            recordings = recordings_of(case, self.runner.options, self.runner.roots)
        except TranscriptError as exc:
            return [CaseMutation(ref.id, str(ref.source), shown, False, str(exc))]
        if recordings is None:
            return [CaseMutation(ref.id, str(ref.source), shown, False, "no recording to mutate: the case is played "
                                 "live; give --replay RUN_DIR of a run that played it, or a `transcript:`")]
        many = len(recordings) > 1
        return [self._recording(ref, case, f"{ref.id} run {run}" if many else ref.id, path, notes)
                for run, path in recordings]

    def _offline(self, case: Case) -> tuple[Case, list[str]]:
        """The case without the checks that need a model, unless --judged (then the judge is asked)."""
        if self.options.judged or not case.checks:
            return case, []
        from ..checks import registry

        table = registry()
        judged = [c for c in case.checks if isinstance(c, dict) and c.get("type") in table
                  and table[c["type"]].needs_model]
        if not judged:
            return case, []
        names = ", ".join(sorted({str(c.get("name") or c["type"]) for c in judged}))
        kept = [c for c in case.checks if c not in judged]
        return case.model_copy(update={"checks": kept}), [f"judged checks left out (offline; --judged asks the "
                                                          f"judge): {names}"]

    def _recording(self, ref: CaseRef, case: Case, case_id: str, path, notes: list[str]) -> CaseMutation:
        source, shown = str(ref.source), ref.source.path
        try:
            recording = read_recording(path)
        except TranscriptError as exc:
            return CaseMutation(case_id, source, shown, False, str(exc))
        other = opening_problem(case.starting_sentence, recording.messages)
        if other is not None:
            return CaseMutation(case_id, source, shown, False, other)
        key = self._cache_key(case, recording)
        cached = self._cached(key)
        if cached is not None:
            return cached
        outcome = self._scored(ref, case, case_id, recording, str(path), notes)
        self._keep(key, outcome)
        return outcome

    def _scored(self, ref: CaseRef, case: Case, case_id: str, recording: Recording, where: str,
                notes: list[str]) -> CaseMutation:
        source, shown = str(ref.source), ref.source.path
        base = {"id": case_id, "source": source, "tags": list(ref.tags)}
        original = self.runner.score_recording(case, recording, base, transcript_path=where)
        if original.status != "passed":
            why = original.error or original.unscored_reason or "; ".join(original.failures[:1]) or original.status
            return CaseMutation(case_id, source, shown, False,
                                f"it does not pass on its recording ({original.status}: {why})", notes=notes)
        locator = Locator(case, ref.path)
        outcome = CaseMutation(case_id, source, shown, True, notes=notes)
        for mutant in case_mutants(case, recording.messages, original, seed=self.options.seed,
                                   limit=self.options.per_case, declared_tools=self._declared(case)):
            fields: dict[str, Any] = {"family": mutant.family, "operator": mutant.operator, "change": mutant.change,
                          "message": mutant.message, "call_index": mutant.call_index, "arg_path": mutant.arg_path}
            reason = equivalence(case, original, mutant)
            if reason is not None:
                outcome.mutants.append(MutantOutcome(**fields, status=EQUIVALENT, detail=reason))
                continue
            scored = self.runner.score_recording(case, recording.model_copy(update={"messages": mutant.messages}),
                                                 base, transcript_path=where)
            if scored.status == "passed":
                finding = diagnose(case, original, mutant, locator, judged_left_out=bool(notes))
                outcome.mutants.append(MutantOutcome(**fields, status=SURVIVED, detail=finding.why, line=finding.line))
            else:
                caught = scored.error or scored.unscored_reason or "; ".join(scored.failures[:1]) or scored.status
                outcome.mutants.append(MutantOutcome(**fields, status=KILLED, detail=f"{scored.status}: {caught}"))
        return outcome

    def _declared(self, case: Case) -> list[tuple[str, str]]:
        from ..run.agent_tools import tools_for

        try:
            tools = tools_for(case, self.loaded)
        except Exception:  # tools that cannot be read: the goals' and the recording's names remain
            return []
        return [] if tools is None else [(spec.name, spec.description or "") for spec in tools.specs]

    def _cache_key(self, case: Case, recording: Recording) -> str | None:
        if self.cache_dir is None:
            return None
        text = json.dumps([CACHE_FORMAT, __version__, case.model_dump(mode="json"), recording.model_dump(mode="json"),
                           self.options.seed, self.options.per_case, self.options.judged, self._config_key],
                          sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _cached(self, key: str | None) -> CaseMutation | None:
        if key is None or self.cache_dir is None or self.options.no_cache:
            return None
        try:
            return CaseMutation.from_json(json.loads((self.cache_dir / f"{key}.json").read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):  # absent or unreadable: made again
            return None

    def _keep(self, key: str | None, outcome: CaseMutation) -> None:
        if key is None or self.cache_dir is None:
            return
        from ..util.atomic import write_text_atomically

        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            write_text_atomically(self.cache_dir / f"{key}.json", json.dumps(outcome.to_json(), ensure_ascii=False))
        except OSError:  # a cache that cannot be written costs time, never the result
            pass
