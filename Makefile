# Two commands do all the set-up: `make lab` (learn) and `make test` (prove).
# Both create .venv on first use and are no-ops for the install on later runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.course-installed
KERNEL := pytorch-internals
# The torch build to install. This pin takes the CPU wheel on Linux; on a Mac use
# `make lab TORCH_SPEC=torch` to get PyPI's macOS wheel, which includes the MPS backend.
TORCH_SPEC ?= torch==2.13.0
JOBS ?= 2
NBVAL := --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
# Installs go through uv (PyPI's `uv`, put in each venv by pip): on a 2-core machine it installed
# torch and the course's dependencies in about 20 s where pip took over 3 minutes (README, Speed).
# uv reads none of pip's settings, so the wheel folders, indexes and constraints pip is set up
# with (a machine's own torch wheels, say) are handed on; among several indexes it takes the best
# version, as pip does. `uv_install VENV` is the install command for that venv.
pip_setting = $(shell $(PYTHON) -m pip config list 2>/dev/null | sed -n "s/^global\.$(1)='\(.*\)'$$/\1/p")
UV_FLAGS := --index-strategy unsafe-best-match \
	$(addprefix --find-links ,$(sort $(PIP_FIND_LINKS) $(call pip_setting,find-links))) \
	$(addprefix --extra-index-url ,$(sort $(PIP_EXTRA_INDEX_URL) $(call pip_setting,extra-index-url))) \
	$(addprefix --constraint ,$(sort $(PIP_CONSTRAINT) $(call pip_setting,constraint)))
uv_install = $(1)/bin/python -m uv pip install -q --python $(1)/bin/python $(UV_FLAGS)

.PHONY: lab test test-unit test-notebooks test-browser lint format notebooks slides site doctor clean
.PHONY: test-torch cell-times learner guide release

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv
	$(call uv_install,$(VENV)) "$(TORCH_SPEC)"
	$(call uv_install,$(VENV)) -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) \
		--display-name "PyTorch internals (course)" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

# nbgrader, for instructors and the tests of grading only (never in a learner's `make lab`).
TEACH_STAMP := $(VENV)/.course-teach-installed
$(TEACH_STAMP): $(STAMP)
	$(call uv_install,$(VENV)) -e '.[teach]'
	touch $(TEACH_STAMP)

# Learners work in workspace/ (untracked), made from the committed learner copies in learner/:
# `git pull` never conflicts with their notebooks, and an edited one is never overwritten
# (a lesson changed upstream lands beside it as NN_name.new.ipynb; scripts/lab_workspace.py).
lab: $(STAMP)
	$(BIN)/python scripts/lab_workspace.py
	$(BIN)/jupyter lab workspace/00_start_here.ipynb $(LAB_ARGS)

# For instructors: a guide per notebook (build/guide/*.md and build/site/instructor/*.html; with
# JOURNALS=DIR, what a room predicted), and a student release with no solution in it.
guide: $(STAMP)
	$(BIN)/python scripts/make_guide.py $(if $(JOURNALS),--journals $(JOURNALS))

release: $(STAMP)
	@test -n "$(DIR)" || (echo "usage: make release DIR=/path/to/new/folder" && exit 2)
	$(BIN)/python scripts/make_release.py $(DIR)

# The learner copies (no outputs, no solutions) regenerated from the reference notebooks.
learner: $(STAMP)
	$(BIN)/python scripts/make_learner_copies.py

