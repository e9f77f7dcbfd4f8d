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

__all__ = ["Palette", "LIGHT", "DARK", "palette", "detect_theme", "graph_css", "themed_graph", "JP_VARS",
           "css_color", "widget_css", "scheme_css", "DARK_MARKERS"]


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
    muted="#59636e",  # 4.5:1 or more on every fill (WCAG AA)
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
    grad_pos="#0757ba",  # not watched_border's colour: that one becomes --jp-brand-color1
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
    muted="#9da7b3",
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


# ---- graph pictures that follow the page's theme (CSS) ---------------------------------------------

#: palette role → the JupyterLab CSS variable it takes where one fits (the light colour is its fallback)
JP_VARS = {
    "text": "--jp-ui-font-color1",
    "background": "--jp-layout-color0",
    "border": "--jp-border-color2",
    "watched_border": "--jp-brand-color1",  # an outline: the gradients' text keeps our readable blues
}
_ROLES = [f for f in Palette.__dataclass_fields__ if f not in ("name", "font", "mono")]


def _distinct_colour_roles() -> list[str]:
    """The roles that get a CSS variable: one per distinct light colour (a later role with the same
    colour shares the earlier one's)."""
    roles, seen = [], set()
    for role in _ROLES:
        value = getattr(LIGHT, role).lower()
        if value.startswith("#") and value not in seen:
            seen.add(value)
            roles.append(role)
    return roles


_THEMED_ROLES = _distinct_colour_roles()
#: the panels' words of verdict (good / bad / warn) → the palette role whose colours they use
STATUS = {"good": "receive", "bad": "grad_neg", "warn": "variable_border"}
THEMED_CLASS = "gv-themed"


#: where a page is dark though no JupyterLab theme says so, as CSS selectors of an ancestor: Colab's
#: dark mode, VS Code's dark and high-contrast themes, the course site's dark mode (pydata/book theme)
DARK_MARKERS = (
    'html[theme="dark"]',
    'body[data-vscode-theme-kind="vscode-dark"]',
    'body[data-vscode-theme-kind="vscode-high-contrast"]',
    'html[data-theme="dark"]',
)
#: the reader's own choice (``prefers-color-scheme: dark``) counts where no front end set a theme
_NO_THEME_SET = (':root:not([theme]):not([data-theme="light"]) '
                 'body:not([data-jp-theme-light]):not([data-vscode-theme-kind])')


def scheme_css(selector: str, light: str, dark: str, lab_dark: str | None = None) -> str:
    """CSS that gives ``selector`` the declarations ``light``, and ``dark`` where the page is dark:
    under JupyterLab's dark theme (``data-jp-theme-light="false"``; ``lab_dark`` there when given:
    the theme's own variables), a `DARK_MARKERS` front end, or, with no theme set by any front end, a
    reader whose browser prefers a dark colour scheme.

    >>> css = scheme_css(".x", "color: black", "color: white")
    >>> '[data-jp-theme-light="false"] .x' in css and "@media (prefers-color-scheme: dark)" in css
    True
    """
    parts = [s.strip() for s in selector.split(",")]
    lab = ", ".join(f'[data-jp-theme-light="false"] {p}' for p in parts)
    marked = ", ".join(f"{m} {p}" for m in DARK_MARKERS for p in parts)
    preferred = ", ".join(f"{_NO_THEME_SET} {p}" for p in parts)
    return (f"{selector} {{ {light}; }}\n{lab} {{ {lab_dark or dark}; }}\n{marked} {{ {dark}; }}\n"
            f"@media (prefers-color-scheme: dark) {{ {preferred} {{ {dark}; }} }}\n")


