# Two commands set everything up on a machine that has only Python 3.11+:
#   make lab    open the course in JupyterLab (the repository root, lesson 00 showing)
#   make test   run the whole test suite
# Both install uv (into .tools/) when it is missing, then let uv build .venv from uv.lock: `make lab`
# installs what the lessons need, `make test` adds the test tooling (uv's dev group).
#
# GPU (CuPy, with the CUDA libraries from the index; only an NVIDIA driver is needed):
#   make lab GPU=1        add CuPy for CUDA 12 (GPU=cuda13: for CUDA 13) and remember the choice in
#                         .gpu, so that later plain `make lab` / `make test` keep CuPy installed
#   make lab GPU=0        back to CPU only (removes CuPy and .gpu)
# GPU= works the same with every target below that installs (test, test-fast, html, bench).

PYTHON ?= python3
UV_VERSION ?= 0.13.8
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
export UV_PYTHON_DOWNLOADS := never
# JupyterLab refuses to run as root unless told (containers, CI machines): tell it only then.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)

# --- the GPU choice: GPU=... on the command line wins and is saved; else the saved one, else none.
GPU_FILE := .gpu
GPU_EXTRA_1 := --extra gpu
GPU_EXTRA_cuda12 := --extra gpu
GPU_EXTRA_cuda13 := --extra gpu-cuda13
ifeq ($(origin GPU),command line)
GPU_CHOICE := $(strip $(GPU))
GPU_CHANGED := 1
else
GPU_CHOICE := $(strip $(shell cat $(GPU_FILE) 2>/dev/null))
GPU_CHANGED :=
endif
ifneq ($(filter-out 0 cpu 1 cuda12 cuda13,$(GPU_CHOICE)),)
$(error GPU=$(GPU_CHOICE)$(if $(GPU_CHANGED),, (from $(GPU_FILE))): use GPU=1 or GPU=cuda12 (CuPy for CUDA 12), GPU=cuda13, or GPU=0 (CPU only))
endif
GPU_EXTRA := $(GPU_EXTRA_$(GPU_CHOICE))
# After a successful install: save GPU=... from the command line (or forget it for GPU=0).
REMEMBER_GPU := $(if $(GPU_CHANGED),$(if $(GPU_EXTRA),echo $(GPU_CHOICE) > $(GPU_FILE) && echo "make: GPU=$(GPU_CHOICE) saved in $(GPU_FILE); later runs keep CuPy (make lab GPU=0 removes it)",rm -f $(GPU_FILE) && echo "make: CPU only (CuPy removed, $(GPU_FILE) deleted)"),:)

EXTRAS := --extra lessons$(if $(GPU_EXTRA), $(GPU_EXTRA))
# The lab: no dev group (pytest, Playwright, ruff...) unless `make test` installed it already, and then
# it stays. --inexact: nothing `make test` added is removed, so a lab running beside `make test` never
# loses a package. An explicit GPU= syncs exactly, to add or remove CuPy (and switch CUDA versions).
DEV_INSTALLED := $(wildcard .venv/bin/pytest)
SYNC_LAB := $(UV) sync --frozen $(EXTRAS)$(if $(DEV_INSTALLED),, --no-dev)$(if $(GPU_CHANGED),, --inexact)
# The tests: exactly uv.lock's lesson extras, the grading extra (nbgrader: tests/test_assignments.py),
# the site extra (Sphinx: the course website's tests), dev group and the chosen GPU extra.
SYNC_TEST := $(UV) sync --frozen $(EXTRAS) --extra grading --extra site
RUN := $(UV) run --frozen --no-sync

# JupyterLab rooted at the repository (engine/ and gradviz/ are visible), opening lesson 00, with the
# settings of binder/overrides.json as defaults (autosave off: edits reach a lesson file only when
# saved, so closing without saving discards them; `make reset-lessons` restores saved-over lessons).
REPO := $(patsubst %/,%,$(dir $(abspath $(firstword $(MAKEFILE_LIST)))))
START_URL := /lab/tree/lessons/00_start_here.ipynb
LAB_SETTINGS := $(REPO)/binder
LAB := jupyter lab --ServerApp.root_dir=$(REPO) --LabApp.default_url=$(START_URL) \
	--LabApp.app_settings_dir=$(LAB_SETTINGS) $(LAB_ARGS)

