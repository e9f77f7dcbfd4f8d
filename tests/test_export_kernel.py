"""tools/export_html.py runs each lesson in a kernel that talks to it alone: over Unix sockets, so the
kernel's "running over TCP without encryption" warning (printed once per lesson by `make html`) does
not apply and is not printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys
sys.path.insert(0, {tools!r})
from pathlib import Path
import nbformat, export_html
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
export_html.execute(nb, Path({cwd!r}), 60)
print("OUTPUT", nb.cells[0].outputs[0]["text"].strip())
"""


@pytest.mark.skipif(os.name != "posix", reason="IPC kernels need Unix sockets")
def test_lessons_run_over_ipc_without_the_tcp_warning(tmp_path):
    code = SCRIPT.format(tools=str(ROOT / "tools"), cwd=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OUTPUT 42" in done.stdout
    assert "without encryption" not in done.stderr
    assert list(tmp_path.iterdir()) == [], "no socket or connection files left in the working folder"
