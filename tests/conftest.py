"""What every test process shares."""
import os

# logfire is a dev dependency (the trace tests make Logfire exports with it). It registers a pydantic plugin
# that imports logfire and OpenTelemetry into every process that builds a pydantic model: ~0.3 s more for
# each CLI run and each isolated agent worker a test starts, enough to miss a test's timeout on a loaded
# machine. The processes tests start inherit this, and run as they would where logfire is not installed.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "logfire-plugin")
