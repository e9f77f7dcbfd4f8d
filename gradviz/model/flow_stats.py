"""Gradient-flow statistics per layer or variable over the recorded steps (of a `gv.Recorder`)."""

from __future__ import annotations

import numpy as np

from gradviz.model.recorder import RecordedSteps

__all__ = ["summarise", "STATS", "RATIO_GUIDE"]

#: What the line panel can show: statistic → axis label.
STATS = {"norm": "gradient norm ‖g‖", "max": "largest |g|", "update_ratio": "update / weight ‖Δw‖/‖w‖"}

#: The update/weight ratio usually reported as healthy (Karpathy's rule of thumb: about 1e-3).
RATIO_GUIDE = 1e-3


def summarise(rec: RecordedSteps, stat: str, by: str = "layer") -> tuple[list[int], list[str], np.ndarray]:
    """``(steps, names, values)``: ``values[i, j]`` is ``stat`` at ``steps[i]`` for layer/variable ``j``.

    By layer, the variables of a layer are combined exactly: the norm of the layer's whole gradient
    (√Σ‖g‖²), the largest |g|, the size-weighted mean, ‖Δw_layer‖ / ‖w_layer‖ for the ratio, and
    ‖w_layer‖ (√Σ‖w‖²) for "weight_norm".
    Missing entries are NaN.
    """
    if by not in ("layer", "variable"):
        raise ValueError(f"flow: by must be 'layer' or 'variable', got {by!r}.")
    if stat not in ("norm", "max", "mean", "update_ratio", "weight_norm"):
        raise ValueError(f"flow: unknown statistic {stat!r}; use norm, max, mean, update_ratio or "
                         "weight_norm.")
    steps = sorted({s for v in rec.variable_names for s in rec.gradient_stats(v)["step"]})
    row = {s: i for i, s in enumerate(steps)}
    groups = rec.layers() if by == "layer" else {v: [v] for v in rec.variable_names}
    names = list(groups)
    values = np.full((len(steps), len(names)), np.nan)
    for j, members in enumerate(groups.values()):
        cols: dict[str, np.ndarray] = {}
        for key in ("norm", "max", "mean", "size", "weight_norm", "update_norm"):
            m = np.full((len(steps), len(members)), np.nan)
            for k, var in enumerate(members):
                st = rec.gradient_stats(var)
                series = st.get(key)
                if series is None:
                    continue
                for s, v in zip(st["step"], series):
                    m[row[s], k] = v
            cols[key] = m
        with np.errstate(invalid="ignore", divide="ignore"):
            if stat == "norm":
                out = np.sqrt(np.sum(cols["norm"] ** 2, axis=1))
            elif stat == "max":
                out = np.max(cols["max"], axis=1)
            elif stat == "weight_norm":
                out = np.sqrt(np.sum(cols["weight_norm"] ** 2, axis=1))
            elif stat == "mean":
                out = np.sum(cols["mean"] * cols["size"], axis=1) / np.sum(cols["size"], axis=1)
            else:
                if len(members) == 1 and not np.isfinite(cols["weight_norm"]).any():
                    st = rec.gradient_stats(members[0])  # from an older to_dict(): the ratio alone
                    out = np.full(len(steps), np.nan)
                    for s, v in zip(st["step"], st["update_ratio"]):
                        out[row[s]] = v
                else:
                    moved = np.sqrt(np.sum(cols["update_norm"] ** 2, axis=1))
                    weights = np.sqrt(np.sum(cols["weight_norm"] ** 2, axis=1))
                    previous = np.concatenate([[np.nan], weights[:-1]])
                    out = moved / previous
        values[:, j] = out
    return steps, names, values
