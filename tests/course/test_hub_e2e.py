"""A class on JupyterHub + nbgrader, end to end, with real components on localhost.

Three Unix users made here (an instructor, two participants, PAM passwords), the hub of
deploy/jupyterhub_config.py with configurable-http-proxy from npm, nbgrader's exchange,
and Debian's Chromium through Playwright:

instructor: ``cudakit course``, generate_assignment, release_assignment (commands as that user)
participants: log in, fetch in JupyterLab's assignment list, answer (1 right, 2 wrong), submit
             (participant 1 runs the notebook in their server first: cudakit works there)
instructor: collect, autograde (the cudakit grader), formgrader, generate/release feedback, export
participants: fetch feedback and read their scores

and checks that participants cannot read each other's work or the instructor's source/, that
the hub gave each server its own GPU (a MIG listing from tests/course/fixtures) and hid
nbgrader's instructor tools from participants, and that the exported grades are 8/8 and 5/8.
Screenshots go to test-output/hub/. Users, groups, files and processes are removed afterwards,
also when the test fails.

The users run this environment's own Python. Where it sits in a folder they cannot enter
(pyenv under /root, as on the CI image), the test lets other users pass through that folder
(o+x: enter, not list) while it runs, and restores the folder's mode afterwards.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
SHOTS = ROOT / "test-output" / "hub"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
ASSIGNMENT = "01_first_kernel"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
COURSE = "cuda101"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


def _run(cmd, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{cmd} failed ({result.returncode}):\n{result.stdout}\n"
                             f"{result.stderr}"[-4000:])
    return result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _requirements() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: creates Unix users and runs JupyterHub as root")
    for tool in ("useradd", "runuser", "chpasswd"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is missing")
    if not (shutil.which("configurable-http-proxy") and Path(CHROMIUM).exists()):
        subprocess.run([str(ROOT / "tools" / "install-system-deps")], check=False)
    if not shutil.which("configurable-http-proxy"):
        pytest.fail("configurable-http-proxy is missing: run tools/install-system-deps")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run tools/install-system-deps")
    pytest.importorskip("nbgrader")
    pytest.importorskip("jupyterhub")


class Users:
    """Unix users and groups made for one test; ``remove`` ends their processes and deletes them."""

    def __init__(self):
        tag = secrets.token_hex(3)
        self.names = {"instructor": f"ckt{tag}i", "p1": f"ckt{tag}a", "p2": f"ckt{tag}b"}
        self.groups = {"students": f"ckt{tag}s", "instructors": f"ckt{tag}t"}
        self.passwords = {role: secrets.token_urlsafe(12) for role in self.names}
        self.made_users: list[str] = []
        self.made_groups: list[str] = []

    def create(self) -> None:
        for group in self.groups.values():
            _run(["groupadd", group])
            self.made_groups.append(group)
        for role, name in self.names.items():
            group = self.groups["instructors" if role == "instructor" else "students"]
            # private home folders, as deploy/INSTRUCTORS.md asks
            _run(["useradd", "--create-home", "--key", "HOME_MODE=0700", "--shell", "/bin/bash",
                  "--groups", group, name])
            self.made_users.append(name)
            _run(["chpasswd"], input=f"{name}:{self.passwords[role]}\n")

    def home(self, role: str) -> Path:
        return Path(pwd.getpwnam(self.names[role]).pw_dir)

    def kill_processes(self) -> None:
        uids = {pwd.getpwnam(name).pw_uid for name in self.made_users}
        for proc in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError):
                if proc.name.isdigit() and proc.stat().st_uid in uids:
                    os.kill(int(proc.name), signal.SIGKILL)

    def remove(self) -> None:
        self.kill_processes()
        time.sleep(0.2)
        for name in self.made_users:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for group in self.made_groups:
            subprocess.run(["groupdel", group], capture_output=True)


def _as_user(users: Users, role: str, cmd: list[str], env: dict, cwd=None, check=True,
             input=None):
    name = users.names[role]
    home = users.home(role)
    full = ["runuser", "-u", name, "--", "env", f"HOME={home}", f"USER={name}",
            *[f"{k}={v}" for k, v in env.items()], *cmd]
    if check:
        return _run(full, cwd=cwd or home, input=input)
    return subprocess.run(full, cwd=cwd or home, capture_output=True, text=True, input=input)


def _closed_folders() -> list[Path]:
    """Folders on the way to this environment's Python and packages that other users cannot
    enter (pyenv's Python in /root on the CI image: its RUNPATH names that folder)."""
    targets = [Path(os.path.realpath(sys.executable)), Path(sys.prefix).resolve(), ROOT]
    closed = set()
    for target in targets:
        for folder in target.parents:
            if not folder.stat().st_mode & stat.S_IXOTH:
                closed.add(folder)
    return sorted(closed)


@contextlib.contextmanager
def _traversable(folders: list[Path]):
    """Let other users pass through ``folders`` (o+x: enter, not list) while the test runs."""
    modes = {folder: folder.stat().st_mode for folder in folders}
    try:
        for folder, mode in modes.items():
            folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
        yield
    finally:
        for folder, mode in modes.items():
            folder.chmod(stat.S_IMODE(mode))


@pytest.fixture
def course_machine():
    """Users, a course environment they can run, the exchange and a running hub."""
    _requirements()
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    _mark("start")
    root = Path(tempfile.mkdtemp(prefix="cudakit-hub-", dir="/tmp"))
    root.chmod(0o755)
    users = Users()
    hub = None
    log = None
    stack = contextlib.ExitStack()
    try:
        users.create()
        exchange = root / "exchange"
        exchange.mkdir()
        exchange.chmod(0o777)  # nbgrader's exchange, as its docs ask
        config = root / "etc" / "jupyter"  # stands for /etc/jupyter on the course machine
        config.mkdir(parents=True)
        (config / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\n"
            f"c.Exchange.root = {str(exchange)!r}\n")
        (config / "jupyter_server_config.py").write_text(
            "c = get_config()\nc.LabApp.expose_app_in_browser = True  # for the test's checks\n")
        for part in (root / "etc", config):
            part.chmod(0o755)
        pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        user_env = {"PYTHONPATH": pythonpath, "JUPYTER_CONFIG_PATH": str(config),
                    # this environment's scripts first (nbgrader runs alembic from PATH)
                    "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        stack.enter_context(_traversable(_closed_folders()))
        python = sys.executable
        probe = _as_user(users, "p1", [python, "-c", "import cudakit, nbgrader, jupyterhub"],
                         user_env, check=False)
        if probe.returncode != 0:
            pytest.fail(f"the test users cannot run {python} with cudakit: {probe.stderr[-2000:]}")
        smi = root / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\ncat {FIXTURES / 'a100_mig_nvidia-smi-L.txt'}\n")
        smi.chmod(0o755)
        state = root / "hub"
        port = _free_port()
        hub_env = dict(os.environ, **user_env,
                       CUDAKIT_HUB_BIND_URL=f"http://127.0.0.1:{port}",
                       CUDAKIT_HUB_STATE=str(state), CUDAKIT_HUB_PYTHON=python,
                       CUDAKIT_HUB_STUDENTS=users.groups["students"],
                       CUDAKIT_HUB_INSTRUCTORS=users.groups["instructors"],
                       CUDAKIT_HUB_MEM_LIMIT="2G", CUDAKIT_HUB_CPU_LIMIT="1",
                       CUDAKIT_HUB_SPAWNER="local", CUDAKIT_NVIDIA_SMI=str(smi))
        hub_env.pop("CUDA_VISIBLE_DEVICES", None)
        state.mkdir(mode=0o700)
        log = open(root / "jupyterhub.log", "w")  # noqa: SIM115 - closed below
        hub = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(ROOT / "deploy/jupyterhub_config.py")],
            cwd=state, env=hub_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/hub/health", timeout=2)
                break
            except OSError:
                if hub.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterHub did not start:\n" +
                                (root / "jupyterhub.log").read_text()[-4000:])
                time.sleep(0.5)
        _mark("hub running")
        yield {"url": url, "users": users, "exchange": exchange, "python": python,
               "env": user_env}
    finally:
        if hub is not None:
            hub.send_signal(signal.SIGTERM)  # the hub stops the proxy and every server
            try:
                hub.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(hub.pid, signal.SIGKILL)
                hub.wait()
            proxy = root / "hub" / "jupyterhub-proxy.pid"  # left only if the hub could not stop it
            if proxy.is_file():
                with contextlib.suppress(ValueError, ProcessLookupError):
                    os.kill(int(proxy.read_text()), signal.SIGKILL)
            if log is not None:
                log.close()
                keep = SHOTS / "jupyterhub.log"
                keep.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(root / "jupyterhub.log", keep)
        users.remove()
        stack.close()
        shutil.rmtree(root, ignore_errors=True)


