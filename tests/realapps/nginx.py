"""A private nginx serving a folder as a plain static root, with nginx's default behaviour.

Static-site generators are deployed behind servers like this one (and GitHub Pages, which
behaves the same way): ``index index.html`` and nothing else, so ``/docs/intro`` where only
``docs/intro/index.html`` exists answers ``301 -> /docs/intro/``. That redirect is what the
crawler must cope with, so the config adds no ``try_files`` and no rewrite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["APT_PACKAGE", "Nginx", "NginxRequest", "nginx_binary"]

#: The Debian package that provides the binary (``apt-get install -y nginx-light``).
APT_PACKAGE = "nginx-light"
#: One JSON object per request, so the test reads what the crawler asked for without parsing prose.
_LOG_FORMAT = (
    "log_format realapps escape=json "
    '\'{"method":"$request_method","uri":"$request_uri","status":$status,'
    '"location":"$sent_http_location","agent":"$http_user_agent"}\';'
)


def nginx_binary() -> str | None:
    """The nginx executable (Debian puts it in /usr/sbin, which a non-root PATH may lack)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class NginxRequest:
    """One line of the access log."""

    method: str
    uri: str
    status: int
    location: str
    agent: str


class Nginx:
    """nginx on a free 127.0.0.1 port, serving *root*; its config, pid, logs and temp files in *folder*.

    The port is chosen at construction, so a site whose files must name their own origin can be
    prepared before :meth:`start`. Stopped by its PID, never by name.
    """

    def __init__(self, root: Path, folder: Path, log_format: str = "realapps") -> None:
        self.root = root
        self.folder = folder
        self.log_format = log_format  # "realapps" (one JSON object a line), or nginx's own "combined"
        self.port = _free_port()
        self.access_log = folder / "access.log"
        self.error_log = folder / "error.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> str:
        """The whole nginx.conf: nginx's defaults for a static root, every path private."""
        temp = self.folder / "temp"
        # Workers run as "nobody" when the master is root, and pytest's temp folders are 0700.
        user = "user root;\n" if os.geteuid() == 0 else ""
        mime = Path("/etc/nginx/mime.types")
        types = f"include {mime};" if mime.exists() else "types { text/html html; application/xml xml; }"
        return f"""{user}worker_processes 1;
daemon off;
pid {self.folder / "nginx.pid"};
error_log {self.error_log} info;
events {{ worker_connections 256; }}
http {{
    {types}
    default_type application/octet-stream;
    {_LOG_FORMAT}
    access_log {self.access_log} {self.log_format};
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    sendfile on;
    server {{
        listen 127.0.0.1:{self.port};
        server_name 127.0.0.1;
        root {self.root};
        index index.html;
    }}
}}
"""

    def start(self, deadline: float = 15.0) -> Self:
        """Started and accepting connections, or :class:`OSError` with nginx's own error log."""
        binary = nginx_binary()
        if binary is None:
            raise FileNotFoundError(f"nginx is not installed (apt-get install -y {APT_PACKAGE})")
        (self.folder / "temp").mkdir(parents=True, exist_ok=True)
        conf = self.folder / "nginx.conf"
        conf.write_text(self.config(), "utf-8")
        self.access_log.touch()
        command = [binary, "-p", str(self.folder), "-c", str(conf), "-e", str(self.error_log)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                pass
            try:  # waits on the process itself: returns early when nginx exits on an error
                self.process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            break
        errors = self.error_log.read_text("utf-8", "replace") if self.error_log.exists() else ""
        self.stop()
        raise OSError(f"nginx did not start on 127.0.0.1:{self.port}:\n{errors}")

    def stop(self) -> None:
        """Stop the master by its PID (SIGTERM is nginx's fast shutdown; SIGKILL if it hangs)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)

    def requests(self) -> list[NginxRequest]:
        """Every request answered so far, oldest first."""
        lines = self.access_log.read_text("utf-8").splitlines()
        return [NginxRequest(**json.loads(line)) for line in lines if line.strip()]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
