"""The explanation `gv.backprop` shows at each step, as functions of names and values already put in words
(every one escaped here).

>>> seed_panel(1, "y", "()")[:45]
'<div><b>Step 0 of 1: the seed</b></div><div>d'
>>> arrival_line("x", "a", "y", "1.0", "3.0", local="3.0")
"<div style='margin-top:4px'>→ <b>x</b> (∂a): local d y / d x = <code>3.0</code>; upstream × local = \
<code>1.0</code> × <code>3.0</code> = <code>3.0</code></div>"
"""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.render.text import esc

__all__ = ["seed_panel", "step_title", "rule_line", "upstream_line", "arrival_line", "graph_arrival_line",
           "gradients_summary", "backprop_html"]

MORE = "<br>&nbsp;&nbsp;(more contributions to come: it feeds other ops too)"


def _code(text: str) -> str:
    return f"<code>{esc(text)}</code>"


def _line(html: str) -> str:
    return f"<div style='margin-top:4px'>{html}</div>"


def seed_panel(steps: int, target: str, shape: str) -> str:
    """Step 0: d target / d target = 1, ones of the target's ``shape``."""
    return (f"<div><b>Step 0 of {steps}: the seed</b></div><div>d {esc(target)} / d {esc(target)} = 1 "
            f"(ones shaped {esc(shape)}). The backward pass now visits the recorded ops from last to "
            "first.</div>")


def step_title(position: int, steps: int, op: str, op_id: int, output: str, inputs: Sequence[str]) -> str:
    """The step's title: its op, and ``output = op(inputs)`` (``output`` '': an unnamed output)."""
    head = f"{esc(output)} = " if output else ""
    ins = ", ".join(esc(x) for x in inputs)
    return f"<div><b>Step {position} of {steps}: {esc(op)}</b> (op #{op_id}): {head}{esc(op)}({ins})</div>"


def rule_line(op: str, rule: str) -> str:
    """The op's VJP rule in the primitive's words (none: another engine's op)."""
    if not rule:
        return _line(f"rule: your engine's {esc(op)} (not an op of eg.primitives)")
    y = ", y: the output" if "y" in rule else ""
    return _line(f"rule: {_code(rule)} (g: the upstream gradient{y})")


def upstream_line(target: str, output: str, upstream: str) -> str:
    return _line(f"upstream g = d {esc(target)} / d {esc(output)} = {_code(upstream)}")


def arrival_line(name: str, arg: str, output: str, upstream: str, value: str, local: str | None = None,
                 shape: str = "", before: str | None = None, after: str = "", complete: bool = True) -> str:
    """One input's contribution: upstream × local (or the value another engine gave), and how it adds up
    with what the input had (``before``), and whether more are to come."""
    if local is not None:
        text = (f"→ <b>{esc(name)}</b> (∂{esc(arg)}): local d {esc(output)} / d {esc(name)} = "
                f"{_code(local)}; "
                f"upstream × local = {_code(upstream)} × {_code(local)} = {_code(value)}")
    else:
        text = f"→ <b>{esc(name)}</b> (∂{esc(arg)}): contribution {_code(value)} {esc(shape)}"
    if before is not None:
        text += (f"<br>&nbsp;&nbsp;accumulate: {esc(name)} already had {_code(before)} from a later op; "
                 f"{_code(before)} + {_code(value)} = {_code(after)}")
    return _line(text + ("" if complete else MORE))


def graph_arrival_line(name: str, op: str, output: str, grad: str | None) -> str:
    """A graph-style engine's step into one input: what its backward adds, its ``.grad`` once final."""
    text = (f"→ <b>{esc(name)}</b>: your engine's backward for {esc(op)} adds "
            f"g × ∂{esc(output)}/∂{esc(name)} to {esc(name)}.grad")
    text += MORE if grad is None else f"; {esc(name)}.grad is now complete: {_code(grad)}"
    return _line(text)


def gradients_summary(items: Sequence[tuple[str, str | None, str]]) -> str:
    """The last step's summary: each source's gradient, or why it is None (label, gradient, reason)."""
    lines = "".join(f"<li>d / d {esc(label)} = {_code(grad)}</li>" if grad is not None
                    else f"<li>d / d {esc(label)} = None: {esc(reason)}</li>"
                    for label, grad, reason in items)
    return f"<div style='margin-top:6px'><b>Done.</b> The gradients:<ul>{lines}</ul></div>"


def backprop_html(picture: str, panel: str) -> str:
    """The stepper's static form: the graph, and the step's explanation beside it."""
    return (f"<div class='gradviz gradviz-backprop' style='display:flex;gap:12px;align-items:flex-start'>"
            f"<div style='flex:1 1 auto;min-width:0'>{picture}</div>"
            f"<div style='flex:0 0 340px'>{panel}</div></div>")