test: lint $(TEACH_STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile -p no:cacheprovider tests notebooks $(NBVAL) -m "not browser"

test-unit: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile tests -m "not browser"

test-notebooks: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile notebooks $(NBVAL)

# JupyterLab + headless Chromium (`apt-get install -y chromium`): each reference notebook and each
# learner copy runs once; panels must fit the cell area; screenshots land in build/screenshots/.
# After each reference's Run All, axe-core finds nothing serious or critical in the course's content
# (JupyterLab's own interface is listed at the end, not failed on); one switchboard session is
# driven with the keyboard alone (tests/browser/test_keyboard.py).
# The site and the decks are opened offline: every slide fits 1280x720, and axe-core (npm, via
# `make web`) finds nothing serious or critical (tests/accessibility.py runs it).
# The JupyterLab suite in two pytest calls: its 22 Run All tests (marker run_all) two at a time
# (two xdist workers, each with its own JupyterLab), each kernel's torch on one thread
# (OMP_NUM_THREADS=1: two kernels of two threads each on 2 cores gained nothing; README, Speed);
# then the rest, one at a time, so the tests that time a response have no Run All beside them.
# Both calls share COURSE_BROWSER_RUN: the second's check across notebooks and each call's report
# read the run's records (build/browser-records/). The second call runs even when the first fails.
# The site and deck suite is a third process: each suite drives its own Playwright (a second sync
# Playwright cannot start inside the first one's event loop in one process).
test-browser: export COURSE_BROWSER_RUN := $(shell date +%Y%m%d-%H%M%S)
test-browser: web
	OMP_NUM_THREADS=1 timeout -k 30 900 $(BIN)/python -m pytest tests/browser \
		-m "browser and run_all" -n 2 \
		--dist load -v -p no:cacheprovider; status=$$?; \
	timeout -k 30 900 $(BIN)/python -m pytest tests/browser -m "browser and not run_all" -v \
		-p no:cacheprovider && exit $$status
	timeout -k 30 600 $(BIN)/python -m pytest tests -m browser -v -p no:cacheprovider \
		--ignore=tests/browser

lint: $(STAMP)
	$(BIN)/ruff check course tests scripts benchmarks notebooks
	$(BIN)/ruff format --check course tests scripts benchmarks notebooks

format: $(STAMP)
	$(BIN)/ruff format course tests scripts benchmarks notebooks
	$(BIN)/ruff check --fix course tests scripts benchmarks notebooks

notebooks: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py $(NB)
	$(BIN)/python scripts/make_learner_copies.py

# The decks and the site work offline: they serve reveal.js, MathJax, require.js and jQuery from
# build/node, which `make web` installs from npm (web/package-lock.json) with the machine's Node.js.
.PHONY: web
web: $(STAMP)
	$(BIN)/python scripts/web_deps.py

slides: web
	$(BIN)/python scripts/build_site.py --slides

site: web
	$(BIN)/python scripts/build_site.py --site

# Notebook 06 shows PyTorch's real MPS kernels, fetched from GitHub at pinned commits into the
# user's cache folder (never into the repository). Run this while online before an offline
# workshop: notebook 06 then shows them offline on this machine, and `make site` puts them in.
.PHONY: fetch-sources
fetch-sources: $(STAMP)
	$(BIN)/python -m course.kernels.upstream

doctor: $(STAMP)
	$(BIN)/python -m course doctor

# A local JupyterHub on 127.0.0.1 (dummy login, for trying the course as a room would; never on a
# network: README's "Workshops on a JupyterHub"). `make test-hub` (CI) logs 3 learners in, runs
# notebook 01 for all at once and prints each one's peak memory and README's sizing table.
HUB_MINUTES ?= 60
.PHONY: hub test-hub
hub: web
	$(BIN)/python hub/local_hub.py serve --minutes $(HUB_MINUTES)

test-hub: web
	timeout -k 30 1500 $(BIN)/python -m pytest -p no:cacheprovider tests/test_hub.py -m hub -v -s

# The diagrams the notebooks' markdown shows (course/figures.py -> assets/*.png); commit them.
# tests/test_assets.py fails when one is missing or stale.
.PHONY: assets
assets: $(STAMP)
	$(BIN)/python scripts/make_assets.py

# Another torch release in a venv of its own, `.venv-torch-$(TORCH)`: unit tests + nbval there,
# less the tests that prove nothing about torch (conftest.py ONE_TORCH: learner copies, nbgrader...)
# (not lint, not the browser), as CI does for the release after the pin. `torch==X` takes
# PyPI's default build (a CUDA one on Linux, several GB). Compiled C++ kernels get a cache of their
# own, so neither venv ever rebuilds or loads the other's.
TORCH ?= 2.14.1
TVENV := .venv-torch-$(TORCH)
TSTAMP := $(TVENV)/.course-installed

$(TSTAMP): pyproject.toml
	test -x $(TVENV)/bin/python || $(PYTHON) -m venv $(TVENV)
	$(TVENV)/bin/python -m pip install -q uv
	$(call uv_install,$(TVENV)) "torch==$(TORCH)"
	$(call uv_install,$(TVENV)) -e '.[dev]'
	touch $(TSTAMP)

test-torch: $(TSTAMP)
	$(TVENV)/bin/python -c "import torch; print('torch', torch.__version__)"
	TORCH_EXTENSIONS_DIR=$(CURDIR)/$(TVENV)/torch-extensions $(TVENV)/bin/python -m pytest \
		-n $(JOBS) --dist loadfile -p no:cacheprovider tests notebooks $(NBVAL) -m "not browser and not one_torch"

# Every code cell's time in the last nbval run (make test / test-torch record them), slowest first.
cell-times: $(STAMP)
	$(BIN)/python scripts/time_cells.py --from-nbval

clean:
	rm -rf build .pytest_cache .ruff_cache
