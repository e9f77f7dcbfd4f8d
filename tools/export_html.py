#!/usr/bin/env python3
"""Execute notebooks and export them as standalone static HTML pages, with an index page.

The course website is built by Sphinx (`make html`, tools/build_site.py). This exporter stays for
what the site does not do: one notebook as one self-contained page that follows the reader's colour
scheme and shows each widget's static picture where JavaScript is off (tests/browser/
test_static_export.py, test_dark_scheme.py).

    python tools/export_html.py --out /tmp/pages     # every lessons/*.ipynb
    python tools/export_html.py lessons/00_start_here.ipynb --out /tmp/site

Each notebook runs top to bottom in a fresh ``python3`` kernel (this interpreter's ipykernel) with
nbclient, which stores the widget state in the notebook; nbconvert's HTMLExporter embeds that state
in the page, so widgets whose interaction happens in the browser alone (links between sliders and
outputs computed in advance, clicks in a graph) keep working without a kernel. Python callbacks do
not. Unlike a plain nbconvert export, a page loads nothing from a CDN: RequireJS, the Jupyter widgets
HTML manager, the widget modules' bundles and MathJax are copied into ``<out>/_static/`` (see
page_assets.py; the first run needs npm), and each widget output shows its static picture (the
output's HTML / SVG / PNG) until the live widget has rendered, or for good where JavaScript is off.
A gradviz widget's output carries its picture once, in the widget state, with a short notice as its
HTML; the export draws that output's static picture back from the saved state
(`restore_static_pictures`).

Links between lessons (``01_tensors_and_devices.ipynb``) are rewritten to the exported pages
(``01_tensors_and_devices.html``). ``index.html`` lists every page in the output folder, so
exporting one lesson into an existing site keeps the others listed.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from page_assets import install
from widget_fallback import widget_fallback

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "html_template"
CELL_TIMEOUT_S = 120
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"
LOCAL_NOTEBOOK_HREF = re.compile(r'href="([^":?#]+)\.ipynb(#[^"]*)?"')
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown level-1 heading of the notebook, else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+?)\s*#*\s*$", cell.source, re.MULTILINE)
            if match:
                return match.group(1)
    return fallback


def kernel_manager(sockets: Path) -> AsyncKernelManager:
    """A manager for a kernel that talks to this process only: over IPC (Unix sockets in the folder
    ``sockets``) where the system has them, so nothing listens on TCP and the kernel's warning "running
    over TCP without encryption" (once per lesson) does not apply; over localhost TCP elsewhere."""
    local = {"transport": "ipc", "ip": str(sockets / "kernel")} if os.name == "posix" else {}
    return AsyncKernelManager(
        kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]), **local
    )


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int) -> None:
    """Run every cell of ``nb`` in a fresh kernel started in ``cwd``, keeping widget state."""
    with tempfile.TemporaryDirectory(prefix="gradlab-kernel-") as sockets:
        client = NotebookClient(
            nb,
            km=kernel_manager(Path(sockets)),
            timeout=timeout,
            kernel_name="python3",
            store_widget_state=True,
            resources={"metadata": {"path": str(cwd)}},
        )
        try:
            client.execute()
        finally:
            if client.km is not None:
                client._cleanup_kernel()  # we passed our own kernel manager: nbclient leaves it running


def restore_static_pictures(nb: nbformat.NotebookNode) -> int:
    """Give each gradviz widget output whose ``text/html`` is only a notice (its picture is carried once,
    in the widget's state) the static picture drawn from that saved state, so the page shows it before
    the widget renders and where JavaScript is off. Returns how many outputs got one."""
    try:
        from gradviz.render.static_state import NOTICE_MARK, static_html
    except ImportError:  # gradviz not importable here: the notices stay
        return 0
    state = widget_state(nb)
    restored = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            view, fallback = data.get(VIEW), data.get("text/html")
            if not isinstance(view, dict) or not isinstance(fallback, str) or NOTICE_MARK not in fallback:
                continue
            model = state.get(view.get("model_id"), {}).get("state") or {}
            picture = static_html(model) if isinstance(model, dict) else None
            if picture:
                data["text/html"] = picture
                restored += 1
    return restored


