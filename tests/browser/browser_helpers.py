"""Helpers for real-browser tests of the lessons in JupyterLab (Playwright's sync API).

Each takes the Playwright ``page`` of the ``lab_page`` fixture (see conftest.py and README.md)::

    open_notebook(page, "lessons/04_inside_the_optimizer.ipynb")
    run_all(page)
    assert_no_errors(page)
    screenshot(page, "04-after-run-all")

They drive JupyterLab through ``window.jupyterapp`` (the server runs with
``--LabApp.expose_app_in_browser=True``) rather than through menus, and wait on JupyterLab's own
state (the notebook's context, its kernel's status, the cells' models) instead of sleeping.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
DEFAULT_TIMEOUT_MS = 60_000
RUN_ALL_TIMEOUT_MS = 600_000

_NOTEBOOK_OPEN = """(path) => {
  const widget = window.jupyterapp?.shell?.currentWidget;
  return !!(widget && widget.context && widget.context.path === path && widget.context.isReady
            && widget.content?.widgets?.length > 0);
}"""

_KERNEL_IDLE = """() => {
  const session = window.jupyterapp?.shell?.currentWidget?.sessionContext;
  const kernel = session?.session?.kernel;
  return !!(session && session.isReady && kernel && kernel.connectionStatus === 'connected'
            && kernel.status === 'idle');
}"""

_START_RUN_ALL = """() => {
  window.__gradlabRunAll = undefined;
  window.jupyterapp.commands.execute('notebook:run-all-cells')
    .then((ok) => { window.__gradlabRunAll = {ok: ok !== false}; })
    .catch((err) => { window.__gradlabRunAll = {ok: false, error: String(err)}; });
}"""

_CELLS = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  return notebook.widgets.map((cell, index) => {
    const code = cell.model.type === 'code';
    return {
      index,
      cell_type: cell.model.type,
      source: cell.model.sharedModel.getSource(),
      execution_count: code ? cell.model.executionCount : null,
      outputs: code ? cell.model.outputs.toJSON() : [],
    };
  });
}"""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def open_notebook(page: Any, path: str, timeout: float = DEFAULT_TIMEOUT_MS) -> None:
    """Open ``path`` (relative to the server's root, e.g. ``lessons/00_start_here.ipynb``).

    Opens it with ``?reset`` (no tabs restored from an earlier workspace) and returns once the
    notebook is the current widget and its kernel is connected and idle.
    """
    page.goto(f"lab/tree/{quote(path)}?reset")
    page.wait_for_function(_NOTEBOOK_OPEN, arg=path, timeout=timeout)
    wait_for_kernel_idle(page, timeout)


def wait_for_kernel_idle(page: Any, timeout: float = DEFAULT_TIMEOUT_MS) -> None:
    """Wait until the current notebook has a started, connected kernel that is idle.

    (The toolbar can read "Idle" before a kernel exists; this checks the session itself.)
    """
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout)


def run_all(page: Any, timeout: float = RUN_ALL_TIMEOUT_MS) -> bool:
    """Run all cells of the current notebook and wait until they finished and the kernel is idle.

    Returns JupyterLab's verdict: False when a cell raised (JupyterLab then stops running cells).
    """
    wait_for_kernel_idle(page)
    page.evaluate(_START_RUN_ALL)
    page.wait_for_function("() => window.__gradlabRunAll !== undefined", timeout=timeout)
    wait_for_kernel_idle(page, timeout)
    result = page.evaluate("() => window.__gradlabRunAll")
    assert "error" not in result, f"Run All failed in JupyterLab: {result['error']}"
    return result["ok"]


def cells(page: Any) -> list[dict[str, Any]]:
    """The current notebook's cells as JupyterLab holds them: index, cell_type, source,
    execution_count and outputs (nbformat JSON)."""
    return page.evaluate(_CELLS)


