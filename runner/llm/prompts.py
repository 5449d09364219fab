"""Prompt templates: one sandboxed Jinja environment over the built-in prompts and a user's overrides.

Templates are data a suite author may supply, so they render in Jinja's sandbox, and a variable the
caller forgot is an error (StrictUndefined) rather than a silently empty prompt sent to a paid model.
"""
from __future__ import annotations

import re
import traceback
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from runner.util.resources import resource_dir

_UNDEFINED_NAME = re.compile(r"'([^']+)' is undefined|has no attribute '([^']+)'")


class PromptError(Exception):
    """A prompt template is missing, malformed, or needs a variable that was not given."""

    def __init__(self, message: str, *, template: str, line: int | None = None, variable: str | None = None):
        super().__init__(message)
        self.template = template
        self.line = line
        self.variable = variable


class PromptLibrary:
    """Templates by file name; a file in `user_dir` hides the built-in of the same name."""

    def __init__(self, user_dir: Path | None = None):
        loaders: list[jinja2.BaseLoader] = []
        if user_dir is not None:
            loaders.append(jinja2.FileSystemLoader(str(user_dir)))
        loaders.append(jinja2.FileSystemLoader(str(resource_dir("prompts"))))
        self.user_dir = user_dir
        self._env = SandboxedEnvironment(
            loader=jinja2.ChoiceLoader(loaders),
            undefined=jinja2.StrictUndefined,
            autoescape=False,  # prompts are plain text, not HTML
            keep_trailing_newline=True,
        )

    def names(self) -> list[str]:
        return sorted(set(self._env.list_templates(extensions=["j2"])))  # not redteam/catalogue.yaml, which is data

    def source(self, name: str) -> str:
        """The template's text as written (the user's override, else the built-in)."""
        try:
            text, _, _ = self._env.loader.get_source(self._env, name)  # type: ignore[union-attr]
        except jinja2.TemplateNotFound:
            raise PromptError(f"prompt template {name!r} not found (known: {', '.join(self.names()) or 'none'})",
                              template=name) from None
        return text

    def render(self, name: str, /, **variables: object) -> str:
        try:
            template = self._env.get_template(name)
        except jinja2.TemplateNotFound:
            raise PromptError(f"prompt template {name!r} not found (known: {', '.join(self.names()) or 'none'})",
                              template=name) from None
        except jinja2.TemplateSyntaxError as exc:
            raise PromptError(f"prompt template {name!r}, line {exc.lineno}: {exc.message}",
                              template=name, line=exc.lineno) from None
        try:
            return template.render(**variables)
        except jinja2.exceptions.SecurityError as exc:
            line = _template_line(exc, template.filename)
            raise PromptError(f"prompt template {name!r}{_at(line)}: unsafe access blocked by the sandbox: {exc}",
                              template=name, line=line) from None
        except jinja2.UndefinedError as exc:
            line = _template_line(exc, template.filename)
            found = _UNDEFINED_NAME.search(str(exc))
            variable = (found.group(1) or found.group(2)) if found else None
            raise PromptError(f"prompt template {name!r}{_at(line)}: undefined variable {variable or '?'!r} ({exc})",
                              template=name, line=line, variable=variable) from None


def _template_line(exc: BaseException, filename: str | None) -> int | None:
    """Jinja rewrites tracebacks so template frames carry the template's file and line: take the innermost."""
    if not filename:
        return None
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    return lines[-1] if lines else None


def _at(line: int | None) -> str:
    return f", line {line}" if line else ""