def graph_css() -> str:
    """The CSS that re-colours a graph drawn in the light palette (`themed_graph`): each light colour,
    wherever an element's ``fill`` / ``stroke`` attribute has it, becomes ``var(--gv-ROLE)``, which
    is the JupyterLab variable of `JP_VARS` (light colour as fallback) or the light colour, and the
    dark palette's colour where the page is dark (`scheme_css`: JupyterLab's dark theme, else the
    reader's or the front end's dark scheme). CSS beats presentation attributes, so highlights set
    later (in Python or in the browser) follow too.

    >>> css = graph_css()
    >>> "--gv-variable-fill: #fff3d1" in css and '[fill="#fff3d1" i]' in css
    True
    """
    light, dark, lab_dark, rules = [], [], [], []
    for role in _THEMED_ROLES:
        value = getattr(LIGHT, role).lower()
        var = _var(role)
        jp = JP_VARS.get(role)
        light.append(f"{var}: var({jp}, {value})" if jp else f"{var}: {value}")
        dark.append(f"{var}: {getattr(DARK, role).lower()}")
        if not jp:  # under JupyterLab's dark theme its own variables give the others
            lab_dark.append(dark[-1])
        for attr in ("fill", "stroke"):
            rules.append(f'svg.{THEMED_CLASS} [{attr}="{value}" i] {{ {attr}: var({var}); }}')
    css = scheme_css(f"svg.{THEMED_CLASS}", "; ".join(light), "; ".join(dark), "; ".join(lab_dark))
    return css + "\n".join(rules)


def _var(role: str) -> str:
    return f"--gv-{role.replace('_', '-')}"


def role_vars(pal: Palette) -> dict[str, str]:
    """Each colour of ``pal`` (lower case) → ``var(--gv-ROLE)``, the CSS variable `graph_css` defines
    for its role: what a picture drawn in ``pal`` writes instead of the colour to follow the theme.

    >>> role_vars(DARK)["#111418"], role_vars(LIGHT)["#ffffff"]
    ('var(--gv-background)', 'var(--gv-background)')
    """
    out: dict[str, str] = {}
    for role in _THEMED_ROLES:
        out.setdefault(getattr(pal, role).lower(), f"var({_var(role)})")
    return out


def themed_graph(svg: str) -> str:
    """A Graphviz SVG drawn with the light palette, made to follow the page's theme: the root gets the
    class ``gv-themed`` and a ``<style>`` of `graph_css` (light colours stay where CSS does not apply,
    e.g. a PNG export).

    >>> out = themed_graph('<svg width="8pt" height="8pt"><text fill="#1f2328">x</text></svg>')
    >>> out.startswith('<svg class="gv-themed" width="8pt"') and "<style>" in out
    True
    """
    start = svg.find("<svg")
    if start < 0 or f'class="{THEMED_CLASS}"' in svg[start : start + 400]:
        return svg
    end = svg.index(">", start) + 1
    head = svg[start:end].replace("<svg", f'<svg class="{THEMED_CLASS}"', 1)
    return svg[:start] + head + f"<style>{_css()}</style>" + svg[end:]


_CSS: str | None = None


def _css() -> str:
    global _CSS
    if _CSS is None:
        _CSS = graph_css()
    return _CSS


def css_color(status: str) -> str:
    """A panel's colour for ``status`` ("good", "bad", "warn"), readable in the light and the dark theme:
    a CSS variable that `widget_css` sets (the light colour as fallback, e.g. in a static page).

    >>> css_color("bad")
    'var(--gv-bad, #cf222e)'
    """
    return f"var(--gv-{status}, {getattr(LIGHT, STATUS[status])})"


#: the widgets' own colours (text, quieter text, background, lines) → the palette roles they take
WIDGET_ROLES = {"text": "text", "muted": "muted", "background": "background", "border": "border"}


def widget_css() -> str:
    """The CSS the widgets' front ends add to their style: the `css_color` variables and the widget's
    text, background and line colours (``--gv-ui-*``), JupyterLab's where it has them, dark where the
    page is dark (`scheme_css`).

    >>> "--gv-good: #56d364" in widget_css()
    True
    """
    def declarations(pal: Palette, follow_lab: bool) -> str:
        out = [f"--gv-{k}: {getattr(pal, role)}" for k, role in STATUS.items()]
        for name, role in WIDGET_ROLES.items():
            jp = JP_VARS.get(role) if follow_lab else None
            out.append(f"--gv-ui-{name}: var({jp}, {getattr(pal, role)})" if jp
                       else f"--gv-ui-{name}: {getattr(pal, role)}")
        return "; ".join(out)

    roots = ".gradviz, .gv-root"
    colours = f"{roots} {{ background: var(--gv-ui-background); color: var(--gv-ui-text); }}\n"
    dark, lab_dark = declarations(DARK, False), declarations(DARK, True)
    return scheme_css(roots, declarations(LIGHT, True), dark, lab_dark) + colours
