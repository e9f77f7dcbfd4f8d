"""Light and dark palettes, and which one to use.

``theme="auto"`` (the default) follows JupyterLab's theme where it can be read (the
``GRADVIZ_THEME`` environment variable, else JupyterLab's saved theme setting), and is light
otherwise. Inside JupyterLab the widgets also ask the page and redraw in dark when it is dark.

>>> palette("dark").name
'dark'
>>> palette("light").variable_fill
'#fff3d1'
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Palette", "LIGHT", "DARK", "palette", "detect_theme"]


@dataclass(frozen=True)
class Palette:
    """The colours every gradviz drawing uses (CSS colour strings)."""

    name: str
    background: str
    text: str
    muted: str
    border: str
    edge: str
    tensor_fill: str
    tensor_border: str
    variable_fill: str
    variable_border: str
    watched_border: str
    op_fill: str
    op_border: str
    op_text: str
    group_fill: str
    grad_pos: str  # positive gradients (and arrays of gradients)
    grad_neg: str  # negative gradients
    target_border: str
    highlight: str  # the op of the current step
    upstream: str  # where the gradient comes from
    receive: str  # where it goes to
    panel_background: str
    font: str = "Helvetica"
    mono: str = "Courier"


LIGHT = Palette(
    name="light",
    background="#ffffff",
    text="#1f2328",
    muted="#6e7781",
    border="#d0d7de",
    edge="#8c959f",
    tensor_fill="#f6f8fa",
    tensor_border="#8c959f",
    variable_fill="#fff3d1",
    variable_border="#bf8700",
    watched_border="#0969da",
    op_fill="#eee8fb",
    op_border="#8250df",
    op_text="#4c2889",
    group_fill="#eef4ff",
    grad_pos="#0969da",
    grad_neg="#cf222e",
    target_border="#bf3989",
    highlight="#fb8f44",
    upstream="#cf222e",
    receive="#1a7f37",
    panel_background="#f6f8fa",
)

DARK = Palette(
    name="dark",
    background="#111418",
    text="#e6edf3",
    muted="#8b949e",
    border="#30363d",
    edge="#6e7681",
    tensor_fill="#1c2128",
    tensor_border="#6e7681",
    variable_fill="#3a2e0f",
    variable_border="#d29922",
    watched_border="#58a6ff",
    op_fill="#2a2140",
    op_border="#a371f7",
    op_text="#d2a8ff",
    group_fill="#16243a",
    grad_pos="#79c0ff",
    grad_neg="#ff7b72",
    target_border="#f778ba",
    highlight="#ffa657",
    upstream="#ff7b72",
    receive="#56d364",
    panel_background="#161b22",
)

_THEMES = {"light": LIGHT, "dark": DARK}


def palette(theme: str | Palette | None = "auto") -> Palette:
    """The palette for ``theme``: "light", "dark", "auto" (or None), or a `Palette` itself."""
    if isinstance(theme, Palette):
        return theme
    if theme is None or theme == "auto":
        theme = detect_theme()
    try:
        return _THEMES[theme]
    except KeyError:
        raise ValueError(f"theme must be 'auto', 'light', 'dark' or a Palette, got {theme!r}.") from None


def detect_theme() -> str:
    """ "dark" when JupyterLab's theme is a dark one (as far as the kernel can tell), else "light"."""
    forced = os.environ.get("GRADVIZ_THEME", "").strip().lower()
    if forced in _THEMES:
        return forced
    name = _jupyterlab_theme_name()
    return "dark" if name and "dark" in name.lower() else "light"


def _jupyterlab_theme_name() -> str | None:
    """The theme saved in JupyterLab's user settings (or a site-wide override), if any."""
    key = "@jupyterlab/apputils-extension"
    candidates = []
    settings_dir = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    if settings_dir:
        candidates.append(Path(settings_dir) / key / "themes.jupyterlab-settings")
    config_dir = os.environ.get("JUPYTER_CONFIG_DIR") or str(Path.home() / ".jupyter")
    candidates.append(Path(config_dir) / "lab" / "user-settings" / key / "themes.jupyterlab-settings")
    for path in candidates:
        name = _read_theme(path)
        if name:
            return name
    overrides = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    try:
        data = json.loads(overrides.read_text(encoding="utf-8"))
        return data.get(f"{key}:themes", {}).get("theme")
    except (OSError, ValueError, AttributeError):
        return None


def _read_theme(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    text = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)  # the file is JSON with comments
    match = re.search(r'"theme"\s*:\s*"([^"]+)"', text)
    return match.group(1) if match else None
