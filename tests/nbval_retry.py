"""A pytest plugin for the labs under nbval: a kernel that dies while starting gets one more
start. With ``-n 2`` two kernels start at once; one that dies before it answers
``kernel_info`` would fail every cell of its notebook (it happened once, session 11), and a
second start is what a person would do. The kernels run the labs with this folder taken off
``PYTHONPATH`` (it is there only so that pytest finds this plugin).

    PYTHONPATH=tests python -m pytest -p nbval_retry --nbval labs
"""

from __future__ import annotations

import logging
import os

import nbval.kernel

_start = nbval.kernel.start_new_kernel
HERE = os.path.dirname(os.path.abspath(__file__))


def kernel_env(environ=None) -> dict:
    """``environ`` (default: this process's) without this folder on ``PYTHONPATH``.

    >>> kernel_env({"PYTHONPATH": os.pathsep.join([HERE, "/x"]), "A": "1"})
    {'PYTHONPATH': '/x', 'A': '1'}
    """
    env = dict(os.environ if environ is None else environ)
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.abspath(p) != HERE]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


def start_with_retry(*args, start=None, **kwargs):
    """``nbval.kernel.start_new_kernel``, tried twice when the kernel dies on start."""
    start = start or _start
    kwargs.setdefault("env", kernel_env())
    try:
        return start(*args, **kwargs)
    except RuntimeError as exc:
        logging.getLogger("nbval").warning("kernel start failed (%s); starting it again", exc)
        return start(*args, **kwargs)


nbval.kernel.start_new_kernel = start_with_retry