# -- the participants' side, in the browser --------------------------------------------------

LAB_READY = "() => !!(window.jupyterapp && document.querySelector('.jp-LabShell'))"

SET_ANSWERS = """(answers) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = panel.content.model.cells;
    let done = 0;
    for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        const nbgrader = cell.getMetadata('nbgrader');
        if (nbgrader && nbgrader.grade_id in answers) {
            cell.sharedModel.setSource(answers[nbgrader.grade_id]);
            done++;
        }
    }
    return done;
}"""


START = time.monotonic()  # reset by _mark("start")


RUN_ALL = """async () => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    await panel.sessionContext.ready;
    await app.commands.execute('notebook:run-all-cells');
}"""

# after a run: the error outputs, and the text the test cells printed
RESULTS = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
    const errors = [], printed = [];
    for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.type !== 'code') continue;
        if (cell.executionCount === null) return null;  // not run yet
        for (let j = 0; j < cell.outputs.length; j++) {
            const o = cell.outputs.get(j).toJSON();
            if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
            if (o.output_type === 'stream') printed.push(String(o.text));
        }
    }
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    return kernel.status === 'idle' ? {errors, printed: printed.join('')} : null;
}"""


def _shot(page, name: str) -> None:
    """A screenshot of this step, and its time since the test began in timeline.txt."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    _mark(name)


