"""Layers (``eg.layers``): Keras-like building blocks with named, seeded variables.

`Dense`, `Conv2D`, `MaxPool2D`, `Flatten`, `Dropout` and `Sequential`. Each is called as
``layer(x, training=False)``, builds its variables on the first call and lists them in
``trainable_variables``, which is what an optimizer updates. A training loop stays a loop you can
read: see `engine.training`.

>>> import engine as eg
>>> eg.layers.reset_names()
>>> model = eg.layers.Sequential([
...     eg.layers.Conv2D(8, 3, activation="relu", seed=0),
...     eg.layers.MaxPool2D(2),
...     eg.layers.Flatten(),
...     eg.layers.Dense(10, seed=1),
... ])
>>> model(eg.zeros((1, 8, 8, 1))).shape
(1, 10)
>>> [v.name for v in model.trainable_variables]
['conv2d_1/kernel', 'conv2d_1/bias', 'dense_1/kernel', 'dense_1/bias']
"""

from . import initializers
from .base import Layer, get_activation, reset_names
from .conv import Conv2D
from .dense import Dense
from .dropout import Dropout
from .pooling import MaxPool2D
from .reshaping import Flatten
from .sequential import Sequential

__all__ = ["Layer", "Dense", "Conv2D", "MaxPool2D", "Flatten", "Dropout", "Sequential", "get_activation",
           "reset_names", "initializers"]
