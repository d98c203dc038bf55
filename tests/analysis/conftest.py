"""Shared fixtures of the analysis tests: the H100 measurements of the suite."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ncu"
sys.path.insert(0, str(FIXTURES))


@pytest.fixture(scope="session")
def measured() -> dict:
    return json.loads((FIXTURES / "measured.json").read_text())
