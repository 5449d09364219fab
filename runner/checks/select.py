"""Which checks a run's profile (evalrun.yaml `profiles:`, chosen with `--profile`) leaves out, and why.

The profile applies to every check, the ones nested in a composition too: a composition runs with the
children its profile keeps (and is skipped when it keeps none)."""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .base import CheckFamily, CheckOptions


@dataclass(frozen=True)
class Selection:
    """A profile by name, as the checks read it (`profile` is config.CheckProfile: include, exclude, judged)."""

    name: str
    profile: Any

    def left_out(self, family: CheckFamily, options: CheckOptions) -> str | None:
        """Why the profile leaves this check out, or None when it runs."""
        # an alias answers to its family's main type too (response_match_score to response_match); a `not_`
        # form is the opposite check and answers only to its own type
        main = [family.type] if not options.type.startswith("not_") else []
        names = {options.type, *main, *([options.name] if options.name else [])}

        def matches(patterns: list[str]) -> str | None:
            return next((p for p in patterns if any(fnmatchcase(n, p) for n in names)), None)

        where = f"left out by profile {self.name}"
        if self.profile.include and matches(self.profile.include) is None:
            return f"{where} (not in its include: {', '.join(self.profile.include)})"
        excluded = matches(self.profile.exclude)
        if excluded is not None:
            return f"{where} (its exclude has {excluded!r})"
        if not self.profile.judged and family.needs_model:
            return f"{where} (judged: false, and this check asks a judge model)"
        return None


def profile_selection(loaded: Any, name: str | None) -> Selection | None:
    """The Selection of evalrun.yaml's profile `name` (None: no --profile, every check runs). The run
    refuses an unknown name before it starts (`unknown_profile`), so here it is always declared."""
    if name is None:
        return None
    return Selection(name, loaded.config.profiles[name])


def unknown_profile(loaded: Any, name: str) -> str | None:
    """The usage error for a --profile that evalrun.yaml does not declare, or None."""
    from ..util.diagnostics import did_you_mean

    profiles = loaded.config.profiles
    if name in profiles:
        return None
    where = f"{loaded.path} declares" if loaded.path else "no evalrun.yaml was found, so there are"
    declared = f"profiles: {', '.join(sorted(profiles))}" if profiles else "no profiles"
    return f"--profile: unknown profile '{name}' ({where} {declared}){did_you_mean(name, profiles)}"
