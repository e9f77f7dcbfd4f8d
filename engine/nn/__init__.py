"""Neural-network ops (``eg.nn``): convolution, pooling, dropout and softmax cross-entropy.

Images are NHWC (batch, height, width, channels) and filters HWIO, as in TensorFlow; ``padding`` is
``"SAME"`` or ``"VALID"`` with TensorFlow's exact meaning. Everything is differentiable, to any
order where the maths allows.

>>> import engine as eg
>>> x = eg.random.normal((2, 8, 8, 1), seed=0)
>>> h = eg.nn.max_pool2d(eg.relu(eg.nn.conv2d(x, eg.random.normal((3, 3, 1, 4), seed=1))), 2)
>>> h.shape
(2, 4, 4, 4)
"""

from .conv import conv2d
from .dropout import dropout
from .losses import softmax_cross_entropy, sparse_softmax_cross_entropy
from .pooling import avg_pool2d, max_pool2d

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "dropout", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy"]
