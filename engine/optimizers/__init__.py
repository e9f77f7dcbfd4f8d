"""Optimizers: ``compute_gradients`` → (transform the pairs) → ``apply_gradients``.

Each update rule is a few lines of array code in its own module, written as in its paper:
`SGD` (alias `GradientDescent`), `Momentum` (and Nesterov), `Adagrad`, `RMSProp`, `Adam`.
`MultiSteps` and `Accumulator` add gradient accumulation; `get` makes one from its name.

>>> import engine as eg
>>> w = eg.Variable(3.0)
>>> opt = eg.optimizers.Adam(learning_rate=0.1)
>>> loss = opt.minimize(lambda: w * w)
>>> sorted(opt.slots(w)), opt.iterations
(['m', 'v'], 1)
"""

from .accumulation import Accumulator, MultiSteps
from .adagrad import Adagrad
from .adam import Adam
from .base import Optimizer
from .momentum import Momentum
from .rmsprop import RMSProp
from .sgd import SGD, GradientDescent

__all__ = ["Optimizer", "SGD", "GradientDescent", "Momentum", "Adagrad", "RMSProp", "Adam",
           "MultiSteps", "Accumulator", "get", "names", "canonical_name"]

_BY_NAME = {"sgd": SGD, "gradientdescent": SGD, "momentum": Momentum, "adagrad": Adagrad,
            "rmsprop": RMSProp, "adam": Adam}


def names() -> tuple[str, ...]:
    """The update rules `get` knows, by their class names (aliases such as ``GradientDescent`` left out).

    >>> names()
    ('SGD', 'Momentum', 'Adagrad', 'RMSProp', 'Adam')
    """
    return tuple(dict.fromkeys(cls.__name__ for cls in _BY_NAME.values()))


def canonical_name(identifier: str) -> str:
    """The class name `get` would use for ``identifier`` (case, spaces and ``_`` ignored; aliases
    resolved); a ValueError names the choices.

    >>> canonical_name("gradient_descent"), canonical_name("adam")
    ('SGD', 'Adam')
    """
    key = str(identifier).lower().replace("_", "").replace(" ", "")
    if key not in _BY_NAME:
        raise ValueError(f"Unknown optimizer {identifier!r}; use one of {', '.join(names())} "
                         "(or GradientDescent, an alias of SGD).")
    return _BY_NAME[key].__name__


def get(identifier, **kwargs) -> Optimizer:
    """An optimizer from its name (case and ``_`` ignored: ``"SGD"``, ``"adam"``, ``"gradient_descent"``,
    ``"Nesterov"`` = Momentum with ``nesterov=True``) and keyword arguments; an optimizer is returned
    as it is.

    >>> get("Adam", learning_rate=0.1)
    <Adam learning_rate=0.1 beta1=0.9 beta2=0.999 epsilon=1e-07 iterations=0>
    """
    if isinstance(identifier, Optimizer | MultiSteps):
        return identifier
    key = str(identifier).lower().replace("_", "").replace(" ", "")
    if key == "nesterov":
        return Momentum(nesterov=True, **kwargs)
    if key not in _BY_NAME:
        raise ValueError(f"Unknown optimizer {identifier!r}; use one of SGD, GradientDescent, Momentum, "
                         "Nesterov, Adagrad, RMSProp, Adam.")
    return _BY_NAME[key](**kwargs)
