"""Ship the top-level schemas/ and prompts/ inside the wheel, as runner/_data/.

The repository keeps them at the top level (where editors and people look for them); an installed
wheel has no repository around it, so the build copies them into the package. runner/util/resources.py
reads from runner/_data/ when it exists and from the repository otherwise.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
SHIPPED = {"schemas": ("*.json",), "prompts": ("*.j2", "redteam/*.j2", "redteam/*.yaml")}


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        for folder, patterns in SHIPPED.items():
            for pattern in patterns:
                for source in sorted((ROOT / folder).glob(pattern)):
                    target = Path(self.build_lib) / "runner" / "_data" / folder / source.relative_to(ROOT / folder)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target)


setup(cmdclass={"build_py": BuildPyWithData})