def error_outputs(page: Any) -> list[dict[str, Any]]:
    """Every output of type ``error`` in the current notebook, with its cell index."""
    return [
        {"cell": cell["index"], **output}
        for cell in cells(page)
        for output in cell["outputs"]
        if output["output_type"] == "error"
    ]


def assert_no_errors(page: Any) -> None:
    """Fail, showing each traceback, if any cell of the current notebook has an error output."""
    errors = error_outputs(page)
    report = "\n\n".join(
        f"cell {e['cell']}: {e['ename']}: {e['evalue']}\n" + _ANSI.sub("", "\n".join(e["traceback"]))
        for e in errors
    )
    assert not errors, f"{len(errors)} error output(s) in the notebook:\n{report}"


def output_text(page: Any) -> str:
    """All text the kernel printed or returned (streams and text/plain results), in cell order."""
    parts = []
    for cell in cells(page):
        for output in cell["outputs"]:
            if output["output_type"] == "stream":
                text = output["text"]
                parts.append(text if isinstance(text, str) else "".join(text))
            elif "text/plain" in output.get("data", {}):
                text = output["data"]["text/plain"]
                parts.append((text if isinstance(text, str) else "".join(text)) + "\n")
    return "".join(parts)


def wait_for_change(
    locator: Any, before: str | None, attribute: str = "src", timeout: float = DEFAULT_TIMEOUT_MS
) -> str:
    """Wait until ``locator``'s ``attribute`` differs from ``before``; return the new value.

    Use it after moving a slider: read the plot's ``src`` first, move, then wait for it to change
    before asserting or taking a screenshot. ``attribute=None`` compares the inner HTML instead.
    """
    handle = locator.element_handle(timeout=timeout)
    locator.page.wait_for_function(
        """([el, attribute, before]) =>
             (attribute === null ? el.innerHTML : el.getAttribute(attribute)) !== before""",
        arg=[handle, attribute, before],
        timeout=timeout,
    )
    return locator.inner_html() if attribute is None else locator.get_attribute(attribute)


def screenshot(page: Any, name: str) -> Path:
    """Save a PNG of the page as ``artifacts/screenshots/<name>.png`` and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    page.screenshot(path=str(path))
    return path


# ---- a widget's front end alone: no JupyterLab, no kernel --------------------------------------------

# A fake anywidget model over a plain object: get / set / on / save_changes (each save counted in
# window.__saves), what an exported page's widget manager does locally too. Evaluated with
# [ESM source, state, CSS width of the widget's element or null]; the model is then window.__model.
_FAKE_MODEL = """async ([source, state, width]) => {
  const listeners = {};
  const model = {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; (listeners["change:" + k] || []).forEach((f) => f()); },
    on: (name, f) => { (listeners[name] = listeners[name] || []).push(f); },
    save_changes: () => { window.__saves = (window.__saves || 0) + 1; },
  };
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const mod = await import(url);
  const el = document.createElement("div");
  if (width) el.style.width = width;
  document.body.append(el);
  mod.default.render({ model, el });
  window.__model = model;
}"""


def render_esm(page: Any, source: str, state: dict[str, Any], width: str | None = None) -> None:
    """Render the anywidget front end ``source`` (`gradviz.widgets.esm.esm_source`) into the page with
    the widget state ``state`` (JSON-able) on a fake model (``window.__model``): no kernel behind it."""
    page.evaluate(_FAKE_MODEL, [source, state, width])


def luminance(rgb: list[float]) -> float:
    """WCAG relative luminance of an sRGB colour (0–255 channels; an alpha entry is ignored)."""

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: list[float], bg: list[float]) -> float:
    """WCAG contrast ratio of ``fg`` drawn on ``bg`` (1 … 21); an ``fg`` with alpha is blended first."""
    if len(fg) > 3:
        a = fg[3]
        fg = [fg[k] * a + bg[k] * (1 - a) for k in range(3)]
    hi, lo = sorted([luminance(fg), luminance(bg)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)
