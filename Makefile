# Two commands do all the set-up: `make demo` and `make test` create .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every install gets the versions the tests ran with (pip freeze of a tested venv): open
# ranges alone gave each new machine that day's releases (docs/camera.md's accuracy figures,
# rerun at their own commit with a later day's OpenCV and numpy, read up to 2 cards a cell
# differently).
CONSTRAINTS := constraints.txt
# Three workers on CI's two cores, a test file per worker at a time: many tests wait on a
# broker, a database or a subprocess, and two workers left a fifth of the cores idle (a
# 2026-12-05 run: 20 min 24 s of pytest for 16 min of CPU a core). The ten slowest tests
# are listed after every run: CI has a 20-minute budget.
PYTEST_ARGS ?= -n 3 --dist loadfile --durations=10

.PHONY: demo test lint install constraints clean

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
		|| { echo "need Python 3.11 (set PYTHON=/path/to/python3.11)"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The newest versions pyproject.toml allows, written to constraints.txt: then `make test`,
# and commit both if it passes.
constraints: $(STAMP)
	$(BIN)/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[dev]"
	@{ sed -n '/^#/p' $(CONSTRAINTS); $(BIN)/python -m pip freeze --exclude-editable; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

# The demo's own database is var/demo.db (never the controller's var/studio.db: docs/demo.md).
demo: $(STAMP)
	$(BIN)/studio demo $(ARGS)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy studio drivers calibration hw-sim/hwsim
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy studio drivers calibration hw-sim/hwsim

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
