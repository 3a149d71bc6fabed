"""Shared fixtures of the Python tests: paths into the repository."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    # Docstring examples and messages use paths relative to the repository.
    monkeypatch.chdir(ROOT)


def bundled_matrices():
    """Every bundled Matrix Market matrix that SciPy can read (the quirks/
    files are malformed on purpose; tests/test_errors.py covers them)."""
    out = []
    for sub in ("real", "seed"):
        for p in sorted((FIXTURES / "matrices" / sub).iterdir()):
            if p.name.endswith((".mtx", ".mtx.gz")):
                out.append(p)
    return out


def tsv_rows(name):
    """The rows of a fixtures/bad/*.tsv file (comments skipped)."""
    rows = []
    for line in (FIXTURES / "bad" / name).read_text().splitlines():
        if line and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows


def cli_binary():
    """The sparsetool binary cargo built (for comparisons with the CLI), or None."""
    for p in (os.environ.get("SPARSETOOL_BIN"), ROOT / "target" / "debug" / "sparsetool"):
        if p and pathlib.Path(p).is_file():
            return pathlib.Path(p)
    return None
