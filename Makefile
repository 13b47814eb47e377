# The two commands of the README do all the set-up on a fresh machine:
#   make crawl URL=https://www.example.com/ OUT=public   (install, then crawl)
#   make test                                             (install, then lint and test)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
URL ?=
OUT ?= sitemaps
ARGS ?=

.PHONY: install crawl test test-fast test-tools lint docs mutants bench bench-tools

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
	$(BIN)/vulture

test: lint docs test-tools
	@if command -v podman >/dev/null && command -v debootstrap >/dev/null; then . .ci/podman-setup; fi; \
	  $(BIN)/python -m pytest
	$(BIN)/python tests/install_check.py

# The documentation site, strictly: any warning (a broken link or reference, a page in no table of
# contents) fails; the reference pages are written from the code first (docs/conf.py).
docs: install
	$(BIN)/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html

# One-line mutants of the rules SPEC names, each against the tests that guard it (the kill table).
mutants: install test-tools
	$(BIN)/python tests/mutants.py

# The audit report's browser test drives Debian's Chromium through its WebDriver, --render
# drives Debian's chromium-headless-shell through Playwright; the
# container tests build and run the image with podman on a Debian 12 base made here
# (.ci/podman-setup). Installed when missing and apt can run (root); without them those
# tests are skipped with the reason (under CI=true they fail instead).
TEST_PACKAGES := chromium chromium-driver chromium-headless-shell podman buildah runc debootstrap uidmap redis-server faketime
# The real applications of tests/realapps, each started privately on 127.0.0.1 by its test: WordPress
# (Debian's, with a classic theme, PHP-FPM and MariaDB) behind nginx, and node for Docusaurus. Without
# recommends and with no service started by the packages (policy-rc.d), so nothing binds a port.
REALAPP_PACKAGES := nginx wordpress wordpress-theme-twentytwentyone php-fpm php-mysql php-gd php-xml php-mbstring \
  mariadb-server nodejs
# Before a commit: every fast test (tests/lanes.py), in about 35 s.
test-fast:
	$(BIN)/python -m pytest -q -m fast

test-tools:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	  && command -v chromium-headless-shell >/dev/null && command -v podman >/dev/null \
	  && command -v debootstrap >/dev/null && command -v redis-server >/dev/null && command -v faketime >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_PACKAGES); } || \
	  echo "note: $(TEST_PACKAGES) are not all installed: the browser and container tests will be skipped" >&2
	@command -v nginx >/dev/null && command -v mariadbd >/dev/null && command -v php-fpm8.2 >/dev/null \
	  && [ -d /usr/share/wordpress/wp-content/themes/twentytwentyone ] && command -v npm >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && .ci/install-quietly $(REALAPP_PACKAGES); } || \
	  echo "note: $(REALAPP_PACKAGES) are not all installed: the real-application tests will be skipped" >&2

# Benchmarks need a fast static server (nginx), a load tool (wrk), wget and redis-server to
# compare with, and two real documentation sites, all from Debian.
BENCH_PACKAGES := nginx-light wrk wget redis-server postgresql-doc-15 python3-doc
bench-tools:
	@command -v nginx >/dev/null && command -v wrk >/dev/null && command -v wget >/dev/null \
	  && command -v redis-server >/dev/null && [ -d /usr/share/doc/postgresql-doc-15/html ] \
	  && ls -d /usr/share/doc/python3.*/html >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BENCH_PACKAGES); }

bench: install bench-tools test-tools
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scheduled.py
	$(BIN)/python bench/hostile.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/real_sites.py
	nice -n 19 $(BIN)/python bench/distributed.py --pages 50000
	nice -n 10 $(BIN)/python bench/render.py
	nice -n 10 $(BIN)/python bench/render_auto.py
