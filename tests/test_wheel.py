"""The built wheel works on its own: schemas and prompts ship inside it, `evalrun` runs from anywhere."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from runner import __version__

ROOT = Path(__file__).resolve().parents[1]
LIGHT_DEPS = ["pyyaml", "jsonschema", "jinja2", "pydantic"]  # enough for validate/schema
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "runner", "schemas", "prompts"]

pytestmark = [pytest.mark.slow, pytest.mark.process]  # builds and installs the wheel; its console script runs


def _run(args: list, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # build from a copy so that the checkout gets no build/ folder
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"))
        elif origin.is_file():
            shutil.copy2(origin, source / name)
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, source], cwd=source)
    assert done.returncode == 0, done.stdout + done.stderr
    wheels = list(out.glob("evalrun-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    """A fresh virtual environment (no system site-packages) with the wheel installed by pip and only the light
    dependencies, copied from this environment's installs (no index needed, so it never skips offline)."""
    env = tmp_path_factory.mktemp("venv") / "env"
    done = _run([sys.executable, "-m", "venv", "--without-pip", env], cwd=env.parent)
    assert done.returncode == 0, done.stderr
    python = env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--disable-pip-version-check", "--quiet"]
    done = _run([*pip, "--no-deps", wheel], cwd=env.parent)
    assert done.returncode == 0, done.stderr
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=env.parent)
                .stdout.strip())
    assert site.is_absolute() and site.is_dir(), site
    for dist in _closure(LIGHT_DEPS):
        _copy_installed(dist, site)
    return env


def _closure(names: list[str]) -> list[metadata.Distribution]:
    """The installed distributions `names` need to run (extras left out), each once."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        found[name] = dist = metadata.distribution(name)
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(found.values())


def _copy_installed(dist: metadata.Distribution, site: Path) -> None:
    """Copy what `dist` installed (its packages, modules and .dist-info) into `site`: the same files pip would put
    there from the index, at no cost of resolving and unpacking (pip spent ~10 s of the module on it)."""
    tops = {Path(str(f)).parts[0] for f in dist.files or ()}
    for top in sorted(tops - {"..", "__pycache__"}):
        origin = Path(str(dist.locate_file(top)))
        if origin.is_dir():
            shutil.copytree(origin, site / top, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        elif origin.is_file():
            shutil.copy2(origin, site / top)


def _evalrun(env: Path) -> Path:
    return env / ("Scripts/evalrun.exe" if sys.platform == "win32" else "bin/evalrun")


def test_wheel_ships_schemas_and_prompts(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("runner/_data/prompts/semantic_match.j2", "runner/_data/schemas/suite.schema.json",
                     "runner/_data/schemas/config.schema.json", "runner/_data/schemas/report.schema.json",
                     "runner/frontends/cli/__init__.py", "runner/suite/load.py", "runner/_data/prompts/redteam/catalogue.yaml",
                     "runner/_data/prompts/redteam/crescendo.j2", "runner/_data/prompts/redteam/check_refusal.j2",
                     "runner/py.typed", f"evalrun-{__version__}.dist-info/licenses/LICENSE"):
        assert required in names
    metadata = zipfile.ZipFile(wheel).read(f"evalrun-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata  # pyproject reads it from runner.__version__
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "evalrun = runner.frontends.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert not any(n.startswith(("tests/", "suites/")) for n in names)


def test_shipped_schemas_equal_the_committed_ones(wheel):
    archive = zipfile.ZipFile(wheel)
    for kind in ("suite", "config", "report"):
        shipped = archive.read(f"runner/_data/schemas/{kind}.schema.json").decode("utf-8")
        assert shipped == (ROOT / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8")


def test_installed_evalrun_works_outside_the_checkout(venv, tmp_path):
    evalrun = _evalrun(venv)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()

    done = _run([evalrun, "--version"], cwd=workdir)
    assert (done.returncode, done.stdout.strip()) == (0, f"evalrun {__version__}")

    done = _run([evalrun, "schema", "suite"], cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "schemas" / "suite.schema.json").read_text(encoding="utf-8")

    (workdir / "greet.yaml").write_text(
        "id: greet\nstarting_sentence: hello\ngoal_details:\n  - {type: text, name: greet, keywords: [hello]}\n",
        encoding="utf-8")
    (workdir / "bad.yaml").write_text("id: bad\ngoal_detail: []\n", encoding="utf-8")
    done = _run([evalrun, "validate", "greet.yaml"], cwd=workdir)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.splitlines() == ["config: none found (searched .); using defaults", "all suites are valid"]
    done = _run([evalrun, "validate", "bad.yaml"], cwd=workdir)
    assert done.returncode == 4
    assert done.stdout == "bad.yaml:2:1: error: unknown key 'goal_detail' in the top level (did you mean 'goal_details'?)\n"

    # the package resolves its data inside site-packages, not in a checkout
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    done = _run([python, "-c", "from runner.util.resources import resource_dir; print(resource_dir('prompts'))"],
                cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parts[-3:] == ("runner", "_data", "prompts")
    assert str(ROOT) not in done.stdout


def test_installed_init_writes_the_shipped_schemas(venv, tmp_path):
    done = _run([_evalrun(venv), "init", "proj"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "proj/schemas/suite.schema.json").read_text() == (ROOT / "schemas/suite.schema.json").read_text()
    done = _run([_evalrun(venv), "validate", "proj/suites"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
