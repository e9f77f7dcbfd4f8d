"""Fixtures for the real-browser tests: a JupyterLab server and Debian's Chromium via Playwright.

Every test in tests/browser/ is marked ``browser``, and skipped (with the reason) when
/usr/bin/chromium or the playwright package is missing; with GRADLAB_REQUIRE_BROWSER=1 (set by
.ci/run) those tests fail instead of skipping.

* ``jupyter_server`` (session): ``jupyter lab`` on a free port with a random token, serving a copy of
  lessons/ from a temporary root, with temporary config, data, runtime, workspace and settings
  folders. Stopped at the end of the session by its process group, whatever happened.
* ``browser`` (session): Chromium launched by Playwright (never ``playwright install``).
* ``page``: a fresh page in its own browser context, for anything that is not JupyterLab.
* ``lab_page``: the same, logged in to ``jupyter_server``; relative URLs resolve against the
  server. Its kernels are shut down after the test. A failing test leaves a screenshot in
  artifacts/screenshots/FAILED-<test>.png.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import ROOT, screenshot

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1400, "height": 900}
SERVER_START_TIMEOUT_S = 90
# On top of binder/overrides.json (the settings Binder users get): never autosave, so a test
# cannot write outputs into a notebook.
TEST_OVERRIDES = {"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}


def _unavailable() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"Debian Chromium is not installed at {CHROMIUM} (as root: make browser-deps)"
    for module, package in (("playwright.sync_api", "playwright"), ("jupyterlab", "jupyterlab")):
        try:
            __import__(module)
        except ImportError:
            return f"the Python package {package} is not installed (make test installs it)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _unavailable()
    required = os.environ.get("GRADLAB_REQUIRE_BROWSER") == "1"
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)
            if reason and not required:
                item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {reason}"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    setattr(item, f"report_{report.when}", report)  # lets fixtures see whether the test failed
    return report


@dataclass
class JupyterServer:
    """A running JupyterLab server."""

    url: str  # http://127.0.0.1:<port>/
    token: str
    root_dir: Path  # what the server serves: a copy of lessons/ in root_dir/lessons
    log_path: Path
    process: subprocess.Popen

    def api(self, method: str, path: str) -> Any:
        """Call the server's REST API (e.g. ``api("GET", "api/sessions")``); return the JSON reply."""
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Close every session and kernel (what a test's notebooks started)."""
        for session in self.api("GET", "api/sessions"):
            self.api("DELETE", f"api/sessions/{session['id']}")
        for kernel in self.api("GET", "api/kernels"):
            self.api("DELETE", f"api/kernels/{kernel['id']}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """Stop the server's whole process group: SIGTERM (it shuts its kernels down), then SIGKILL."""
    if process.poll() is not None:
        return
    for sig, grace_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_until_ready(server: JupyterServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with code {server.process.returncode}:\n"
                + server.log_path.read_text(errors="replace")[-4000:]
            )
        try:
            server.api("GET", "api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise RuntimeError(
        f"jupyter lab did not answer /api/status within {SERVER_START_TIMEOUT_S} s:\n"
        + server.log_path.read_text(errors="replace")[-4000:]
    )


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    if reason := _unavailable():
        pytest.fail(f"GRADLAB_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    tmp = tmp_path_factory.mktemp("jupyter")
    root = tmp / "root"
    shutil.copytree(ROOT / "lessons", root / "lessons", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    dirs = {
        name: tmp / name for name in ("config", "data", "runtime", "ipython", "workspaces", "user-settings")
    }
    app_settings = tmp / "app-settings"
    for path in [*dirs.values(), app_settings]:
        path.mkdir()
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text()) | TEST_OVERRIDES
    (app_settings / "overrides.json").write_text(json.dumps(overrides, indent=2))

    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
        f"--LabApp.user_settings_dir={dirs['user-settings']}",
        f"--LabApp.app_settings_dir={app_settings}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
    }
    log_path = tmp / "jupyter-server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = JupyterServer(f"http://127.0.0.1:{port}/", token, root, log_path, process)
    try:
        _wait_until_ready(server)
        yield server
    finally:
        _stop(process)
        artifacts = ROOT / "artifacts"
        artifacts.mkdir(exist_ok=True)
        shutil.copy(log_path, artifacts / "jupyter-server.log")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if reason := _unavailable():
        pytest.fail(f"GRADLAB_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def _screenshot_if_failed(page: Any, request: pytest.FixtureRequest) -> None:
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        screenshot(page, f"FAILED-{request.node.name}")


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        yield page
        _screenshot_if_failed(page, request)
    finally:
        context.close()


@pytest.fixture
def lab_page(browser: Any, jupyter_server: JupyterServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT, base_url=jupyter_server.url)
    # Log in once: the server answers a request carrying the token with a login cookie, which the
    # context's pages share.
    context.request.get(f"lab?token={jupyter_server.token}")
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        yield page
        _screenshot_if_failed(page, request)
    finally:
        context.close()
        jupyter_server.shutdown_kernels()


@pytest.fixture(scope="session")
def course_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course website (`make html`: tools/build_site.py, Sphinx + myst-nb, every lesson executed),
    built once per test session into a temporary folder and shared by the tests that open it.
    GRADLAB_SITE=folder uses a site already built there instead (to iterate on these tests)."""
    if prebuilt := os.environ.get("GRADLAB_SITE"):
        return Path(prebuilt)
    sys.path.insert(0, str(ROOT / "tools"))
    from page_assets import unavailable  # (tools/ is not a package)

    if reason := unavailable():
        pytest.skip(f"cannot build the course site here: {reason}")
    out = tmp_path_factory.mktemp("course-site")
    env = {**os.environ, "GRADLAB_REPOSITORY_URL": "https://github.com/gradlab-tests/gradlab"}
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_site.py"), "--out", str(out / "site"),
                    "--src", str(out / "src")], check=True, timeout=2400, env=env)
    return out / "site"
