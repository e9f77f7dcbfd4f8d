"""The Binder setup in binder/: what repo2docker would build, and what postBuild writes.

`jupyter-repo2docker --no-build --debug .` prints the Dockerfile it would build, without Docker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
VENV_BIN = Path(sys.executable).parent
START_URL = "/lab/tree/lessons/00_start_here.ipynb"


@pytest.fixture(scope="module")
def dockerfile() -> str:
    """The Dockerfile repo2docker generates for this repository."""
    try:
        import repo2docker  # noqa: F401
    except ImportError:
        pytest.skip("jupyter-repo2docker is not installed (it is in the dev dependency group)")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "repo2docker", "--no-build", "--debug", "."],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"jupyter-repo2docker could not run here: {exc}")
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or "FROM " not in out:
        pytest.skip(f"jupyter-repo2docker could not run here (exit {proc.returncode}):\n{out[-2000:]}")
    return out


def test_binder_files():
    requirements = [
        line.strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert requirements == ["-e .[lessons]"], "binder/requirements.txt should install the repo root"
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable"
    assert post_build.read_text().startswith("#!")
    # environment.yml would make repo2docker ignore requirements.txt.
    assert not (BINDER / "environment.yml").exists()


def test_dockerfile_installs_requirements_after_copying_the_repo(dockerfile):
    install = 'pip install --no-cache-dir -r "binder/requirements.txt"'
    copy_repo = "COPY --chown=0:0 src/ ${REPO_DIR}/"
    assert install in dockerfile
    assert copy_repo in dockerfile
    # "-e ." needs the whole repository in the image before pip runs.
    assert dockerfile.index(copy_repo) < dockerfile.index(install)


def test_dockerfile_uses_python_311_and_runs_post_build(dockerfile):
    assert "python=3.11" in dockerfile or "py-3.11" in dockerfile
    assert "./binder/postBuild" in dockerfile
    # postBuild runs after the requirements are installed: it imports jupyterlab.
    assert dockerfile.index('-r "binder/requirements.txt"') < dockerfile.index("./binder/postBuild")


def _schema_properties(plugin_id: str) -> dict:
    """The settings a JupyterLab plugin declares, from the schemas installed in this environment."""
    package, plugin = plugin_id.split(":")
    prefix = Path(sys.prefix) / "share" / "jupyter"
    candidates = [
        prefix / "lab" / "schemas" / package / f"{plugin}.json",
        prefix / "labextensions" / package / "schemas" / package / f"{plugin}.json",
    ]
    for path in candidates:
        if path.exists():
            return json.loads(path.read_text())["properties"]
    pytest.skip(f"no installed schema for {plugin_id} (is the lessons extra installed?)")


def test_post_build_writes_settings_and_landing_page(tmp_path):
    pytest.importorskip("jupyterlab")
    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "JUPYTERLAB_DIR": str(tmp_path / "app"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
    }
    # postBuild merges into what is already there rather than replacing it.
    overrides_file = tmp_path / "app" / "settings" / "overrides.json"
    overrides_file.parent.mkdir(parents=True)
    overrides_file.write_text('{"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}')
    subprocess.run([sys.executable, str(BINDER / "postBuild")], cwd=ROOT, env=env, check=True)

    overrides = json.loads(overrides_file.read_text())
    assert overrides.pop("@jupyterlab/apputils-extension:themes") == {"theme": "JupyterLab Dark"}
    assert overrides["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
    assert overrides["@jupyterlab/apputils-extension:notification"] == {
        "fetchNews": "false",
        "checkForUpdates": False,
    }
    # Every overridden setting exists in the installed schemas (a typo would be silently ignored).
    for plugin_id, settings in overrides.items():
        assert set(settings) <= set(_schema_properties(plugin_id)), plugin_id

    server_config = json.loads((tmp_path / "config" / "jupyter_server_config.json").read_text())
    assert server_config["LabApp"]["default_url"] == START_URL
    assert server_config["ServerApp"]["default_url"] == START_URL
    assert (ROOT / START_URL.removeprefix("/lab/tree/")).exists()