.PHONY: uv lab test test-fast test-fuzz lint html assignments browser-deps bench bench-gpu reset-lessons clean

.tools/bin/uv:
	$(PYTHON) tools/bootstrap_uv.py $(UV_VERSION) .tools

uv: $(if $(filter .tools/bin/uv,$(UV)),.tools/bin/uv)

lab: uv
	$(SYNC_LAB)
	@$(REMEMBER_GPU)
	$(RUN) $(LAB)

test: uv
	$(SYNC_TEST)
	@$(REMEMBER_GPU)
	$(RUN) pytest

test-fast: uv
	$(SYNC_TEST)
	@$(REMEMBER_GPU)
	$(RUN) pytest -m "not browser and not slow"

# The graph-mode equivalence fuzzer (tests/test_function_fuzz.py) with a long budget: 20,000 random
# programs, each traced and run eagerly over several calls (a few minutes; the suite runs 200).
FUZZ_EXAMPLES ?= 20000
test-fuzz: uv
	$(SYNC_TEST)
	@$(REMEMBER_GPU)
	GRADLAB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(RUN) pytest -p no:cacheprovider tests/test_function_fuzz.py

lint: uv
	$(SYNC_TEST)
	$(RUN) ruff check .

# Every lesson back to its committed version: discards edits saved into lessons/*.ipynb (your own new
# notebooks are kept).
reset-lessons:
	git checkout -- lessons/

# The course website in site/ (tools/build_site.py: Sphinx + myst-nb + sphinx-book-theme, the `site`
# extra): one page per lesson, each executed by the build, its widgets alive without a kernel, with
# navigation, search and launch buttons. Their scripts (widgets HTML manager, RequireJS, MathJax) go to
# site/_static/, fetched once with npm into build/npm/. Launch buttons: GRADLAB_REPOSITORY_URL (else
# the clone's origin), GRADLAB_JUPYTERHUB_URL (default http://localhost:8000).
html: uv
	$(UV) sync --frozen --inexact $(EXTRAS) --extra site
	@$(REMEMBER_GPU)
	$(RUN) python tools/build_site.py --out site

# The nbgrader course folder assignments/ (nbgrader_config.py, source/psNN/: one assignment per lesson
# with graded exercises, each an answer cell and a locked test cell running the lesson's checks); then
# `cd assignments && nbgrader generate_assignment psNN` and so on (README: "Teaching with gradlab").
assignments: uv
	$(UV) sync --frozen --inexact $(EXTRAS) --extra grading
	@$(REMEMBER_GPU)
	$(RUN) python tools/make_assignments.py --out assignments

# Debian's Chromium for the browser tests (needs root; they skip without it).
browser-deps:
	tools/install_chromium.sh

clean:
	rm -rf .venv .tools build dist artifacts

# The CPU benchmark table (bench/README.md): the peers of the `bench` group, plus PyTorch CPU when its
# wheel is in $(TORCH_WHEELS) (never from the index: that would pull GBs of CUDA wheels).
TORCH_WHEELS ?= /opt/wheels
BENCH_ARGS ?=
bench: uv
	$(UV) sync --frozen --inexact $(EXTRAS) --group bench
	@$(REMEMBER_GPU)
	@if ls $(TORCH_WHEELS)/torch-2.13.0*.whl >/dev/null 2>&1 && \
	    $(UV) pip install --python .venv/bin/python --find-links $(TORCH_WHEELS) torch==2.13.0; then :; else \
	    echo "note: PyTorch 2.13.0 not installed (no wheel in $(TORCH_WHEELS)): the tables skip it"; fi
	$(RUN) python bench/cpu.py $(BENCH_ARGS)

bench-gpu: uv
	$(UV) sync --frozen --inexact $(EXTRAS)
	@$(REMEMBER_GPU)
	$(RUN) python bench/gpu.py $(BENCH_ARGS)
