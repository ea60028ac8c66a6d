# One-command set-up: every target creates the venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The CPU wheel; a bare `torch` requirement with no torch installed pulls a CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: install extension demo test test-slow test-all test-isa lint docs bench clean

# The JupyterLab extension (extension/, TypeScript): npm installs its packages and builds the
# prebuilt extension into extension/labextension, which the install copies into the venv
# (share/jupyter/labextensions/pt2-explorer), and the graph view's component (extension/src/graph,
# bundled by esbuild) into explorer/static/graphview.js, and the static page's code highlighting
# (extension/src/highlight: highlight.js) into explorer/static/highlight.js. Needs node and npm;
# see docs/extension.md.
# `npm install` (not `npm ci`): it takes package-lock.json's versions and leaves it as it is,
# where `npm ci` refuses a lock made on a registry without rspack's other-platform binaries.
EXTENSION := extension/labextension/package.json
# the graph view's bundle (also made by build:prod): rebuilt when only its sources changed
GRAPHVIEW := explorer/static/graphview.js
HIGHLIGHT := explorer/static/highlight.js
extension: $(EXTENSION) $(GRAPHVIEW) $(HIGHLIGHT)

extension/node_modules/.package-lock.json: extension/package.json extension/package-lock.json
	cd extension && npm install --no-audit --no-fund && touch node_modules/.package-lock.json

$(EXTENSION): extension/node_modules/.package-lock.json extension/tsconfig.json $(wildcard extension/src/* extension/style/*)
	cd extension && npm run build:prod

$(GRAPHVIEW): extension/node_modules/.package-lock.json $(wildcard extension/src/graph/*)
	cd extension && npm run build:graph

$(HIGHLIGHT): extension/node_modules/.package-lock.json $(wildcard extension/src/highlight/*)
	cd extension && npm run build:highlight

$(VENV)/.installed: pyproject.toml $(EXTENSION) $(GRAPHVIEW) $(HIGHLIGHT)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	echo "$(TORCH_SPEC)" > $(VENV)/torch-constraint.txt  # nothing below may replace torch
	$(BIN)/python -m pip install -q -c $(VENV)/torch-constraint.txt -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# `make demo`: JupyterLab on the tour notebook; it prints the URL to open (no browser is started).
# `make demo HEADLESS=1`: record the example script (a small model with a graph break and a
# recompile), print the summary, write out/demo-report.json and out/demo-report.html.
HEADLESS ?=
DEMO_PORT ?= 8888
ifeq ($(HEADLESS),)
demo: install
	@token=$$($(BIN)/python -c 'import secrets; print(secrets.token_hex(16))'); \
	echo; echo "PT2 Explorer tour, open:"; \
	echo "    http://127.0.0.1:$(DEMO_PORT)/lab/tree/notebooks/00_tour.ipynb?token=$$token"; \
	echo "(from another machine: ssh -L $(DEMO_PORT):127.0.0.1:$(DEMO_PORT) <this host> first; Ctrl-C stops)"; echo; \
	JUPYTER_TOKEN=$$token exec $(BIN)/jupyter lab --no-browser --ServerApp.ip=127.0.0.1 \
		--ServerApp.port=$(DEMO_PORT) --ServerApp.port_retries=0 --ServerApp.root_dir=. \
		$(if $(filter 0,$(shell id -u)),--allow-root)
else
demo: install
	$(BIN)/pt2-explorer record --json out/demo-report.json --html out/demo-report.html examples/tiny_model.py
	@echo "open out/demo-report.html in a browser (view the summary again: $(BIN)/pt2-explorer report out/demo-report.json)"
endif

# `make test`: the tests a change is checked with, about 4 minutes on 2 CPUs. The tests that
# take tens of seconds to minutes each carry a mark saying why (pyproject.toml's markers: real
# models, notebooks, the census, a browser, torchrun, fresh installs, fuzzing, AOTInductor,
# programs in child processes); `make test-slow` runs those, `make test-all` both (CI). Each
# prints its 15 slowest tests. pytest exits 5 when it selects no test (PYTEST_ARGS naming only
# marked tests, or none): not a failure here.
LONG := corpus or notebook or census or browser or distributed or install or stress or aoti or child
PYTEST := $(BIN)/python -m pytest --durations=15
test: install
	$(PYTEST) -m "not ($(LONG))" $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-slow: install
	$(PYTEST) -m "$(LONG)" $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-all: test test-slow

# The tests that compile C++ kernels with Inductor, again as on another CPU: the kernels' code
# (vector width, the packed GEMM weight's size, the micro-GEMM chosen) depends on the CPU's
# instruction set; ATEN_CPU_CAPABILITY=default makes torch generate them as for a CPU without
# SIMD, so an expectation tied to this CPU fails here, not on a newcomer's machine. CI runs it.
ISA_TESTS := tests/test_max_autotune.py tests/test_e2e_inductor.py tests/test_fusion_ir.py \
	tests/test_compile_time.py tests/test_bench.py tests/test_frames.py
test-isa: install
	ATEN_CPU_CAPABILITY=default $(BIN)/python -m pytest $(PYTEST_ARGS) $(ISA_TESTS)

LINTED := $(wildcard compiler explorer tests benchmarks examples notebooks docs)

lint: install
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	cd extension && npm run --silent lint
	@$(BIN)/python benchmarks/sizes.py  # the largest modules, Python and TypeScript; fails on one over 400 lines (CONTRIBUTING.md)

# `make docs`: the documentation site (mkdocs.yml: MkDocs with Material; the API pages made from
# the public names' docstrings by mkdocstrings, the report's fields and the view list from the
# code, docs/_hooks/generate.py) built into out/site with warnings as errors: every link and
# anchor resolves. About 15 seconds.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: install
	$(BIN)/python benchmarks/overhead.py

clean:
	rm -rf $(VENV) out .pytest_cache
	rm -rf extension/node_modules extension/lib extension/labextension extension/tsconfig.tsbuildinfo explorer/static
