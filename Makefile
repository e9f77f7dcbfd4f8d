# Two commands set everything up on a machine that has only Python:
#   make lab    open the lessons in JupyterLab
#   make test   run the whole test suite
# Both install uv (into .tools/) when it is missing, then let uv build .venv from uv.lock.

PYTHON ?= python3
UV_VERSION ?= 0.13.8
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
SYNC_LESSONS := --extra lessons
export UV_PYTHON_DOWNLOADS := never
# JupyterLab refuses to run as root unless told (containers, CI machines): tell it only then.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)

.PHONY: lab test test-fast lint html browser-deps bench bench-gpu clean

.tools/bin/uv:
	$(PYTHON) tools/bootstrap_uv.py $(UV_VERSION) .tools

uv: $(if $(filter .tools/bin/uv,$(UV)),.tools/bin/uv)

lab: uv
	$(UV) sync --frozen $(SYNC_LESSONS)
	$(UV) run --frozen $(SYNC_LESSONS) jupyter lab $(LAB_ARGS) lessons/00_start_here.ipynb

test: uv
	$(UV) sync --frozen $(SYNC_LESSONS)
	$(UV) run --frozen $(SYNC_LESSONS) pytest

test-fast: uv
	$(UV) sync --frozen $(SYNC_LESSONS)
	$(UV) run --frozen $(SYNC_LESSONS) pytest -m "not browser and not slow"

lint: uv
	$(UV) run --frozen $(SYNC_LESSONS) ruff check .

# Execute every lesson and export static HTML pages (widget state embedded) into site/. Their scripts
# (widgets HTML manager, RequireJS, MathJax) go to site/_static/, fetched once with npm into build/npm/.
html: uv
	$(UV) sync --frozen $(SYNC_LESSONS)
	$(UV) run --frozen $(SYNC_LESSONS) python tools/export_html.py --out site

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
	$(UV) sync --frozen --inexact $(SYNC_LESSONS) --group bench
	@if ls $(TORCH_WHEELS)/torch-2.13.0*.whl >/dev/null 2>&1 && \
	    $(UV) pip install --find-links $(TORCH_WHEELS) torch==2.13.0; then :; else \
	    echo "note: PyTorch 2.13.0 not installed (no wheel in $(TORCH_WHEELS)): the tables skip it"; fi
	$(UV) run --frozen $(SYNC_LESSONS) python bench/cpu.py $(BENCH_ARGS)

bench-gpu: uv
	$(UV) run --frozen $(SYNC_LESSONS) python bench/gpu.py $(BENCH_ARGS)
