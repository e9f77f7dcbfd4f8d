"""2-D convolution (NHWC input, HWIO filters, TensorFlow's SAME / VALID padding).

Forward: *im2col*: a strided view of every window of the padded input, flattened into rows, then
one matrix product with the flattened filters (when many window rows lie on the padding, one such
product per filter row instead, over the rows inside the image: see `BAND_SHARE`). The two
gradients are primitives too:

- ``conv2d_backprop_input(g, w)``: the gradient for the input: each output gradient times the
  filters, folded back onto the image (the transpose of the forward);
- ``conv2d_backprop_filter(x, g)``: the gradient for the filters: windows of the input times the
  output gradients.

Each of the three is linear in each of its inputs, so their own VJPs are again these three ops
(for example the VJP of ``backprop_input`` with respect to ``g`` is a convolution). That closes
the set: derivatives of any order work.

>>> import engine as eg
>>> x = eg.ones((1, 4, 4, 1))
>>> w = eg.ones((3, 3, 1, 2))
>>> y = eg.nn.conv2d(x, w, padding="SAME")
>>> y.shape, y.numpy()[0, :, :, 0]           # a corner window sees 4 ones, an edge 6, inside 9
((1, 4, 4, 2), array([[4., 6., 6., 4.],
       [6., 9., 9., 6.],
       [6., 9., 9., 6.],
       [4., 6., 6., 4.]], dtype=float32))
"""

from __future__ import annotations

from typing import Any

from ..primitive import Primitive
from ..tensor import Tensor, convert_to_tensor
from ..threads import matmul
from .windows import fold, geometry, inside, pad, padding_name, pair, windows

__all__ = ["conv2d"]


def _plan(input_shape: tuple[int, ...], k: tuple[int, int], strides: tuple[int, int], padding: str):
    """Output size, paddings and padded shape for an NHWC input."""
    n, h, w, c = input_shape
    oh, top, bottom = geometry(h, k[0], strides[0], padding)
    ow, left, right = geometry(w, k[1], strides[1], padding)
    return (oh, ow), (top, bottom), (left, right), (n, h + top + bottom, w + left + right, c)


def _im2col(xp: Any, x: Any, k: tuple[int, int], strides: tuple[int, int], padding: str):
    """Rows of flattened windows ``(N·OH·OW, KH·KW·C)`` and the output size."""
    out, ph, pw, _ = _plan(x.shape, k, strides, padding)
    view = windows(xp, pad(xp, x, ph, pw), out, k, strides)
    return view.reshape(-1, k[0] * k[1] * x.shape[3]), out


# Bands. With SAME padding on a small image many windows have whole rows on the zero padding
# (lesson 07's second convolution, 5×5 filters on 4×4 maps: 30 % of the im2col matrix). Done one
# filter row at a time — the windows' rows that lie inside the image times that row of the filters —
# those zeros are neither gathered nor multiplied: the three ops there took 10–25 % less time. With
# few such rows the KH smaller products cost more than they save (lesson 07's first convolution: 2×
# slower), hence the threshold: the bands are used when at least this share of rows is padding.
BAND_SHARE = 0.25


def _bands(input_shape, k, strides, padding):
    """``[(filter row i, output rows, input rows)]`` for the rows of windows inside the image (slices),
    or None when the padding rows are too few to be worth skipping (then im2col does it all)."""
    (oh, _), (top, _), _, _ = _plan(input_shape, k, strides, padding)
    spans = [(i, inside(oh, strides[0], i - top, input_shape[1])) for i in range(k[0])]
    used = sum(r[0].stop - r[0].start for _, r in spans if r is not None)
    if used > (1 - BAND_SHARE) * k[0] * oh:
        return None
    return [(i, *r) for i, r in spans if r is not None]


def _band_cols(xp, x, k, strides, padding, input_rows):
    """One band's windows as rows ``(N·rows·OW, KW·C)``: ``x``'s rows ``input_rows``, padded on the
    sides only, cut into windows of one filter row."""
    (_, ow), _, pw, _ = _plan(x.shape, k, strides, padding)
    rows = pad(xp, x[:, input_rows], (0, 0), pw)
    view = windows(xp, rows, (rows.shape[1], ow), (1, k[1]), (1, strides[1]))
    return view.reshape(-1, k[1] * x.shape[3])


def _conv_forward(xp, x, w, strides, padding):
    bands = _bands(x.shape, w.shape[:2], strides, padding)
    if bands is not None:
        (oh, ow), _, _, _ = _plan(x.shape, w.shape[:2], strides, padding)
        y = xp.zeros((x.shape[0], oh, ow, w.shape[3]), dtype=x.dtype)
        for i, out_rows, in_rows in bands:
            cols = _band_cols(xp, x, w.shape[:2], strides, padding, in_rows)
            y[:, out_rows] += matmul(xp, cols, w[i].reshape(-1, w.shape[3])).reshape(x.shape[0], -1, ow,
                                                                                    w.shape[3])
        return y
    cols, (oh, ow) = _im2col(xp, x, w.shape[:2], strides, padding)
    y = matmul(xp, cols, w.reshape(-1, w.shape[3]))
    return y.reshape(x.shape[0], oh, ow, w.shape[3])


