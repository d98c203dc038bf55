"""A class of forty submissions for the batch and Slurm tests, one folder per student:
the 11 solutions, the 20 typical mistakes of ``test_wrong_submissions`` and 9 unmodified
exercises.

``python tests/grading/class_of_40.py`` grades them one by one with ``grade`` (the
per-notebook grader, on the emulator) and writes ``fixtures/class_of_40_emu.json``, the
reference the parallel and Slurm runs must equal. The exercises' tests draw random inputs,
so two gradings of one notebook agree on every score and on the kind of each feedback
("wrong result", "data race on shared memory ...") but not on the values it quotes; the
tests compare those. Run it again when the grader's feedback changes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).parent))
from test_wrong_submissions import MISTAKES, _mutant  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).parent / "fixtures" / "class_of_40_emu.json"


def write_class(folder: Path) -> list[str]:
    """Write the forty submissions under ``folder``; their paths relative to it, in order."""
    sources = [("solutions", p) for p in sorted((ROOT / "solutions").glob("*.ipynb"))]
    sources += [("exercises", p) for p in sorted((ROOT / "exercises").glob("*.ipynb"))[:9]]
    paths = []
    for index, (_, path) in enumerate(sources):
        student = folder / f"s{index:02d}"
        student.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.read(path, as_version=4), student / path.name)
        paths.append(f"{student.name}/{path.name}")
    for index, (notebook, cell_id, old, new, _) in enumerate(MISTAKES, start=len(sources)):
        student = folder / f"s{index:02d}"
        student.mkdir(parents=True, exist_ok=True)
        paths.append(f"{student.name}/{_mutant(student, notebook, cell_id, old, new).name}")
    return paths


def main() -> None:
    import tempfile

    from cudakit.grading import grade

    with tempfile.TemporaryDirectory() as folder:
        paths = write_class(Path(folder))
        os.chdir(folder)
        results = [grade(p, solutions=ROOT / "solutions", backend="emu").to_dict()
                   for p in paths]
    REFERENCE.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{len(results)} notebooks graded one by one -> {REFERENCE}")


if __name__ == "__main__":
    main()
