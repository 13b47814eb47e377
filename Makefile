# The two commands of the README do all the set-up on a fresh machine:
#   make crawl URL=https://www.example.com/ OUT=public   (install, then crawl)
#   make test                                             (install, then lint and test)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
URL ?=
OUT ?= sitemaps
ARGS ?=

.PHONY: install crawl test test-tools lint bench bench-tools

$(BIN)/sitemap-crawler: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

install: $(BIN)/sitemap-crawler

crawl: install
	@test -n "$(URL)" || { echo "usage: make crawl URL=https://www.example.com/ [OUT=folder] [ARGS='--gzip ...']" >&2; exit 2; }
	$(BIN)/sitemap-crawler crawl "$(URL)" --out "$(OUT)" $(ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint test-tools
	$(BIN)/python -m pytest

# The audit report's browser test drives Debian's Chromium through its WebDriver.
# Installed when missing and apt can run (root); without them that one test is skipped
# (under CI=true it fails instead).
test-tools:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } || \
	  echo "note: chromium and chromium-driver are not installed: the browser test will be skipped" >&2

# Benchmarks need a fast static server (nginx) and a load tool (wrk) from Debian.
bench-tools:
	@command -v nginx >/dev/null && command -v wrk >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk; }

bench: install bench-tools
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scheduled.py
	$(BIN)/python bench/hostile.py
	$(BIN)/python bench/scale.py
