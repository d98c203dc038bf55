"""The notebook that grading runs: the instructor's cells with the student's answers.

As nbgrader's autograder does, every cell the student may not change (tests,
locked cells, instructions) comes from the solution notebook, so hidden tests are
injected only at grading time and edited tests count for nothing. Answer cells
come from the submission, matched by ``grade_id``; cells the student added stay
after the tracked cell they followed.

>>> import nbformat
>>> from cudakit.grading.exercise import answer_cell, graded_cell
>>> source = nbformat.v4.new_notebook(cells=[
...     answer_cell("### BEGIN SOLUTION\\nx = 2\\n### END SOLUTION", "ans"),
...     graded_cell("assert x == 2  # hidden part", "t", points=1)])
>>> mine = nbformat.v4.new_notebook(cells=[
...     answer_cell("x = 3", "ans"), nbformat.v4.new_code_cell("y = 1"),
...     graded_cell("pass  # edited", "t", points=1)])
>>> [c.source for c in merge(source, mine).cells]
['x = 3', 'y = 1', 'assert x == 2  # hidden part']
"""

from __future__ import annotations

import copy

import nbformat

from .exercise import grade_id, is_answer, meta


def _added_after(submission) -> tuple[dict, dict]:
    """The submission's answers by grade_id, and its untracked cells by the id before them."""
    answers, added = {}, {}
    anchor = None
    for cell in submission.cells:
        gid = grade_id(cell) if meta(cell) else None
        if gid is None:
            added.setdefault(anchor, []).append(cell)
            continue
        anchor = gid
        if is_answer(cell):
            answers[gid] = cell
    return answers, added


def merge(source, submission):
    """A new notebook: ``source``'s structure, the submission's answers and added cells.

    A missing answer cell is left empty, so its tests fail with a NameError-style
    reason rather than stopping the grading.
    """
    answers, added = _added_after(submission)
    cells = [copy.deepcopy(c) for c in added.get(None, [])]
    for cell in source.cells:
        gid = grade_id(cell)
        if is_answer(cell):
            mine = answers.get(gid)
            cell = copy.deepcopy(cell)
            cell.source = mine.source if mine is not None else ""
        else:
            cell = copy.deepcopy(cell)
        cells.append(cell)
        cells += [copy.deepcopy(c) for c in added.get(gid, [])] if gid else []
    merged = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(source.metadata))
    for cell in merged.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return merged
