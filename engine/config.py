"""Engine-wide settings, read at the moment they matter.

>>> import engine as eg
>>> eg.config.soft_placement
True
"""

#: Asking for a GPU that is not there warns once and uses the CPU (True), or raises (False).
soft_placement: bool = True

#: CPU matrix products with fewer multiply-adds than this (m·k·n, times the batch) run on one BLAS
#: thread; larger ones use the BLAS library's threads (see engine/threads.py). 0: never limit.
blas_single_thread_below: int = 2**28
