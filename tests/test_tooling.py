"""The set-up tooling: uv's bootstrap picks the right wheel, and the README's example runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bootstrap_uv  # noqa: E402


@pytest.mark.parametrize(("system", "machine", "name", "ok"), [
    ("Linux", "x86_64", "uv-0.13.8-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True),
    ("Linux", "x86_64", "uv-0.13.8-py3-none-musllinux_1_1_x86_64.whl", False),
    ("Linux", "aarch64", "uv-0.13.8-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", True),
    ("Linux", "aarch64", "uv-0.13.8-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", False),
    ("Darwin", "arm64", "uv-0.13.8-py3-none-macosx_11_0_arm64.whl", True),
    ("Windows", "AMD64", "uv-0.13.8-py3-none-win_amd64.whl", True),
])
def test_bootstrap_picks_the_wheel_for_this_platform(monkeypatch, system, machine, name, ok):
    monkeypatch.setattr(bootstrap_uv.platform, "system", lambda: system)
    monkeypatch.setattr(bootstrap_uv.platform, "machine", lambda: machine)
    assert bootstrap_uv._wheel_matches(name) is ok


def test_readme_example_prints_what_it_claims(capsys):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## A taste\n+```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    claims = dict(re.findall(r"(\w+) = .*?# .*?-> (\[.*\])", block))
    for name, shown in claims.items():
        assert str(namespace[name].numpy()) == shown, name
