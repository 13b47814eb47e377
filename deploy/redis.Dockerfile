# The Redis of deploy/compose.yaml: Debian's redis-server on the same base as the
# crawler's image, for machines that reach Debian's packages but no image registry.
# Where one is reachable, the official docker.io/library/redis:7 runs the same command.
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}
# DL3008 (pin apt versions) is ignored: the version is the base release's own,
# and pins would break every point release.
# The user redis is made first with a fixed id (the package keeps it), so that
# USER names a number, as in the crawler's image.
# hadolint ignore=DL3008
RUN useradd --uid 10002 --user-group --home-dir /var/lib/redis --create-home redis \
    && apt-get update && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*
# No configuration file is read, so redis-server listens on every address of the
# container network (the compose file requires a password).
USER 10002:10002
WORKDIR /var/lib/redis
EXPOSE 6379
ENTRYPOINT []
CMD ["redis-server", "--save", "", "--appendonly", "no"]