def widget_state(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """Model id → saved model (``model_module``, ``state``...) of ``nb``'s widget state."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {k: v for k, v in state.items() if isinstance(v, dict)} if isinstance(state, dict) else {}


def widget_modules(nb: nbformat.NotebookNode) -> set[str]:
    """The JavaScript modules (npm names) of every widget model and view in ``nb``'s saved state
    (anything that is not text comes back as its repr, for `page_assets.install` to refuse)."""
    return {
        name if isinstance(name, str) else repr(name)
        for model in widget_state(nb).values()
        for name in (model.get("model_module"), (model.get("state") or {}).get("_view_module"))
        if name
    }


def to_html(nb: nbformat.NotebookNode, name: str, out_dir: Path) -> str:
    """The executed ``nb`` as a page for ``out_dir``, with the widget scripts copied into it."""
    assets = install(out_dir, widget_modules(nb))
    for module in assets.missing_modules:
        print(
            f"export_html: warning: {name}: no local bundle of the widget module {module!r}; "
            "the page will try to load it from a CDN",
            file=sys.stderr,
        )
    for module in assets.refused_modules:
        print(
            f"export_html: warning: {name}: the widget state names the module {module[:80]!r}, which is "
            "not an npm package name; nothing is copied for it (its widgets show their static picture)",
            file=sys.stderr,
        )
    mark_fallbacks(nb)
    exporter = HTMLExporter(
        template_name="gradlab",
        extra_template_basedirs=[str(TEMPLATES)],
        require_js_url=assets.require_js,
        widget_renderer_url=assets.html_manager,
    )
    gradlab = {
        "amd_paths": assets.amd_paths,
        "mathjax": assets.mathjax,
    }
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": name}, "gradlab": gradlab})
    return body


def mark_fallbacks(nb: nbformat.NotebookNode) -> None:
    """Put each widget output's static picture (`widget_fallback`) in its metadata, where the page
    template takes it from."""
    models = widget_state(nb)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            view = data.get(VIEW)
            if view is None:
                continue
            model = models.get(view.get("model_id")) if isinstance(view, dict) else None
            output.setdefault("metadata", {})["gradlab_fallback"] = widget_fallback(data, model)


def export(path: Path, out_dir: Path, timeout: int = CELL_TIMEOUT_S) -> Path:
    """Execute the notebook at ``path`` and write ``out_dir/<name>.html``; return that path."""
    nb = nbformat.read(path, as_version=4)
    execute(nb, path.parent, timeout)
    restore_static_pictures(nb)
    nb.metadata["title"] = notebook_title(nb, path.stem)
    body = to_html(nb, path.stem, out_dir)
    body = LOCAL_NOTEBOOK_HREF.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
    target = out_dir / f"{path.stem}.html"
    target.write_text(body, encoding="utf-8")
    return target


def write_index(out_dir: Path) -> Path:
    """Write ``out_dir/index.html`` listing every exported page there, by file name."""
    items = []
    for page in sorted(out_dir.glob("*.html")):
        if page.name == "index.html":
            continue
        match = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.DOTALL)
        title = html.unescape(match.group(1).strip()) if match else page.stem
        items.append(f'    <li><a href="{html.escape(page.name)}">{html.escape(title)}</a></li>')
    index = out_dir / "index.html"
    index.write_text(
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en">',
                "<head>",
                '  <meta charset="utf-8">',
                '  <meta name="viewport" content="width=device-width, initial-scale=1">',
                "  <title>gradlab lessons</title>",
                "  <style>body{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;"
                "padding:0 1em;line-height:1.5}li{margin:.4em 0}</style>",
                "</head>",
                "<body>",
                "  <h1>gradlab lessons</h1>",
                "  <p>See gradients: an autodiff engine, interactive widgets and lessons. These pages were"
                " executed ahead of time; widgets that need Python to recompute are static here.</p>",
                "  <ul>",
                *items,
                "  </ul>",
                "</body>",
                "</html>",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to export (default: every lessons/*.ipynb)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "pages",
                        help="output folder (default: build/pages/; the course site is site/)")
    parser.add_argument(
        "--timeout", type=int, default=CELL_TIMEOUT_S, help=f"seconds per cell (default {CELL_TIMEOUT_S})"
    )
    args = parser.parse_args(argv)

    notebooks = args.notebooks or sorted((ROOT / "lessons").glob("*.ipynb"))
    if not notebooks:
        print("export_html: no notebooks to export", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        install(args.out)  # the pages' scripts first, so that a missing npm fails before any lesson runs
    except RuntimeError as exc:
        print(f"export_html: {exc}", file=sys.stderr)
        return 1
    failed = []
    for path in notebooks:
        start = time.perf_counter()
        try:
            target = export(path.resolve(), args.out, args.timeout)
        except Exception as exc:  # noqa: BLE001  (one bad notebook must not cost the others their pages)
            failed.append(path)
            print(f"FAILED {path}: {failure(exc)}", file=sys.stderr)
            continue
        print(f"{path} -> {target} ({time.perf_counter() - start:.1f} s)")
    print(f"index: {write_index(args.out)}")
    if failed:
        print(
            f"export_html: {len(failed)} of {len(notebooks)} notebook(s) failed, the other pages and the "
            f"index were written: {', '.join(map(str, failed))}",
            file=sys.stderr,
        )
        return 1
    return 0


def failure(exc: BaseException) -> str:
    """What went wrong with one notebook, in a line or a cell's traceback."""
    if isinstance(exc, CellExecutionError | TimeoutError | RuntimeError):
        return "\n" + ANSI.sub("", str(exc))
    if isinstance(exc, nbformat.reader.NotJSONError | UnicodeDecodeError):
        return f"not a readable notebook (not JSON): {str(exc)[:300]}"
    if isinstance(exc, nbformat.ValidationError):
        return f"not a valid notebook: {exc.message[:300]}"
    if isinstance(exc, OSError):
        return f"cannot read it: {exc}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


if __name__ == "__main__":
    sys.exit(main())