def _backprop_input_forward(xp, g, w, input_shape, strides, padding):
    kh, kw, c, o = w.shape
    out, (top, _), (left, _), _ = _plan(input_shape, (kh, kw), strides, padding)
    bands = _bands(input_shape, (kh, kw), strides, padding)
    if bands is not None:
        image = xp.zeros(input_shape, dtype=g.dtype)
        for i, out_rows, in_rows in bands:
            cols = matmul(xp, g[:, out_rows].reshape(-1, o), w[i].reshape(-1, o).T)   # (N·rows·OW, KW·C)
            cols = cols.reshape(input_shape[0], -1, out[1], 1, kw, c)
            fold(xp, cols, None, (1, strides[1]), (0, left), out=image[:, in_rows])  # adds into image
        return image
    cols = matmul(xp, g.reshape(-1, o), w.reshape(-1, o).T)         # (N·OH·OW, KH·KW·C)
    cols = cols.reshape(input_shape[0], out[0], out[1], kh, kw, c)
    return fold(xp, cols, input_shape, strides, (top, left))


def _backprop_filter_forward(xp, x, g, filter_shape, strides, padding):
    bands = _bands(x.shape, filter_shape[:2], strides, padding)
    if bands is not None:
        kh, kw, c, o = filter_shape
        dw = xp.zeros(filter_shape, dtype=x.dtype)  # a filter row that sees only padding: 0
        for i, out_rows, in_rows in bands:
            cols = _band_cols(xp, x, (kh, kw), strides, padding, in_rows)
            dw[i] = matmul(xp, cols.T, g[:, out_rows].reshape(-1, o)).reshape(kw, c, o)
        return dw
    cols, _ = _im2col(xp, x, filter_shape[:2], strides, padding)
    return matmul(xp, cols.T, g.reshape(-1, filter_shape[3])).reshape(filter_shape)


_conv2d = Primitive(
    "conv2d", _conv_forward,
    vjps=[lambda g, y, x, w, strides, padding: _backprop_input(
              g, w, input_shape=x.shape, strides=strides, padding=padding),
          lambda g, y, x, w, strides, padding: _backprop_filter(
              x, g, filter_shape=w.shape, strides=strides, padding=padding)],
    needs=("x", "w"), inputs=("x", "w"),
    rule="∂x = conv2d_backprop_input(g, w), ∂w = conv2d_backprop_filter(x, g)",
    float_only=True,
    doc="Convolution of NHWC x with HWIO filters w (im2col + one matmul).",
    op_type="Conv2D",
)

# <conv2d(x, w), g> = <x, backprop_input(g, w)> = <w, backprop_filter(x, g)>: each VJP below is
# read off that identity.
_backprop_input = Primitive(
    "conv2d_backprop_input", _backprop_input_forward,
    vjps=[lambda h, y, g, w, input_shape, strides, padding: _conv2d(h, w, strides=strides, padding=padding),
          lambda h, y, g, w, input_shape, strides, padding: _backprop_filter(
              h, g, filter_shape=w.shape, strides=strides, padding=padding)],
    needs=("dy", "w"), inputs=("dy", "w"),
    rule="∂dy = conv2d(g, w), ∂w = conv2d_backprop_filter(g, dy)",
    float_only=True,
    doc="The gradient of conv2d with respect to its input: g times the filters, folded back.",
)

_backprop_filter = Primitive(
    "conv2d_backprop_filter", _backprop_filter_forward,
    vjps=[lambda h, y, x, g, filter_shape, strides, padding: _backprop_input(
              g, h, input_shape=x.shape, strides=strides, padding=padding),
          lambda h, y, x, g, filter_shape, strides, padding: _conv2d(x, h, strides=strides, padding=padding)],
    needs=("x", "dy"), inputs=("x", "dy"),
    rule="∂x = conv2d_backprop_input(dy, g), ∂dy = conv2d(x, g)",
    float_only=True,
    doc="The gradient of conv2d with respect to its filters: input windows times g.",
)


def conv2d(x: Any, filters: Any, strides: int | tuple[int, int] = 1, padding: str = "SAME") -> Tensor:
    """2-D convolution, as ``tf.nn.conv2d``: ``x`` is NHWC ``(batch, height, width, channels)``,
    ``filters`` HWIO ``(kh, kw, in_channels, out_channels)``.

    ``strides``: an int, ``(sh, sw)`` or ``[1, sh, sw, 1]``. ``padding``: ``"SAME"`` (output size
    ``ceil(in / stride)``, zero padding split evenly, the odd pixel at the bottom / right) or
    ``"VALID"`` (no padding; only whole windows). Like TensorFlow (and unlike the mathematicians'
    convolution) the filters are not flipped: this is a cross-correlation.

    >>> import engine as eg
    >>> eg.nn.conv2d(eg.ones((1, 5, 5, 1)), eg.ones((3, 3, 1, 2))).shape
    (1, 5, 5, 2)
    """
    op = "conv2d"
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    filters = filters if isinstance(filters, Tensor) else convert_to_tensor(filters)
    if x.ndim != 4:
        raise ValueError(f"{op}: the input must be 4-D NHWC (batch, height, width, channels), got shape "
                         f"{x.shape}. For one image use eg.expand_dims(x, 0).")
    if filters.ndim != 4:
        raise ValueError(f"{op}: filters must be 4-D HWIO (height, width, in_channels, out_channels), got "
                         f"shape {filters.shape}.")
    if filters.shape[2] != x.shape[3]:
        raise ValueError(f"{op}: the filters {filters.shape} expect {filters.shape[2]} input channels but "
                         f"the input {x.shape} has {x.shape[3]} (NHWC: channels last).")
    strides = pair(strides, "strides", op)
    padding = padding_name(padding, op)
    if padding == "VALID" and (filters.shape[0] > x.shape[1] or filters.shape[1] > x.shape[2]):
        raise ValueError(f"{op}: with padding='VALID' the filters ({filters.shape[0]}x{filters.shape[1]}) "
                         f"must fit in the input ({x.shape[1]}x{x.shape[2]}); use padding='SAME'.")
    return _conv2d(x, filters, strides=strides, padding=padding)