def _mark(step: str) -> None:
    global START
    if step == "start":
        START = time.monotonic()
    with open(SHOTS / "timeline.txt", "a") as f:
        f.write(f"{time.monotonic() - START:7.1f} s  {step}\n")


def _login(browser, url: str, name: str, password: str):
    """A page that has logged in at the hub's form; the hub then starts the user's server."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    return page


def _assignment_list(page):
    page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-assignment-list')")
    page.wait_for_selector("#released_assignments_list, #fetched_assignments_list")
    return page


def _fetch_and_answer(page, answers: dict[str, str], role: str, run: bool = False) -> None:
    """Fetch, answer and submit; with ``run``, first run every cell in the server's kernel."""
    _assignment_list(page)
    row = page.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
    row.wait_for(timeout=30_000)
    _shot(page, f"{role}-1-released")
    row.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
    fetched.first.wait_for(timeout=30_000)
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})",
                  NOTEBOOK)
    page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget;"
                           " return w && w.context && w.context.path.endsWith('.ipynb')"
                           " && w.content.model && w.content.model.cells.length > 3; }",
                           timeout=30_000)
    assert page.evaluate(SET_ANSWERS, answers) == len(answers)
    if run:  # cudakit works in the participant's server: the visible tests pass there
        page.evaluate(RUN_ALL)
        results = page.wait_for_function(RESULTS, timeout=180_000).json_value()
        _shot(page, f"{role}-2-ran")
        assert results["errors"] == [], results["errors"]
        assert "add_arrays, n = 1000: passed" in results["printed"], results["printed"]
        assert "gpu_add, n = 1000: passed" in results["printed"], results["printed"]
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    _shot(page, f"{role}-2-answered")
    _assignment_list(page)
    submit = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT).first
    submit.get_by_role("button", name="Submit").click()
    page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for(
        timeout=30_000)
    _shot(page, f"{role}-3-submitted")


