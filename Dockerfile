# sitemap-crawler in a container (SPEC S8).
#
#   podman build -t sitemap-crawler .          (or docker build)
#   podman run --rm -v "$PWD/data:/data:U" sitemap-crawler crawl https://www.example.com/
#
# BASE is any Debian-like image; the official slim Python image by default.
# RENDER=1 (--build-arg RENDER=1) makes the variant that can --render (SPEC S9):
# Debian's chromium-headless-shell and Playwright are added; the default image
# has neither. Both variants share every layer up to the one that differs.
# Both have boto3 for --publish s3://... (most containers publish to object storage).
# Output, state and reports live under /data (the container profile).
ARG BASE=docker.io/library/python:3.11-slim-bookworm

FROM ${BASE} AS build
# Python and venv from Debian when the base has none (a bare Debian base); the
# slim Python image already has both. DL3008 (pin apt versions) is ignored: the
# version is the base release's own, and pins would break every point release.
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip' 2>/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
      && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
COPY pyproject.toml README.md scrapy.cfg ./
COPY crawler ./crawler
COPY pipelines ./pipelines
COPY settings ./settings
# A CA bundle can be given as the build secret "ca" (a machine behind an
# intercepting proxy, or a base without ca-certificates); it is never written
# into a layer.
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python3 -m venv /opt/sitemap-crawler \
    && /opt/sitemap-crawler/bin/pip install --no-cache-dir --disable-pip-version-check '.[s3]' \
    && /opt/sitemap-crawler/bin/sitemap-crawler --help >/dev/null
# Declared here, not above, so the layers before this one are shared by both variants.
ARG RENDER=0
# Playwright only as the driver of Debian's browser: `playwright install` is never run.
RUN --mount=type=secret,id=ca,required=false \
    if [ "$RENDER" = 1 ]; then \
      if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
      && /opt/sitemap-crawler/bin/pip install --no-cache-dir --disable-pip-version-check '.[render]' \
      && /opt/sitemap-crawler/bin/python -c 'import playwright.async_api'; \
    fi

FROM ${BASE}
# DL3008 ignored for the reason given in the build stage.
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3 \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --create-home --uid 10001 --user-group crawler \
    && mkdir -p /data && chown crawler:crawler /data
ARG RENDER=0
# The browser before the venv: this big layer stays cached while the code changes. libatomic1
# is for the Node.js that Playwright runs as its driver. Chromium runs as the image's user
# without its sandbox (Playwright's default; the container is the sandbox) and with
# --disable-dev-shm-usage (a container's /dev/shm is 64 MB).
# DL3008 ignored for the reason given in the build stage.
# hadolint ignore=DL3008
RUN if [ "$RENDER" = 1 ]; then \
      apt-get update && apt-get install -y --no-install-recommends chromium-headless-shell libatomic1 \
      && rm -rf /var/lib/apt/lists/* \
      && chromium-headless-shell --version; \
    fi
COPY --from=build /opt/sitemap-crawler /opt/sitemap-crawler
ENV PATH=/opt/sitemap-crawler/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SITEMAP_CRAWLER_PROFILE=container
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8787
# Meaningful for `serve` (its listening socket); other commands end on their own.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python3", "-c", "import socket; socket.create_connection(('127.0.0.1', 8787), 2).close()"]
# Python is PID 1: Scrapy and serve handle SIGTERM and SIGINT themselves.
ENTRYPOINT ["sitemap-crawler"]
CMD ["--help"]
