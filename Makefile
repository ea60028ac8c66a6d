# One-command set-up: every target creates the venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The CPU wheel; a bare `torch` requirement with no torch installed pulls a CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: install demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# Record the example (a small model with a graph break and a recompile) and print the summary.
demo: install
	$(BIN)/pt2-explorer record examples/tiny_model.py --json out/demo-report.json
	@echo "report written to out/demo-report.json (view again: $(BIN)/pt2-explorer report out/demo-report.json)"

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

LINTED := $(wildcard compiler explorer tests benchmarks examples)

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

bench: install
	$(BIN)/python benchmarks/overhead.py

clean:
	rm -rf $(VENV) out .pytest_cache
