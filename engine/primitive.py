"""Primitives: each op's forward and its vector-Jacobian products (VJPs), defined side by side.

A primitive's forward works on raw arrays (NumPy or CuPy: ``xp`` says which). Its VJPs work on
Tensors with engine ops, one function per input: given the upstream gradient ``g``, the output ``y``
and the inputs, return the gradient for that input. Because VJPs use engine ops, any tape that is
recording while a gradient is computed records them too: that is how second and higher derivatives
work. VJPs may return a gradient of the broadcast shape; `unbroadcast` sums it back, in one place.

Each primitive also explains itself, for people and for gradviz: ``symbol`` (the label graphs draw),
``rule`` (its VJP as text, true to what the VJP computes), ``inputs`` (the names the rule uses),
``elementwise``, ``differentiable`` and ``op_type`` (its TensorFlow op name, which graph mode's
nodes carry). `eg.primitives` maps every name to its primitive.

>>> import engine as eg
>>> cube = Primitive("cube", lambda xp, x: x ** 3, vjps=[lambda g, y, x: g * 3 * x * x],
...                  rule="∂x = g·3x²", symbol="x³", elementwise=True)
>>> x = eg.constant(2.0)
>>> with eg.GradientTape() as tape:
...     tape.watch(x)
...     y = cube(x)
>>> tape.gradient(y, x).numpy()
array(12., dtype=float32)
>>> del REGISTRY["cube"]  # an example, not one of the engine's ops
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from . import backend, checks
from . import listeners as _listeners
from .dtypes import check_scalar, to_array, weak_array, weak_scalar
from .tensor import Tensor, _uids

__all__ = ["Primitive", "REGISTRY", "primitives", "unbroadcast", "apply_unchecked"]

REGISTRY: dict[str, Primitive] = {}
primitives = MappingProxyType(REGISTRY)  # `eg.primitives`: read-only, name → Primitive
_new = object.__new__


class Primitive:
    """One op: ``forward(xp, *arrays, **params)`` plus one VJP per input, and what it says about itself.

    - ``vjps``: ``vjps[i](g, y, *inputs, **params)`` → gradient for input ``i`` (a Tensor or None).
      None for the whole list means "not differentiable": the op is never recorded on a tape.
    - ``inputs``: the names of the tensor inputs, as ``rule`` uses them (``("a", "b")``).
    - ``rule``: the VJP as readable text, every input named (``"∂a = g·b, ∂b = g·a"``; ``g`` is the
      upstream gradient, ``y`` the output). Required when the op is differentiable.
    - ``symbol``: the short label a graph draws (``"×"``); default the name.
    - ``elementwise``: output element i depends only on input elements i (after broadcasting), so the
      VJP is ``g`` times a local derivative of the same shape.
    - ``same_dtype``: tensor inputs must share one dtype (TensorFlow's rule; no silent promotion).
    - ``float_only``: inputs must be floating (exp of an int32 tensor is a TypeError).
    - ``op_type``: the TensorFlow op this is (``"MatMul"``), the type of its `eg.function` graph nodes;
      default the CamelCase of the name (``"log_softmax"`` → ``"LogSoftmax"``).
    - ``numeric``: inputs must be numbers, not bool (``bool_tensor * 2`` is a TypeError, as in
      TensorFlow: arithmetic needs eg.cast(mask, 'int32') or 'float32' first).
    - ``ordered``: the op compares values (max, <, relu), so complex inputs are a TypeError: complex
      numbers have no order (NumPy's lexicographic one is not what anyone means).
    - ``example``: ``(call, what it shows)``, appended to the docstring as a doctest.
    - ``needs``: the values the VJPs read: names from ``inputs`` and ``"y"`` (the output). A tape's
      record keeps only these arrays; for the others it keeps shape, dtype and device (all a VJP may
      read of them). Default None: everything is kept (safe for a primitive written elsewhere).

    >>> import engine as eg
    >>> p = eg.primitives["multiply"]
    >>> p.symbol, p.rule, p.elementwise, p.op_type
    ('×', '∂a = g·b, ∂b = g·a', True, 'Mul')
    """

    __slots__ = ("name", "forward", "vjps", "same_dtype", "float_only", "inputs", "symbol", "rule",
                 "elementwise", "op_type", "kinds", "needs", "keep", "vjp_per_input", "__dict__")

    def __init__(self, name: str, forward: Callable, vjps: Sequence[Callable] | Callable | None = None,
                 *, inputs: Sequence[str] = ("x",), rule: str | None = None, symbol: str | None = None,
                 elementwise: bool = False, same_dtype: bool = True, float_only: bool = False,
                 op_type: str | None = None, numeric: bool = False, ordered: bool = False,
                 doc: str | None = None,
                 example: tuple[str, str] | None = None, needs: Sequence[str] | None = None):
        if name in REGISTRY:
            raise ValueError(f"Primitive {name!r} exists already (eg.primitives[{name!r}]); "
                             "choose another name.")
        if vjps is not None and not rule:
            raise ValueError(f"Primitive {name!r}: a differentiable primitive needs its rule text "
                             "(rule=...).")
        self.name = name
        self.forward = forward
        self.vjps = vjps
        self.vjp_per_input = vjps is not None and not callable(vjps)  # one VJP per input (not variadic)
        self.same_dtype = same_dtype
        self.float_only = float_only
        kinds = "fc" if float_only else "iufc" if numeric else "biufc"
        self.kinds = kinds.replace("c", "") if ordered else kinds  # the dtype kinds the op accepts
        self.inputs = tuple(inputs)
        self.symbol = symbol or name
        self.rule = rule or f"not differentiable: no gradient for {', '.join(self.inputs)}"
        self.elementwise = bool(elementwise)
        self.needs, self.keep = _needs(name, self.inputs, needs)
        self.op_type = op_type or "".join(part[:1].upper() + part[1:] for part in name.split("_"))
        self.__doc__ = doc or forward.__doc__
        if example is not None:  # (a call, what it shows): a doctest, run with the suite (engine.ops)
            self.__doc__ = f"{self.__doc__}\n\n>>> import engine as eg\n>>> {example[0]}\n{example[1]}\n"
        REGISTRY[name] = self

    # Whether the VJPs are right for complex inputs too: g·f'(z) for a holomorphic (or linear) op, the
    # transpose convention (as JAX; TensorFlow returns the conjugate). engine.ops lists the ops that are.
    complex_grad = False

    @property
    def differentiable(self) -> bool:
        """Whether tapes record this op (it has VJPs)."""
        return self.vjps is not None

    def shape_depends_on_values(self, params: dict) -> bool:
        """Whether the output's shape depends on input values, not only on shapes (``x[mask]``):
        graph mode checks such an op's shape on every replay. Default: False."""
        return False

    def vjp(self, index: int, g: Tensor, y: Tensor, inputs: Sequence[Tensor], params: dict) -> Tensor | None:
        """The gradient for input ``index``; a single callable serves variadic ops (concat)."""
        rule = self.vjps
        if callable(rule):
            return rule(index, g, y, *inputs, **params)
        if params:
            return rule[index](g, y, *inputs, **params)
        return rule[index](g, y, *inputs)  # (most ops have no parameters: no keyword dict to build)

    def __repr__(self) -> str:
        return f"<Primitive {self.name}: {self.rule}>"


def _needs(name: str, inputs: tuple[str, ...], needs: Sequence[str] | None) -> tuple[Any, Any]:
    """``needs`` checked, and what a record keeps: None (everything), or (one flag per input name, the
    last one repeated for variadic inputs (given twice at least); whether the output is kept)."""
    if needs is None:
        return None, None
    needs = tuple(needs)
    unknown = [n for n in needs if n not in inputs and n != "y"]
    if unknown:
        raise ValueError(f"Primitive {name!r}: needs names {unknown}, which are not among its inputs "
                         f"{list(inputs)} or 'y' (the output).")
    flags = tuple(n in needs for n in inputs)
    return needs, (flags + flags[-1:] * (2 - len(flags)), "y" in needs)


def apply(prim: Primitive, *args: Any, **params: Any) -> Tensor:
    """Run ``prim`` on ``args``: convert, compute, wrap, record.

    Calling a primitive is calling this, for every op and every VJP: the engine's hot path. So the
    common cases (tensors on the CPU, one or two inputs) take the shortest route, and the error
    messages (the functions after `unbroadcast`) are built only when something is wrong.
    """
    # 1. Convert: read Variables, make Python and NumPy values tensors (`engine.dtypes`' rules), and
    #    check that the inputs agree: one device; for most ops one dtype, of a kind the op takes.
    inputs = args
    for a in args:
        if type(a) is not Tensor:
            inputs = _as_inputs(prim, args)
            break
    first = inputs[0]
    dev, dtype, n = first._device, first._data.dtype, len(inputs)
    if n == 2:  # (the common case, checked inline)
        second = inputs[1]
        if second._device is not dev or (prim.same_dtype and second._data.dtype is not dtype
                                         and second._data.dtype != dtype):  # (NumPy shares dtypes)
            _check_inputs(prim, inputs)
    elif n > 2:
        _check_inputs(prim, inputs)
    if dtype.kind not in prim.kinds:
        _raise_kind(prim, first)

    # 2. Compute: the forward on raw arrays (on a GPU, CuPy computes on its current device).
    try:
        if dev.kind == "gpu":
            with dev.activate():
                out = prim.forward(dev.xp, *[t._data for t in inputs], **params)
        elif n == 1:  # (without parameters, a plain call: no keyword dict to build)
            out = prim.forward(dev.xp, first._data, **params) if params else prim.forward(dev.xp, first._data)
        elif n == 2:
            out = (prim.forward(dev.xp, first._data, second._data, **params) if params
                   else prim.forward(dev.xp, first._data, second._data))
        else:
            out = prim.forward(dev.xp, *[t._data for t in inputs], **params)
    except (ValueError, IndexError, TypeError) as exc:
        raise _explain(prim, inputs, params, exc) from exc

    # 3. Wrap: a new Tensor (`Tensor._make`, inlined: this runs for every op).
    y = _new(Tensor)
    y._data, y._device, y._uid, y.name = out, dev, next(_uids), None

    # 4. Record: tell the listeners (tapes, a trace) if there are any; one global read when none.
    if _listeners.listening:
        _listeners.record(prim, inputs, y, params)
    return y


Primitive.__call__ = apply  # type: ignore[method-assign]  (one call frame less per op)


def apply_unchecked(prim: Primitive, device: backend.Device, *inputs: Tensor, **params: Any) -> Tensor:
    """Run ``prim`` on ``device`` for engine code whose inputs need no conversion or checks: compute,
    wrap, tell the listeners (an `eg.function` graph runs it again on every call). For an op with no
    tensor inputs (a random draw), and for an optimizer's step, whose errors reach the user as raised.

    >>> import engine as eg
    >>> apply_unchecked(eg.primitives["random_uniform"], backend.CPU, draw=lambda: np.zeros(2)).shape
    (2,)
    """
    arrays = [t._data for t in inputs] if inputs else ()
    if device.kind == "gpu":
        with device.activate():
            out = prim.forward(device.xp, *arrays, **params)
    else:
        out = prim.forward(device.xp, *arrays, **params)
    y = Tensor._make(out, device)
    if _listeners.listening:
        _listeners.record(prim, inputs, y, params)
    return y


def _check_inputs(prim: Primitive, inputs: Sequence[Tensor]) -> None:
    """Raise the clear error when the inputs are on different devices or (for most ops) dtypes."""
    dev, dtype = inputs[0]._device, inputs[0]._data.dtype
    for t in inputs:
        if t._device is not dev:
            _raise_device_mismatch(prim, inputs)
        if prim.same_dtype and t._data.dtype != dtype:
            _raise_dtype_mismatch(prim, inputs)


def _as_inputs(prim: Primitive, args: Sequence[Any]) -> tuple[Tensor, ...]:
    """The arguments as tensors: Variables read (so tapes see the read), Python values converted."""
    ref = None
    for a in args:
        if isinstance(a, Tensor):
            ref = a
            break
    if ref is None and len(args) > 1 and prim.same_dtype:
        ref = _common_tensor(args, prim.name)  # eg.add(1, 2.5): all Python values; find one dtype for them
    inputs = []
    for a in args:
        if isinstance(a, Tensor):
            if a._is_variable:
                a = a._read()
        else:
            a = _weak_tensor(prim, a, ref)
        inputs.append(a)
    return tuple(inputs)


def _weak_tensor(prim: Primitive, value: Any, ref: Tensor | None) -> Tensor:
    """Turn a Python or NumPy value into a tensor for ``prim``, beside the tensor input ``ref``."""
    if (ref is None or not prim.same_dtype) and backend.is_device_array(value):
        return Tensor._make(to_array(value, prim.name), backend.device_of_array(value))  # stays on its GPU
    if ref is None:
        dev = backend.current_device()
        return Tensor._make(_place(to_array(value, prim.name), dev), dev)
    if prim.same_dtype:
        return weak_like(value, ref, prim.name)
    return Tensor._make(_place(to_array(value, prim.name), ref._device), ref._device)


def weak_like(value: Any, ref: Tensor, op: str) -> Tensor:
    """``value`` as a tensor on ``ref``'s device with ``ref``'s dtype.

    This is TensorFlow's rule for ``x * 2``: the literal adopts the tensor's dtype, so float32 stays
    float32; a value that does not fit (1.5 or 2**40 into an int32 op) is an error. NumPy arrays keep
    their dtype, so they must match ``ref``'s (`engine.dtypes.weak_array` decides).
    """
    target = ref._data.dtype
    if (type(value) is float or type(value) is int) and target.kind in "fc":  # `x * 2`: the common case
        if ref._device.kind == "gpu":
            check_scalar(value, target, op)  # (1e39 does not become a float32 inf)
            return Tensor._make(_device_scalar(value, target, ref._device), ref._device)
        return Tensor._make(weak_scalar(value, target, op), ref._device)
    array = weak_array(value, target, op)
    if backend.is_device_array(array):  # a raw CuPy array stays on its own GPU
        return Tensor._make(array, backend.device_of_array(array))
    return Tensor._make(_place(array, ref._device), ref._device)


def _common_tensor(values: Sequence[Any], op: str) -> Tensor:
    """A tensor for the value whose default dtype the others can join (floats win over ints)."""
    for v in values:
        if backend.is_device_array(v):  # a raw CuPy array: its dtype and GPU win
            return Tensor._make(to_array(v, op), backend.device_of_array(v))
    arrays = [to_array(v, op) for v in values]
    widest = max(range(len(arrays)), key=lambda i: "biufc".index(arrays[i].dtype.kind)
                 if arrays[i].dtype.kind in "biufc" else -1)
    dev = backend.current_device()
    return Tensor._make(_place(arrays[widest], dev), dev)


_SCALARS: dict[tuple, Any] = {}


def _device_scalar(value: float | int, dtype: np.dtype, dev: backend.Device) -> Any:
    """A 0-d device array for a Python number, uploaded once and then reused (an upload per ``x * 2``
    would be a host-to-device copy per op). Safe because tensors never change their arrays in place."""
    key = (type(value), repr(value), dtype.str, dev.index)  # repr: 0.0 and -0.0 are different keys
    array = _SCALARS.get(key)
    if array is None:
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        array = _SCALARS[key] = backend.transfer(np.array(value, dtype=dtype), dev)
    return array


def _place(array: Any, dev: backend.Device) -> Any:
    return backend.transfer(array, dev) if dev.kind == "gpu" else array


def unbroadcast(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``g`` down to ``shape``: the gradient of broadcasting ``shape`` up to ``g.shape``.

    Written with engine ops (sum, reshape) so that it is differentiable too.

    >>> import engine as eg
    >>> unbroadcast(eg.ones((2, 3)), (3,)).numpy()
    array([2., 2., 2.], dtype=float32)
    """
    shape = tuple(shape)
    have = g._data.shape
    extra = len(have) - len(shape)
    axes = tuple(range(extra)) + tuple(
        i + extra for i, n in enumerate(shape) if n == 1 and have[i + extra] != 1
    )
    if axes:  # the primitives themselves (ops imports this module): these axes need no checking
        g = REGISTRY["sum"](g, axis=axes, keepdims=False)
    if tuple(g._data.shape) != shape:
        g = REGISTRY["reshape"](g, shape=shape)
    return g


# ---- error messages: built only when something went wrong, so they cost nothing otherwise -------

def _describe(inputs: Sequence[Tensor]) -> str:
    return ", ".join(f"{tuple(t.shape)} {t.dtype} on {t.device}" for t in inputs)


def _raise_device_mismatch(prim: Primitive, inputs: Sequence[Tensor]) -> None:
    devices = sorted({t.device for t in inputs})
    raise ValueError(
        f"{prim.name}: inputs are on different devices ({' and '.join(devices)}): {_describe(inputs)}. "
        f"Move them to one device first, e.g. x.to('{devices[0]}') or x.cpu()."
    )


def _raise_kind(prim: Primitive, x: Tensor) -> None:
    if x.dtype.kind == "c":
        raise TypeError(f"{prim.name}: complex numbers have no order (got {x.dtype}, shape {x.shape}); "
                        "compare their magnitudes instead: eg.abs(x).")
    if prim.float_only:
        checks.floating(x.dtype, x.shape, prim.name)
    raise TypeError(f"{prim.name}: bool tensors do no arithmetic (got a bool tensor of shape {x.shape}), "
                    "as in TensorFlow. Cast first: eg.cast(x, 'int32') or eg.cast(x, 'float32'); "
                    "logical ops (&, |, ^, ~) work on bool tensors.")


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _raise_dtype_mismatch(prim: Primitive, inputs: Sequence[Tensor]) -> None:
    """The error for mixed dtypes, suggesting the cast that loses nothing: the int one to the float
    dtype (never the float one to int, which would drop the fractions), the narrower float to the wider."""
    dtypes = [t.dtype for t in inputs]
    top = max(_KIND_RANK.get(d.kind, 0) for d in dtypes)
    common = np.result_type(*[d for d in dtypes if _KIND_RANK.get(d.kind, 0) == top])
    names = [prim.inputs[i] if i < len(prim.inputs) else f"input {i}" for i in range(len(inputs))]
    wrong = [i for i, d in enumerate(dtypes) if d != common]
    what = " and ".join(f"{names[i]} ({dtypes[i]})" for i in wrong)
    raise TypeError(
        f"{prim.name}: inputs have different dtypes ({', '.join(map(str, dtypes))}); shapes "
        f"{', '.join(str(t.shape) for t in inputs)}. The engine never promotes silently: convert "
        f"{what} to {common}, e.g. eg.cast({names[wrong[0]]}, '{common}')."
    )


def _explain(prim: Primitive, inputs: Sequence[Tensor], params: dict, exc: Exception) -> Exception:
    shapes = [t.shape for t in inputs]
    if len(inputs) >= 2 and "broadcast" in str(exc):
        hint = ("Shapes broadcast when, aligned from the right, each pair of sizes is equal or one of "
                "them is 1. Reshape or expand_dims one input.")
        return ValueError(f"{prim.name}: shapes {' and '.join(map(str, shapes))} cannot be broadcast "
                          f"together. {hint}")
    detail = f" with {params}" if params else ""
    return type(exc)(f"{prim.name}: failed on inputs {_describe(inputs)}{detail}: {exc}")
