"""Moving every control of a kernel-free gradviz widget (gradviz/widgets/frames_view.js) in a page.

A widget is ``[data-gv-widget=KIND]``; each control is ``[data-gv-control=NAME]`` (a label around a
``[data-gv-input=NAME]`` range, select or checkbox, or a ‹ › ▶ button ``NAME:prev|next|play``); what it
shows is ``[data-gv-output=picture]`` and ``[data-gv-output=panel]``. These helpers need no kernel:
they work in JupyterLab and in an exported static page alike.
"""

from __future__ import annotations

from typing import Any

SHOWN = """(root) => ['picture', 'panel'].map(
  (k) => root.querySelector(`[data-gv-output=${k}]`).innerHTML).join('\\u0000')"""


def shown(root: Any) -> str:
    """The widget's visible output (its picture and its panel) as HTML."""
    return root.evaluate(SHOWN)


def _changed(root: Any, before: str, timeout_ms: int = 5_000) -> bool:
    """Whether the visible output differs from ``before`` within ``timeout_ms`` (frames switch at once;
    ▶ moves after its first interval)."""
    for _ in range(timeout_ms // 50):
        if shown(root) != before:
            return True
        root.page.wait_for_timeout(50)
    return shown(root) != before


def _slider(root: Any, name: str) -> Any:
    return root.locator(f'input[type=range][data-gv-input="{name}"]').first


def move_every_control(root: Any) -> tuple[list[str], list[str]]:
    """Move each control of the widget ``root`` once; returns (moved, unchanged): the controls moved,
    and those after which the picture and the panel stayed the same. A slider with one position or
    a dropdown with one option has nothing to move and is left out."""
    moved, unchanged = [], []
    for control in root.locator("[data-gv-control]").all():
        name = control.get_attribute("data-gv-control")
        base, _, button = name.partition(":")
        if button:
            slider = _slider(root, base)
            top = int(slider.get_attribute("max"))
            if top == 0:
                continue
            if button == "next" and int(slider.input_value()) == top:
                slider.fill("0")
            if button == "prev" and int(slider.input_value()) == 0:
                slider.fill(str(top))
            if button == "play":
                slider.fill("0")
            before = shown(root)
            control.click()
            changed = _changed(root, before)
            if button == "play":  # let it run to its end (or stop it), so later moves are ours
                root.page.wait_for_function(
                    "(s) => Number(s.value) === Number(s.max)", arg=slider.element_handle(), timeout=60_000
                )
        else:
            field = control.locator(f'[data-gv-input="{name}"]').first
            kind = field.evaluate("(e) => e.tagName === 'SELECT' ? 'select' : e.type")
            before = shown(root)
            if kind == "range":
                top = int(field.get_attribute("max"))
                if top == 0:
                    continue
                field.fill("0" if int(field.input_value()) != 0 else str(top))
            elif kind == "select":
                count = field.locator("option").count()
                if count < 2:
                    continue
                field.select_option(index=(int(field.input_value()) + 1) % count)
            else:
                field.click()  # a checkbox: toggle it
            changed = _changed(root, before)
        moved.append(name)
        if not changed:
            unchanged.append(name)
    return moved, unchanged
