"""Build the course website (`make html`): Sphinx + myst-nb + sphinx-book-theme, into site/.

The Sphinx source folder is assembled in build/site-src/ from the lessons (with their checks beside
them, as in lessons/), tools/site/conf.py and index.md, and the scripts the pages need
(tools/page_assets.py: RequireJS, the widgets' HTML manager, anywidget's bundle, MathJax), so that
nothing loads from outside the site. myst-nb executes every lesson during the build.

    python tools/build_site.py                 # every lesson, into site/
    python tools/build_site.py 02 --out DIR    # lesson 02 alone (tests)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from page_assets import STATIC, install  # noqa: E402

from gradlab.course import lesson_number, lesson_paths  # noqa: E402

LESSONS = ROOT / "lessons"
SITE_FILES = ROOT / "tools" / "site"


def repository_url() -> str:
    """GRADLAB_REPOSITORY_URL, else the clone's ``origin`` as an https URL, else "" (no launch buttons)."""
    url = os.environ.get("GRADLAB_REPOSITORY_URL", "")
    if not url:
        proc = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True,
                              text=True)
        url = proc.stdout.strip() if proc.returncode == 0 else ""
        if url.startswith("git@github.com:"):
            url = "https://github.com/" + url.removeprefix("git@github.com:")
        url = url.removesuffix(".git") if url.startswith("https://") else ""
    return url


def assemble(src: Path, lessons: Sequence[str]) -> None:
    """The Sphinx source folder: conf.py, index.md, the lessons, _checks and _static/."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for name in ("conf.py", "index.md"):
        shutil.copy(SITE_FILES / name, src / name)
    for lesson in lesson_paths(LESSONS):
        if not lessons or lesson_number(lesson) in lessons:
            shutil.copy(lesson, src / lesson.name)
    shutil.copytree(LESSONS / "_checks", src / "_checks", ignore=shutil.ignore_patterns("__pycache__"))
    assets = install(src, {"anywidget"})
    # the widget modules' bundles by name (anywidget's, the HTML manager's own, for its icon fonts)
    (src / STATIC / "gradlab-amd-paths.js").write_text(
        f"requirejs.config({{paths: {json.dumps(assets.amd_paths)}}});\n", encoding="utf-8")
    (src / "assets.json").write_text(json.dumps({
        "require_js": assets.require_js, "html_manager": assets.html_manager, "mathjax": assets.mathjax,
        "repository_url": repository_url(),
    }), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="two-digit lesson numbers (default: every lesson)")
    parser.add_argument("--out", default=str(ROOT / "site"))
    parser.add_argument("--src", default=str(ROOT / "build" / "site-src"))
    args = parser.parse_args(argv)
    src, out = Path(args.src), Path(args.out)
    start = time.perf_counter()
    assemble(src, args.lessons)
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out)], check=True)
    print(f"site: {out / 'index.html'} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
