# The two commands of the README do all the set-up on a fresh machine:
#   make crawl URL=https://www.example.com/ OUT=public   (install, then crawl)
#   make test                                             (install, then lint and test)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
URL ?=
OUT ?= sitemaps
ARGS ?=

.PHONY: install crawl test lint bench bench-tools

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

test: lint
	$(BIN)/python -m pytest

# Benchmarks need a fast static server (nginx) and a load tool (wrk) from Debian.
bench-tools:
	@command -v nginx >/dev/null && command -v wrk >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk; }

bench: install bench-tools
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scheduled.py
	$(BIN)/python bench/hostile.py
	$(BIN)/python bench/scale.py
