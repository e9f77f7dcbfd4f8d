"""Elementwise functions of one tensor: forward and gradient side by side.

Each gradient is written with engine ops, often reusing the output ``y`` (exp, tanh, sigmoid, sqrt).

>>> import engine as eg
>>> eg.tanh(eg.constant([0.0, 1.0]))
<Tensor shape=(2,) dtype=float32 device=cpu:0 [0.        0.7615942]>
"""

from __future__ import annotations

from ..creation import zeros_like
from ..primitive import Primitive


def _unary(name, forward, vjp, doc, *, rule, symbol=None, float_only=True, op_type=None, example=None,
           ordered=False, needs=None):
    return Primitive(name, forward, vjps=None if vjp is None else [vjp], rule=rule, symbol=symbol,
                     elementwise=True, float_only=float_only, numeric=True, ordered=ordered,
                     op_type=op_type, doc=doc, example=example, needs=needs)


negative = _unary("negative", lambda xp, x: -x,
                  lambda g, y, x: negative(g),
                  "-x.", float_only=False,
                  needs=(), rule="∂x = −g", symbol="neg", op_type="Neg",
                  example=('eg.negative([1.0, -2.0]).numpy()', 'array([-1.,  2.], dtype=float32)'))
abs = _unary("abs", lambda xp, x: xp.abs(x),  # noqa: A001
             lambda g, y, x: g * sign(x),
             "|x|. Gradient sign(x), which is 0 at x = 0.", float_only=False,
             needs=("x",), rule="∂x = g·sign(x) (0 at x = 0)",
             example=('eg.abs([-1.5, 2.0]).numpy()', 'array([1.5, 2. ], dtype=float32)'))
sign = _unary("sign", lambda xp, x: xp.sign(x),
              lambda g, y, x: zeros_like(g),
              "-1, 0 or 1. Gradient 0 everywhere (TensorFlow's convention).", float_only=False,
              needs=(), rule="∂x = 0 (sign is flat)",
              example=('eg.sign([-3.0, 0.0, 2.0]).numpy()', 'array([-1.,  0.,  1.], dtype=float32)'))
exp = _unary("exp", lambda xp, x: xp.exp(x),
             lambda g, y, x: g * y,
             "e**x. Gradient e**x, the output itself.",
             needs=("y",), rule="∂x = g·y (y = eˣ, the output)",
             example=('eg.exp([0.0, 1.0]).numpy()', 'array([1.      , 2.718282], dtype=float32)'))
log = _unary("log", lambda xp, x: xp.log(x),
             lambda g, y, x: g / x,
             "Natural logarithm. Gradient 1/x.",
             needs=("x",), rule="∂x = g/x",
             example=('eg.log([1.0, 4.0]).numpy()', 'array([0.       , 1.3862944], dtype=float32)'))
log1p = _unary("log1p", lambda xp, x: xp.log1p(x),
               lambda g, y, x: g / (x + 1),
               "log(1 + x), accurate for small x. Gradient 1/(1 + x).",
               needs=("x",), rule="∂x = g/(1 + x)",
               example=('eg.log1p([0.0, 1.0]).numpy()', 'array([0.       , 0.6931472], dtype=float32)'))
sqrt = _unary("sqrt", lambda xp, x: xp.sqrt(x),
              lambda g, y, x: g / (y * 2),
              "Square root. Gradient 1/(2·sqrt(x)), infinite at 0.",
              needs=("y",), rule="∂x = g/(2y) (y = √x, the output)",
              example=('eg.sqrt([4.0, 9.0]).numpy()', 'array([2., 3.], dtype=float32)'))
square = _unary("square", lambda xp, x: x * x,
                lambda g, y, x: g * x * 2,
                "x². Gradient 2x.", float_only=False,
                needs=("x",), rule="∂x = g·2x",
                example=('eg.square([3.0, -2.0]).numpy()', 'array([9., 4.], dtype=float32)'))
sin = _unary("sin", lambda xp, x: xp.sin(x),
             lambda g, y, x: g * cos(x),
             "Sine. Gradient cos(x).",
             needs=("x",), rule="∂x = g·cos x",
             example=('eg.sin([0.0]).numpy()', 'array([0.], dtype=float32)'))
cos = _unary("cos", lambda xp, x: xp.cos(x),
             lambda g, y, x: negative(g) * sin(x),
             "Cosine. Gradient -sin(x).",
             needs=("x",), rule="∂x = −g·sin x",
             example=('eg.cos([0.0]).numpy()', 'array([1.], dtype=float32)'))
