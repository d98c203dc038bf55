"""cudakit's nbgrader course: the course folder, nbgrader's generate_assignment with cudakit's
skeletons (compared with exercises/), autograde with the cudakit grader into the gradebook,
and the GPU pool of the hub (with nvidia-smi listings from tests/course/fixtures)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

from cudakit.cli import main
from cudakit.course.build import KEPT, build_course
from cudakit.course.gpus import GpuPool, Unit, discover, parse_listing
from cudakit.errors import ExerciseFormatError
from cudakit.grading import NotebookResult, TestResult
from cudakit.grading.exercise import grade_id, is_answer

nbgrader = pytest.importorskip("nbgrader")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.apps import NbGraderAPI  # noqa: E402
from nbgrader.utils import determine_grade  # noqa: E402
from traitlets.config import Config  # noqa: E402

from cudakit.course.preprocessors import configure, record  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


# -- the course folder -----------------------------------------------------------------------

def test_course_has_one_assignment_per_solution_and_a_config(tmp_path):
    report = build_course(ROOT / "solutions", tmp_path / "c", "cuda101", exchange=tmp_path / "x")
    assert report.written == [p.stem for p in SOLUTIONS] and report.config == "written"
    for path in SOLUTIONS:
        copy = tmp_path / "c" / "source" / path.stem / path.name
        assert nbformat.read(copy, as_version=4) == nbformat.read(path, as_version=4)
    config = (tmp_path / "c" / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'cuda101'" in config
    assert f"c.Exchange.root = {str(tmp_path / 'x')!r}" in config
    again = build_course(ROOT / "solutions", tmp_path / "c", "cuda101", exchange=tmp_path / "x")
    assert again.written == [] and again.config == "unchanged"


def test_course_keeps_an_edited_config_and_refuses_bad_input(tmp_path):
    build_course(ROOT / "solutions", tmp_path / "c", "cuda101", only=["01_first_kernel"])
    config = tmp_path / "c" / "nbgrader_config.py"
    config.write_text(config.read_text() + "c.CudakitGrade.backend = 'emu'\n")
    edited = config.read_text()
    assert build_course(ROOT / "solutions", tmp_path / "c", "cuda101").config == KEPT
    assert config.read_text() == edited
    with pytest.raises(ValueError, match="course id"):
        build_course(ROOT / "solutions", tmp_path / "d", "cuda 101")
    with pytest.raises(ExerciseFormatError, match="99_missing"):
        build_course(ROOT / "solutions", tmp_path / "d", "cuda101", only=["99_missing"])


def test_cudakit_course_command(tmp_path, capsys):
    assert main(["course", str(tmp_path / "c"), "--course-id", "cuda101",
                 "--only", "02_pitch_2d"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "source/02_pitch_2d: written", "nbgrader_config.py: written"]
    assert main(["course", str(tmp_path / "c"), "--course-id", "bad id"]) == 1
    assert "course id 'bad id'" in capsys.readouterr().err


# -- nbgrader's own steps --------------------------------------------------------------------

@pytest.fixture(autouse=True)
def scripts_on_path(monkeypatch):
    """nbgrader runs ``alembic`` from PATH; `make test` does not put .venv/bin there."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _api(course: Path) -> NbGraderAPI:
    c = configure(Config())
    c.CourseDirectory.root = str(course)
    c.CourseDirectory.course_id = "cuda101"
    return NbGraderAPI(config=c)


def test_generate_assignment_releases_what_exercises_holds(tmp_path):
    """nbgrader's generate_assignment with ClearCudaSolutions gives every exercise the cells of
    exercises/ (cudakit's skeletons: compiling kernels, not Python stubs)."""
    course = tmp_path / "c"
    build_course(ROOT / "solutions", course, "cuda101")
    api = _api(course)
    for path in SOLUTIONS:
        result = api.generate_assignment(path.stem)
        assert result["success"], result["log"] + result.get("error", "")
        released = nbformat.read(course / "release" / path.stem / path.name, as_version=4)
        student = nbformat.read(ROOT / "exercises" / path.name, as_version=4)
        assert [c.source for c in released.cells] == [c.source for c in student.cells], path.name
        for cell in released.cells:
            if cell.source.startswith("%%cuda"):
                assert "NotImplementedError" not in cell.source, (path.name, grade_id(cell))


def test_nbgraders_stock_step_would_break_the_kernels(tmp_path):
    """Without configure(), nbgrader puts its Python stub into %%cuda cells: the reason for
    ClearCudaSolutions."""
    course = tmp_path / "c"
    build_course(ROOT / "solutions", course, "cuda101", only=["01_first_kernel"])
    c = Config()
    c.CourseDirectory.root = str(course)
    assert NbGraderAPI(config=c).generate_assignment("01_first_kernel")["success"]
    released = nbformat.read(course / "release/01_first_kernel/01_first_kernel.ipynb", 4)
    kernel = next(c.source for c in released.cells if c.source.startswith("%%cuda"))
    assert "raise NotImplementedError()" in kernel


def test_recorded_outputs_give_nbgraders_score():
    """nbgrader's determine_grade reads the grader's scores back from the recorded outputs."""
    from cudakit.grading.exercise import graded_cell

    nb = nbformat.v4.new_notebook(cells=[graded_cell("pass", f"t{i}", points=2)
                                         for i in range(3)])
    record(nb, NotebookResult("x", [TestResult("t0", 2.0, 2.0, "passed"),
                                    TestResult("t1", 0.5, 2.0, "half"),
                                    TestResult("t2", 0.0, 2.0, "wrong result: c[3]")]))
    assert [determine_grade(c)[0] for c in nb.cells] == [2.0, 0.5, 0.0]
    assert nb.cells[2].outputs[0].evalue == "wrong result: c[3]"