def _fetch_feedback(page, url: str, name: str, role: str) -> str:
    """Fetch the released feedback in the assignment list; the feedback page's text."""
    _assignment_list(page)
    page.click("#refresh_assignments_list")
    row = page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).first
    button = row.get_by_role("button", name="Fetch Feedback")
    button.wait_for(timeout=30_000)
    button.click()
    page.get_by_text("(view feedback)").first.wait_for(timeout=30_000)
    _shot(page, f"{role}-4-feedback-fetched")
    listing = page.evaluate(
        "async (dir) => (await window.jupyterapp.serviceManager.contents.get(dir)).content"
        ".map(x => x.path)", f"{ASSIGNMENT}/feedback")
    assert len(listing) == 1, listing
    html = f"{listing[0]}/{ASSIGNMENT}.html"
    page.goto(f"{url}/user/{name}/files/{html}")
    _shot(page, f"{role}-5-feedback")
    return page.inner_text("body")


# -- the instructor's side, as nbgrader commands -----------------------------------------------

def _nbgrader(machine, *args: str) -> str:
    users = machine["users"]
    course = users.home("instructor") / COURSE
    log = _as_user(users, "instructor", [machine["python"], "-m", "nbgrader", *args],
                   machine["env"], cwd=course).stderr
    (SHOTS / f"nbgrader-{args[0]}.log").write_text(log)
    _mark(f"instructor: nbgrader {' '.join(args)}")
    return log


def _answers() -> tuple[dict[str, str], dict[str, str]]:
    """A right answer (the solution's code without markers) and a wrong one (too few blocks)."""
    solution = nbformat.read(ROOT / "solutions" / f"{ASSIGNMENT}.ipynb", as_version=4)
    right = {}
    for cell in solution.cells:
        data = cell.metadata.get("nbgrader", {})
        if data.get("solution"):
            right[data["grade_id"]] = "\n".join(
                line for line in cell.source.splitlines() if "SOLUTION" not in line)
    wrong = dict(right, gpu_add=right["gpu_add"].replace("(n + BLOCK - 1) // BLOCK", "n // BLOCK"))
    assert wrong["gpu_add"] != right["gpu_add"]
    return right, wrong


def _cannot_read(machine, role: str, path: Path) -> None:
    """``role`` is refused ``path`` (a file is read, a folder listed); root is not."""
    command = ["ls", str(path)] if path.is_dir() else ["cat", str(path)]
    assert subprocess.run(command, capture_output=True).returncode == 0, f"root cannot read {path}"
    denied = _as_user(machine["users"], role, command, {}, check=False)
    assert denied.returncode != 0 and "Permission denied" in denied.stderr, (role, path, denied)


def _server_env(users: Users, role: str) -> dict[str, str]:
    """The environment of the user's single-user server process, read from /proc."""
    uid = pwd.getpwnam(users.names[role]).pw_uid
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or proc.stat().st_uid != uid:
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if b"jupyterhub.singleuser" not in cmdline:
                continue
            pairs = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)
    raise AssertionError(f"no single-user server running for {role}")


