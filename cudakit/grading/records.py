"""The grader's record of each graded notebook, kept in a folder no sandbox can see.

For a submission ``alice/01_first_kernel.ipynb`` the folder gets ``alice__01_first_kernel.json``
(the ``--json`` object plus the SHA-256 of the submission and of its solution notebook) and
``alice__01_first_kernel.executed.ipynb`` (the graded notebook with the judge's outputs and each
test's score). Files are written to a temporary name and renamed, so an interrupted run leaves
either the whole record or none. (Resuming an interrupted run is the job of
:mod:`cudakit.grading.batch`, whose result files name the options too.)

>>> record_name(Path("alice/01_first_kernel.ipynb"))
'alice__01_first_kernel'
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from pathlib import Path

import nbformat


def record_name(submission: Path) -> str:
    """A file name for the record of ``submission`` (its path, folders joined by ``__``)."""
    path = Path(os.path.relpath(Path(submission).resolve(), Path.cwd().resolve()))
    parts = [p for p in path.with_suffix("").parts if p not in ("..", ".")]
    return re.sub(r"[^\w.-]", "_", "__".join(parts))


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def save(folder: Path, submission: Path, solution: Path, result: dict, merged,
         outputs: dict[int, str]) -> None:
    """Write the result and the executed copy of ``merged`` (outputs by cell index)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = record_name(submission)
    executed = copy.deepcopy(merged)
    scores = {t["name"]: t for t in result["tests"]}
    for index, cell in enumerate(executed.cells):
        if cell.cell_type != "code":
            continue
        if outputs.get(index):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=outputs[index])]
        test = scores.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if test is not None:
            cell.metadata["cudakit"] = {"score": test["score"], "feedback": test["feedback"]}
    _write(folder / f"{name}.executed.ipynb", nbformat.writes(executed))
    record = {**result, "submission_sha256": digest(submission),
              "solution_sha256": digest(solution)}
    _write(folder / f"{name}.json", json.dumps(record, indent=1))
