"""The CLI leaves without the interpreter's teardown only when nothing waits for the exit: its output is
flushed first, and an atexit hook or another thread keeps the ordinary exit."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)


def test_it_leaves_with_the_code_after_flushing_its_output():
    p = _python(
        "import sys\nfrom migrate.cli import _leave\n"
        "print('out', end='')\nprint('err', end='', file=sys.stderr)\n_leave(5)\nprint('not reached')"
    )
    assert (p.returncode, p.stdout, p.stderr) == (5, "out", "err")


def test_an_atexit_hook_keeps_the_ordinary_exit():
    p = _python(
        "import atexit\nfrom migrate.cli import _leave\n"
        "atexit.register(lambda: print('hook ran'))\n_leave(5)\nprint('returned')"
    )
    assert (p.returncode, p.stdout) == (0, "returned\nhook ran\n")


def test_another_thread_keeps_the_ordinary_exit():
    p = _python(
        "import threading, time\nfrom migrate.cli import _leave\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
        "_leave(5)\nprint('returned')"
    )
    assert (p.returncode, p.stdout) == (0, "returned\nthread done\n")


def test_main_called_with_arguments_never_leaves(capsys):
    from migrate.cli import main

    assert main(["rule", "MPS001"]) == 0  # a caller in this process gets the code back
    assert "MPS001" in capsys.readouterr().out


def test_a_process_started_without_stdout_exits_cleanly():
    import os

    p = subprocess.run(
        [sys.executable, "-m", "migrate", "rule", "MPS001"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        timeout=60,
        preexec_fn=lambda: os.close(1),  # the CLI starts with sys.stdout None
    )
    assert (p.returncode, p.stderr) == (0, "")