def test_a_class_on_jupyterhub_with_nbgrader(course_machine):
    sync_api = pytest.importorskip("playwright.sync_api")
    machine = course_machine
    users, url = machine["users"], machine["url"]
    names = users.names
    course = users.home("instructor") / COURSE

    right, wrong = _answers()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        pages = {}
        try:
            # instructor: the course from solutions/
            _as_user(users, "instructor",
                     [machine["python"], "-m", "cudakit", "course", str(course),
                      "--course-id", COURSE, "--exchange", str(machine["exchange"]),
                      "--solutions", str(ROOT / "solutions"), "--only", ASSIGNMENT],
                     machine["env"])
            # the instructor's own server finds the course for formgrader (INSTRUCTORS.md)
            _as_user(users, "instructor", ["sh", "-c", "mkdir -p ~/.jupyter && "
                                           "cat > ~/.jupyter/nbgrader_config.py"], {},
                     input=f"load_subconfig({str(course / 'nbgrader_config.py')!r})\n")
            # everyone logs in; the three servers start while the instructor releases
            # with nbgrader's generate_assignment and release_assignment
            for role in ("p1", "p2", "instructor"):
                pages[role] = _login(browser, url, names[role], users.passwords[role])

            _nbgrader(machine, "generate_assignment", ASSIGNMENT)
            released = nbformat.read(course / "release" / NOTEBOOK, as_version=4)
            kernel = next(c.source for c in released.cells if c.source.startswith("%%cuda"))
            assert "__global__ void add_arrays" in kernel
            assert "NotImplementedError" not in kernel
            _nbgrader(machine, "release_assignment", ASSIGNMENT)

            # participants: fetch, answer, submit
            for role, answers in (("p1", right), ("p2", wrong)):
                pages[role].wait_for_function(LAB_READY, timeout=120_000)
                _shot(pages[role], f"{role}-0-lab")
                _fetch_and_answer(pages[role], answers, role, run=role == "p1")

            # participants' JupyterLab lacks nbgrader's instructor tools, the instructor's has them
            tools = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment")
            plugins = {role: pages[role].evaluate(
                "(ids) => ids.map(id => window.jupyterapp.hasPlugin(id))", list(tools))
                for role in ("p1", "p2")}
            assert plugins == {"p1": [False, False], "p2": [False, False]}, plugins

            # each server got its own MIG instance, and the limits
            gpus = {role: _server_env(users, role) for role in ("p1", "p2")}
            assert gpus["p1"]["CUDA_VISIBLE_DEVICES"].startswith("MIG-")
            assert gpus["p1"]["CUDA_VISIBLE_DEVICES"] != gpus["p2"]["CUDA_VISIBLE_DEVICES"]
            assert gpus["p1"]["MEM_LIMIT"] == str(2 * 1024**3)
            assert gpus["p1"]["CPU_LIMIT"] == "1.0"

            # privacy: nobody reads another's work, the exchange inbox or the instructor's source
            _cannot_read(machine, "p2", users.home("p1") / NOTEBOOK)
            _cannot_read(machine, "p1", users.home("p2"))
            _cannot_read(machine, "p1", course / "source" / NOTEBOOK)
            _cannot_read(machine, "p2", machine["exchange"] / COURSE / "inbound")

            # instructor: collect, autograde with the cudakit grader, feedback, export
            _nbgrader(machine, "collect", ASSIGNMENT)
            log = _nbgrader(machine, "autograde", ASSIGNMENT)
            assert "cudakit grade" in log, log[-3000:]
            instructor = pages["instructor"]
            instructor.wait_for_function(LAB_READY, timeout=120_000)
            assert instructor.evaluate("(ids) => ids.map(id => window.jupyterapp.hasPlugin(id))",
                                       list(tools)) == [True, True]
            instructor.goto(f"{url}/user/{names['instructor']}/formgrader/gradebook/"
                            f"{ASSIGNMENT}/{ASSIGNMENT}")
            instructor.get_by_role("button", name="Show All Names").click()
            scores = {}
            for role in ("p1", "p2"):
                row = instructor.locator("tr", has_text=names[role])
                row.wait_for(timeout=30_000)
                scores[role] = row.inner_text()
            _shot(instructor, "instructor-1-formgrader")
            assert "8 / 8" in scores["p1"] and "5 / 8" in scores["p2"], scores
            _nbgrader(machine, "generate_feedback", ASSIGNMENT)
            _nbgrader(machine, "release_feedback", ASSIGNMENT)
            _nbgrader(machine, "export", "--to", str(course / "grades.csv"))

            # participants: their feedback, with their score
            feedback = {role: _fetch_feedback(pages[role], url, names[role], role)
                        for role in ("p1", "p2")}
            assert "Score: 8.0 / 8.0" in feedback["p1"].replace("\n", " "), feedback["p1"][:800]
            assert "Score: 5.0 / 8.0" in feedback["p2"].replace("\n", " "), feedback["p2"][:800]
            assert "wrong result" in feedback["p2"]
            assert not any("checks.sizes(" in text for text in feedback.values())  # hidden tests
        except BaseException:
            for role, page in pages.items():
                _shot(page, f"failed-{role}")
            raise
        finally:
            browser.close()

    with open(course / "grades.csv") as f:
        grades = {row["student_id"]: row for row in csv.DictReader(f)}
    shutil.copy(course / "grades.csv", SHOTS / "grades.csv")
    assert float(grades[names["p1"]]["score"]) == float(grades[names["p1"]]["max_score"]) == 8.0
    assert 0 < float(grades[names["p2"]]["score"]) < float(grades[names["p2"]]["max_score"])
    assert set(grades) == {names["p1"], names["p2"]}, json.dumps(grades)
