"""A private redis-server for ``crawl --workers N`` (and the tests): Debian's
binary on 127.0.0.1, a free port, a password of its own (in a 0600 file of
its folder, out of ``ps``), no persistence, stopped by its PID."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["PrivateRedis", "free_port"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PrivateRedis:
    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        """Started and answering PING, or :class:`OSError` saying why not."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        conf = self.folder / "redis.conf"
        conf.touch(mode=0o600)
        conf.write_text(f"requirepass {self.password}\n")
        command = [binary, str(conf), "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                   "--appendonly", "no", "--dir", str(self.folder), "--daemonize", "no",
                   "--protected-mode", "yes"]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603 - fixed
        for _ in range(250):  # bounded: about 5 s until it accepts connections
            if self.process.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as connection:
                    connection.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                    answer = b""
                    while len(answer) < 12 and not answer.startswith(b"-"):  # bounded: "+OK\r\n+PONG\r\n"
                        chunk = connection.recv(64)
                        if not chunk:
                            break
                        answer += chunk
                    if answer.startswith(b"+OK\r\n+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise OSError(f"redis-server did not start on 127.0.0.1:{self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
