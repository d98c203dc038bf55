"""Why a test failed, in words a beginner understands.

The kernel process reports a failed cell as an exception name and message; the
grader turns that into a sentence that says what kind of mistake it is and what
to look at, keeping the tool's own message (which names the line, block and thread).

>>> explain("KernelTimeout", "spin line 4")
'the kernel never finished: spin line 4. Look for a loop whose condition never becomes false.'
>>> explain("AssertionError", "c[7]: expected 1.5, got 0.0")
'wrong result: c[7]: expected 1.5, got 0.0'
"""

from __future__ import annotations

import re

from ..i18n.messages import _

# the CUDA driver's words for sticky errors that lose the context, however they surface
CONTEXT_LOST = re.compile(r"illegal memory access|illegal address|unspecified launch failure|"
                          r"misaligned address|illegal instruction|context is destroyed", re.I)

# exception name -> (what happened, what to look at)
REASONS: dict[str, tuple[str, str]] = {
    "CompileError": ("the CUDA code does not compile", "Fix the first error nvcc reports."),
    "MemcheckError": (
        "out-of-bounds memory access (found by the memcheck)",
        "Does every thread check that its index is inside the array?",
    ),
    "RaceError": (
        "data race on shared memory (found by the racecheck)",
        "Is a __syncthreads() missing between writing shared memory and reading it?",
    ),
    "BarrierError": (
        "__syncthreads() was reached by only some threads of a block",
        "Keep __syncthreads() outside branches that depend on the thread.",
    ),
    "KernelTimeout": (
        "the kernel never finished",
        "Look for a loop whose condition never becomes false.",
    ),
    "KernelFaultError": (
        "the kernel crashed the GPU context (often an out-of-bounds address)",
        "Check every index against the array sizes.",
    ),
    "ArgumentError": ("the kernel was called with the wrong arguments", ""),
    "LaunchError": ("the launch was refused", "Check the grid, block and shared-memory sizes."),
    "UnsupportedError": (
        "the emulator cannot run a construct the kernel uses",
        "Use the constructs the labs use, or run on a GPU.",
    ),
    "NotImplementedError": ("not done yet", "Write your code where it says YOUR CODE HERE."),
    "NameError": (
        "something the test needs is not defined",
        "Keep the names the exercise gives, and run the cells above first.",
    ),
    "AssertionError": ("wrong result", ""),
    "CellTimeoutError": (
        "the cell did not finish within the time limit",
        "Look for a loop that never ends, or a launch far too large.",
    ),
    "DeadKernelError": (
        "the Python process running the notebook crashed",
        "A kernel may have corrupted memory; check every index.",
    ),
    "NotebookTimeout": ("the time limit for the whole notebook was reached before this test", ""),
    "ParticipantEnded": ("the process running your code ended", ""),
    "ParticipantTimeout": (
        "your code did not finish within the time limit",
        "Look for a loop that never ends, or a wait.",
    ),
    "MemoryError": ("your code ran out of memory", ""),
    "LimitExceeded": ("a limit of the grading sandbox was reached", ""),
    "WireError": ("your function returned something the grader cannot compare", ""),
    "HiddenTests": (
        "not graded here: this test has hidden parts, which run only in the grader's sandbox",
        "Its visible part passed.",
    ),
    "MissingCell": (
        "an answer cell is missing from the submission",
        "Start again from the exercise notebook, or restore the cell.",
    ),
}


def explain(ename: str, evalue: str) -> str:
    """One sentence: the kind of failure, the tool's message, and what to look at."""
    what, hint = REASONS.get(ename, (_("the test raised {name}").format(name=ename), ""))
    what, hint = _(what), _(hint)
    text = f"{what}: {evalue.strip()}" if evalue.strip() else what
    if hint:
        text = f"{text.rstrip('.。')}{'。' if _('.') == '。' else '. '}{hint}"
    return text
