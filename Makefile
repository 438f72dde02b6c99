# Everything a fresh machine needs, from the registries: a virtualenv with the pinned Python
# packages (pyproject.toml), and Bun and opencode from the npm registry (package.json, pinned by
# package-lock.json).
#
#   make example   set up, then run `beeuni validate` and `beeuni tools ls` on examples/starter
#   make test      set up, then lint, type-check and run the whole test suite (what CI runs)
#   make golden    regenerate the expected outputs under tests/golden/ (read the diff!)
#   make docs      regenerate docs/manifest-reference.md and docs/helpers-reference.md from the rules
#   make bench     the benchmarks under benchmarks/

VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
DEPS := $(VENV)/.deps-installed
BUN := $(CURDIR)/node_modules/.bin/bun

.PHONY: setup example test golden docs bench lint plugin-zod

$(DEPS): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check '.[dev]'
	touch $(DEPS)

# beeuni itself is installed as a wheel, not in editable mode: the tests and benchmarks run the
# package a user gets (package data included), and no import hook slows every start.
$(BUN): package.json package-lock.json
	npm install --no-audit --no-fund --loglevel=error  # `npm ci` refuses a lock whose other-platform optional packages the registry lacks
	touch $(BUN)

# The Bun installed here is linked beside the virtualenv's scripts, where `beeuni` finds it
# without PATH (daemon/host/bun.py).
setup: $(DEPS) $(BUN)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --force-reinstall .
	ln -sf $(BUN) $(BIN)/bun
	rm -rf build

example: setup
	cd examples/starter && $(BIN)/beeuni validate && $(BIN)/beeuni tools ls

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	cd $(VENV) && $(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p beeuni

# The suite runs on every core (up to four): its slow tests are real opencode, Bun and git
# processes, each test in its own folders.
test: lint
	$(BIN)/pytest -q -n auto --maxprocesses 4

golden: setup
	BEEUNI_UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_golden.py tests/test_rule_tests.py tests/test_eject.py tests/test_fix.py
	BEEUNI_UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_rules_diff.py -k golden
	BEEUNI_UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_doc_snippets.py
	$(BIN)/beeuni rules doc > docs/manifest-reference.md
	$(BIN)/beeuni rules doc --helpers > docs/helpers-reference.md
	git status --short tests/golden tests/rule_tests docs README.md

docs: setup
	$(BIN)/beeuni rules doc > docs/manifest-reference.md
	$(BIN)/beeuni rules doc --helpers > docs/helpers-reference.md

bench: setup
	$(BIN)/python benchmarks/bench_validate.py
	$(BIN)/python benchmarks/bench_validate.py --command resolve --runs 5
	$(BIN)/python benchmarks/bench_daemon.py
	$(BIN)/python benchmarks/bench_arguments.py
	$(BIN)/python benchmarks/bench_rules_diff.py
	$(BIN)/python benchmarks/bench_modules.py
	$(BIN)/python benchmarks/bench_migrate.py
	$(BIN)/python benchmarks/bench_lsp.py
	$(BIN)/python benchmarks/bench_hostile.py
	$(BIN)/python benchmarks/bench_rules.py
	$(BIN)/python benchmarks/bench_sessions.py
	$(BIN)/python benchmarks/bench_turns.py

# The zod the standard harness's plugin imports (daemon/plugin_zod.js): bundled from the zod that
# @opencode-ai/plugin pins (package-lock.json), one file that imports nothing, so that the plugin
# resolves no package from any folder (tests/test_plugin_zod.py checks the file is this build).
PLUGIN_ZOD_ENTRY := $(CURDIR)/daemon/plugin_zod_entry.ts
plugin-zod: $(BUN)
	$(BUN) build $(PLUGIN_ZOD_ENTRY) --target=bun --format=esm --minify --outfile daemon/plugin_zod.js
