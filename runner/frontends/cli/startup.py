"""What the `evalrun` command turns off in its own process before it builds anything.

pydantic loads every installed pydantic plugin (the `pydantic` entry-point group) when it builds its first
model. logfire registers one, and importing it brings OpenTelemetry and rich: 0.2-0.3 s of CPU at every start of
the command, a fifth of a 640-case live run, for a plugin that observes nothing unless the process configures
logfire for pydantic, which the evalrun command never does. So the command builds its models with no plugin.

This holds for the evalrun process only: agents it starts as processes keep theirs (the environment they
inherit is not touched), and `import runner` from your own program changes nothing. Set PYDANTIC_DISABLE_PLUGINS
yourself (pydantic's own switch) and pydantic does as it says.
"""
from __future__ import annotations

import os
import sys
import types

LOADER = "pydantic.plugin._loader"  # the module pydantic asks for its plugins (get_plugins) when it builds a model


def skip_pydantic_plugins() -> None:
    """Have pydantic load no plugin in this process (before its first model is built; later, a no-op).

    Before pydantic's loader is imported, a stand-in takes its name: its get_plugins finds none, and the real
    module's import of importlib.metadata (18 ms of CPU, for reading the entry points) never happens."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return
    loader = sys.modules.get(LOADER)
    if loader is None:
        stand_in = types.ModuleType(LOADER, "pydantic's plugin loader for the evalrun command: no plugins")
        stand_in.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules[LOADER] = stand_in
    elif getattr(loader, "_plugins", False) is None:  # imported, none loaded yet: pydantic reads this cache
        setattr(loader, "_plugins", {})  # noqa: B010 - a private attribute of pydantic's loader, not in its types
