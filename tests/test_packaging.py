"""The conda route (environment.yml) installs what the pip route (pyproject.toml) does."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_packages() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = project["dependencies"] + extras["gpu"] + extras["lab"] + extras["test"]
    return {_name(r) for r in wanted}


def _conda_packages() -> set[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    names = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            names |= {_name(p) for p in dep.get("pip", []) if not p.startswith("-e")}
        else:
            names.add(_name(dep))
    return names


def test_environment_has_every_pyproject_package():
    # the pip route's nvcc comes as NVIDIA's wheels (nvidia-cuda-nvcc, nvidia-nvvm, ...);
    # the conda route takes the same compiler as conda's cuda-nvcc
    conda = _conda_packages()
    missing = {n for n in _pyproject_packages() - conda
               if not (n.startswith("nvidia-") and "cuda-nvcc" in conda)}
    assert not missing, f"environment.yml lacks {sorted(missing)}"


def test_environment_adds_only_the_compiler_and_python():
    extra = _conda_packages() - _pyproject_packages()
    assert extra == {"python", "pip", "cuda-nvcc"}, f"unexpected extras {sorted(extra)}"


def test_environment_installs_this_package_editable():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip
