"""evalrun: a declarative, YAML-driven evaluation runner for LLM agents.

    from runner import evaluate, aevaluate, evaluate_file, Report, EvaluationFailed

(they live in runner.frontends.python and are imported on first use: `import runner` and `evalrun --help` stay quick)
"""
from typing import TYPE_CHECKING

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (dynamic), tests and reports import it

__all__ = ["EvaluationFailed", "Report", "aevaluate", "evaluate", "evaluate_file"]

if TYPE_CHECKING:  # their real types for a type checker; at run time __getattr__ imports them on first use
    from .frontends.python import EvaluationFailed, Report, aevaluate, evaluate, evaluate_file


def __getattr__(name: str) -> object:
    if name in __all__:
        from .frontends import python as evaluation

        value = globals()[name] = getattr(evaluation, name)
        return value
    raise AttributeError(f"module 'runner' has no attribute '{name}'")
