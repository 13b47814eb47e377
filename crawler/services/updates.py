"""The updates the webhook runs: ``sitemap-crawler update`` as a child process, one at a time.

One at a time because the state store would refuse a second one anyway;
each within its time limit (then killed, and the answer says so); and the
running one stopped with the server, so that no orphan keeps the state
store. Blocking calls: the server runs them off its event loop.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping, Sequence

from crawler.services.webhook import outcome, update_command

__all__ = ["STOP_GRACE", "UpdateRunner"]

#: Seconds an update stopped with the server has to end after SIGTERM before it is killed.
STOP_GRACE = 10.0


class UpdateRunner:
    def __init__(self, command: Sequence[str], env: Mapping[str, str], time_limit: float):
        self.command, self.env, self.time_limit = list(command), dict(env), time_limit
        self.lock = threading.Lock()
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False

    def run(self, add: Sequence[str], remove: Sequence[str]) -> dict[str, object]:
        """Run one update and say how it went (see :func:`crawler.services.webhook.outcome`)."""
        with self.lock:
            if self.stopping:
                return {"exit_code": None, "error": "the server is stopping"}
            child = self.child = subprocess.Popen(  # noqa: S603 - our own console script, arguments as a list
                update_command(self.command, add, remove),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                env=self.env,
            )
            try:
                stdout, stderr = child.communicate(timeout=self.time_limit)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
                return outcome(None, b"", b"", self.time_limit)
            finally:
                self.child = None
        return outcome(child.returncode, stdout, stderr)

    def stop(self) -> None:
        """Stop the running update (SIGTERM, SIGKILL after STOP_GRACE) and refuse any later one."""
        self.stopping = True
        child = self.child
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                child.kill()
