"""Shared test helpers: the devices to parametrise over."""

import engine as eg

#: Every device this machine offers: ["cpu:0"] here, plus "gpu:0" … on a machine with CuPy and a GPU.
DEVICES = eg.list_devices()
