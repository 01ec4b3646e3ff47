# Fairway: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
# The interpreter of the virtualenv: Debian's own Python 3.11 where the machine has it (built with profile-guided and
# link-time optimisation, it runs the suite and the control plane with about 10 % less CPU than a plain source build
# of 3.11 such as pyenv's default, measured on this project's tests), else the first python3 on the PATH.
# An existing .venv keeps the interpreter it was made with (`make clean` to change it).
PYTHON ?= $(firstword $(wildcard /usr/bin/python3.11) python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO_SIZE ?= small
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/fairway
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
PYTEST_ARGS ?=
# three pytest-xdist workers on two cores: many slow tests wait on subprocesses, servers and the browser
XDIST_WORKERS ?= 3
# A machine may set PYTHONDONTWRITEBYTECODE=1 for every shell: then each Python process (the suite's workers, every
# CLI and server it starts) compiles every module of the project again, and pytest rewrites every test module again
# in each worker (collection took 26 s of CPU instead of 8). The checkout keeps its bytecode (.gitignore'd).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run test services chromium kube-tools migrate demo lint typecheck docs bench plotly clean

# The packages are installed by uv (from PyPI, into the virtualenv, in about 15 s on a fresh machine where pip took
# 70 s: it resolves and unpacks in parallel and leaves bytecode to the first import); pip does it when uv cannot.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) 2>/dev/null || { rm -rf $(VENV); \
	  echo "$(PYTHON) cannot make a virtualenv here (Debian's python3.11-venv missing?): using python3"; python3 -m venv $(VENV); }
	@test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --upgrade pip -e '.[test]' || \
	  $(BIN)/python -m pip install --quiet --upgrade pip -e '.[test]'
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_demo

# Installs, then controlplane/devserver.py migrates, loads the demo, creates the admin and runs web + worker + beat
# on the embedded default (SQLite file and kombu's filesystem broker under var/). DEMO_SIZE=large loads the
# 5,000-node demo into an empty database instead of the 24-node one. Ctrl-C or TERM stops all three,
# each once, and exits 0; every runtime file (pid files, gunicorn's control socket, beat's schedule) is under var/.
run: install
	@scripts/services.sh "$${DATABASE_URL:-}" "$${CELERY_BROKER_URL:-}"
	@$(BIN)/python -m controlplane.devserver --host $(HOST) --port $(PORT) --demo-size $(DEMO_SIZE)

# PostgreSQL and Redis for the suite: installed from Debian's packages when absent and started on loopback with a
# data folder outside the repository, unless a server already answers at the URL (scripts/services.sh).
services:
	@scripts/services.sh '$(TEST_DATABASE_URL)' '$(TEST_REDIS_URL)'

# Debian's chromium for the browser tests (no browser download is possible on these machines), with its headless
# shell: the lighter headless build Playwright itself runs by default, which the browser tests use when present (half
# the CPU of the full browser in headless mode).
chromium:
	@(command -v chromium && command -v chromium-headless-shell) >/dev/null || \
	  (echo "installing Debian's chromium and chromium-headless-shell for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-headless-shell >/dev/null)

# etcd, kube-apiserver, kube-scheduler and kube-controller-manager at the versions pinned in tools/*/go.mod, built
# once per machine from the Go module proxy into a cache outside the repository (FAIRWAY_TOOLS_CACHE, default
# ~/.cache/fairway/tools); nothing to do when they are there. A cold build takes 20-30 minutes on two cores.
kube-tools:
	@scripts/kube-tools.sh

# The suite includes the documentation site's strict build (tests/test_docs.py) and mypy (tests/test_typecheck.py).
test: install services chromium kube-tools
	DATABASE_URL=$(TEST_DATABASE_URL) FAIRWAY_TEST_REDIS_URL=$(TEST_REDIS_URL) \
	  STATICFILES_STORAGE=django.contrib.staticfiles.storage.StaticFilesStorage \
	  $(BIN)/python -m pytest -n $(XDIST_WORKERS) --dist loadscope --no-loadscope-reorder $(PYTEST_ARGS)

lint: install typecheck
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run

# mypy, strict on the pure engine (pyproject's [tool.mypy]).
typecheck: install
	$(BIN)/mypy

# The documentation site (mkdocs.yml, docs/) into site/, --strict: a broken link or anchor fails. The suite builds it
# the same way (tests/test_docs.py), so `make test` fails on a broken page too.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: install
	$(BIN)/python bench/bench_elastic.py
	$(BIN)/python bench/bench_queues.py
	$(BIN)/python bench/bench_session.py
	$(BIN)/python bench/bench_reclaim.py
	$(BIN)/python bench/bench_whatif.py
	$(BIN)/python bench/bench_store_session.py
	$(BIN)/python bench/bench_steady.py --sizes 1000,5000,10000,20000
	$(BIN)/python bench/bench_pages.py
	$(BIN)/python bench/bench_paint.py
	$(BIN)/python bench/bench_soak.py

# The dashboard's partial plotly.js bundle (frontend/static/frontend/vendor/plotly-fairway.min.js, committed): only
# the trace types the figures draw, built with the esbuild and plotly.js pinned in tools/plotly/package-lock.json.
# Needs node and npm; run it after changing the trace types (tools/plotly/index.js) or the plotly.js version.
plotly:
	cd tools/plotly && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf $(VENV) var .pytest_cache site