def html_text(html: str) -> str:
    """The text of an HTML page (tags removed, entities decoded)."""
    import html as entities
    import re

    return entities.unescape(re.sub(r"<[^>]+>", "", html))


def _submit(course: Path, student: str, answers: dict[str, str]) -> None:
    released = nbformat.read(course / "release/01_first_kernel/01_first_kernel.ipynb", 4)
    for cell in released.cells:
        if is_answer(cell) and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    folder = course / "submitted" / student / "01_first_kernel"
    folder.mkdir(parents=True)
    nbformat.write(released, folder / "01_first_kernel.ipynb")


@pytest.mark.slow
def test_autograde_puts_the_cudakit_scores_into_the_gradebook(tmp_path):
    course = tmp_path / "c"
    build_course(ROOT / "solutions", course, "cuda101", only=["01_first_kernel"])
    api = _api(course)
    assert api.generate_assignment("01_first_kernel")["success"]
    solution = nbformat.read(ROOT / "solutions/01_first_kernel.ipynb", as_version=4)
    right = {grade_id(c): "\n".join(line for line in c.source.splitlines()
                                    if "SOLUTION" not in line)
             for c in solution.cells if is_answer(c)}
    wrong = dict(right, gpu_add=right["gpu_add"].replace("(n + BLOCK - 1) // BLOCK", "n // BLOCK"))
    _submit(course, "ann", right)
    _submit(course, "bob", wrong)
    _submit(course, "cho", {})  # the untouched exercise
    for student in ("ann", "bob", "cho"):
        result = api.autograde("01_first_kernel", student, create=True)
        assert result["success"], result["log"] + result.get("error", "")
        assert "cudakit grade" in result["log"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "cuda101") as gradebook:
        scores = {s: gradebook.find_submission("01_first_kernel", s).score
                  for s in ("ann", "bob", "cho")}
        bob = gradebook.find_submission_notebook("01_first_kernel", "01_first_kernel", "bob")
        failed = {g.name: g.auto_score for g in bob.grades}
    assert scores == {"ann": 8.0, "bob": 5.0, "cho": 0.0}
    assert failed == {"test_kernel": 2.0, "test_kernel_sizes": 3.0, "test_gpu_add": 0.0}
    graded = nbformat.read(course / "autograded/bob/01_first_kernel/01_first_kernel.ipynb", 4)
    test = next(c for c in graded.cells if grade_id(c) == "test_gpu_add")
    assert test.outputs[0].output_type == "error" and "gpu_add" in test.outputs[0].evalue
    # feedback: the score and the grader's reason, not the hidden tests
    assert api.generate_feedback("01_first_kernel", "bob")["success"]
    html = (course / "feedback/bob/01_first_kernel/01_first_kernel.html").read_text()
    text = html_text(html)
    assert "Score: 5.0 / 8.0" in text and test.outputs[0].evalue[:40] in text
    assert "checks.sizes(" in test.source  # a hidden test, there when grading ...
    assert "checks.sizes(" not in text and "HIDDEN TESTS" not in text  # ... not in the feedback


# -- the hub's GPU pool ------------------------------------------------------------------------

def test_h100_listing_is_one_whole_gpu():
    units = parse_listing((FIXTURES / "h100_nvidia-smi-L.txt").read_text())
    assert units == [Unit(0, "GPU-3f531044-2ccf-2e12-2684-75ffdcb43a3d", "NVIDIA H100 80GB HBM3")]


def test_mig_listing_gives_the_instances_and_the_whole_gpu():
    units = parse_listing((FIXTURES / "a100_mig_nvidia-smi-L.txt").read_text())
    assert [(u.gpu, u.mig) for u in units] == [(0, True), (0, True), (1, False)]
    assert units[0].name == "NVIDIA A100-SXM4-40GB MIG 3g.20gb"


def test_pool_shares_round_robin_and_reuses_freed_units():
    pool = GpuPool(parse_listing((FIXTURES / "a100_mig_nvidia-smi-L.txt").read_text()))
    first = [pool.acquire(f"u{i}") for i in range(6)]
    assert [pool.load(u) for u in pool.units] == [2, 2, 2]
    assert first[:3] == first[3:] == pool.units
    assert pool.acquire("u0") is first[0]  # a server asking again keeps its unit
    pool.release("u4")
    assert pool.acquire("new") is first[4]
    assert GpuPool([]).acquire("u0") is None


def test_discover_runs_nvidia_smi_and_survives_its_absence(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n[ \"$1\" = -L ] && cat {FIXTURES / 'h100_nvidia-smi-L.txt'}\n")
    smi.chmod(0o755)
    assert [u.gpu for u in discover(str(smi))] == [0]
    assert discover(str(smi), visible="1") == []
    assert discover(str(tmp_path / "missing")) == []
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    failing.chmod(0o755)
    assert discover(str(failing)) == []


def test_doctests_of_the_course_modules():
    import doctest
    import importlib

    for name in ("build", "cli", "gpus", "preprocessors"):
        module = importlib.import_module(f"cudakit.course.{name}")
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, name
