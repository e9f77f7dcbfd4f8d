"""Engine-wide settings, read at the moment they matter.

>>> import engine as eg
>>> eg.config.soft_placement
True
"""

#: Asking for a GPU that is not there warns once and uses the CPU (True), or raises (False).
soft_placement: bool = True