tan = _unary("tan", lambda xp, x: xp.tan(x),
             lambda g, y, x: g * (y * y + 1),
             "Tangent. Gradient 1 + tan²(x).",
             needs=("y",), rule="∂x = g·(1 + y²) (y = tan x, the output)",
             example=('eg.tan([0.0]).numpy()', 'array([0.], dtype=float32)'))
# The gradients of tanh, sigmoid and relu are primitives of their own (one array expression instead
# of three recorded ops, like PyTorch's tanh_backward); their VJPs keep higher orders working.
_tanh_grad = Primitive(
    "tanh_grad", lambda xp, g, y: g * (1 - y * y),
    vjps=[lambda h, z, g, y: _tanh_grad(h, y),       # d/dg: 1 - y²
          lambda h, z, g, y: h * g * y * -2],        # d/dy: -2·g·y
    needs=("dy", "y"),
    inputs=("dy", "y"), rule="∂dy = tanh_grad(g, y) = g·(1 − y²), ∂y = −2·g·dy·y",
    elementwise=True,
    doc="g·(1 - y²): the gradient of tanh given its output y.",
)
tanh = _unary("tanh", lambda xp, x: xp.tanh(x),
              lambda g, y, x: _tanh_grad(g, y),
              "Hyperbolic tangent. Gradient 1 - tanh²(x).",
              needs=("y",), rule="∂x = tanh_grad(g, y) = g·(1 − y²) (y = tanh x, the output)",
              example=('eg.tanh([0.0, 100.0]).numpy()', 'array([0., 1.], dtype=float32)'))


def _sigmoid_forward(xp, x):
    # 1/(1+e^-x) overflows in e^-x for very negative x; this form never exponentiates a positive number.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


_sigmoid_grad = Primitive(
    "sigmoid_grad", lambda xp, g, y: g * y * (1 - y),
    vjps=[lambda h, z, g, y: _sigmoid_grad(h, y),    # d/dg: y·(1 - y)
          lambda h, z, g, y: h * g * (1 - y * 2)],   # d/dy: g·(1 - 2y)
    needs=("dy", "y"),
    inputs=("dy", "y"), rule="∂dy = sigmoid_grad(g, y) = g·y·(1 − y), ∂y = g·dy·(1 − 2y)",
    elementwise=True,
    doc="g·y·(1 - y): the gradient of the sigmoid given its output y.",
)
sigmoid = _unary("sigmoid", _sigmoid_forward,
                 lambda g, y, x: _sigmoid_grad(g, y),
                 "Logistic sigmoid 1/(1 + e**-x), stable for large |x|. Gradient σ(x)(1 - σ(x)).",
                 ordered=True,  # (its stable form compares x with 0: real inputs only)
                 needs=("y",), rule="∂x = sigmoid_grad(g, y) = g·y·(1 − y) (y = σ(x), the output)",
                 example=('eg.sigmoid([0.0, -1000.0]).numpy()', 'array([0.5, 0. ], dtype=float32)'))
_relu_grad = Primitive(
    "relu_grad", lambda xp, g, x: g * (x > 0),  # TensorFlow's ReluGrad (and branch-free, unlike where)
    vjps=[lambda h, z, g, x: _relu_grad(h, x),       # d/dg: 1 where x > 0
          lambda h, z, g, x: None],                  # d/dx: 0 almost everywhere
    needs=("x",),
    inputs=("dy", "x"),
    rule="∂dy = relu_grad(g, x) = g where x > 0, else 0; ∂x = none (flat almost everywhere)",
    elementwise=True,
    same_dtype=False, doc="g·[x > 0]: the gradient of relu (a NaN in g stays NaN, as in TensorFlow).",
)
relu = _unary("relu", lambda xp, x: xp.maximum(x, 0),
              lambda g, y, x: _relu_grad(g, y),  # y > 0 exactly where x > 0: keeps y, as TensorFlow
              "max(x, 0); NaN stays NaN. Gradient 1 where x > 0, else 0 (0 at x = 0, as TensorFlow).",
              float_only=False, ordered=True,
              needs=("y",),
              rule="∂x = relu_grad(g, y) = g where y > 0 (that is, x > 0), else 0 (y = relu(x), the output)",
              example=('eg.relu([-1.0, 2.0]).numpy()', 'array([0., 2.], dtype=float32)'))


def _softplus_forward(xp, x):
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x.
    return (xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


softplus = _unary("softplus", _softplus_forward,
                  lambda g, y, x: g * sigmoid(x),
                  "log(1 + e**x), stable for large |x|. Gradient sigmoid(x).", ordered=True,
                  needs=("x",), rule="∂x = g·σ(x)",
                  example=("eg.softplus([0.0, 1000.0]).numpy()",
                           "array([6.931472e-01, 1.000000e+03], dtype=float32)"))
