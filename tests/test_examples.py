"""Every console example of the documentation is run and its output compared, so none goes stale.

The documents are README.md and docs/**/*.md. A fenced block whose info string is ``console`` holds
commands (lines starting with ``$ ``; a trailing ``\\`` continues a command on the next line) and,
after each, the output it prints (stdout and stderr merged, as a terminal shows them). The line
before the fence (blank lines allowed) says what to do with the block:

``<!-- example: SITE -->``
    run it. ``tests/examples/SITE/`` is a static site served on 127.0.0.1 (a free port), written
    and reached in the docs as ``http://127.0.0.1:8765/``; its ``files/`` folder (optional, never
    served) is copied into the working directory first. ``<!-- example: none -->`` runs without a
    site. All the blocks of one document with the same SITE run in order in one fresh directory.
``<!-- not run: REASON -->``
    shown only (a container, a real site); the reason may not be empty.

A console block without either comment fails :func:`test_every_console_block_is_marked`.

Each command runs in its own ``bash -c`` in that directory (files persist, shell variables and
``cd`` do not; ``$?`` is the status of the command before), ``.venv/bin`` first on PATH, without
any ``SITEMAP_CRAWLER_*`` variable or proxy, in the C.UTF-8 locale, with PYTHONUNBUFFERED=1 (so
stdout and stderr interleave as on a terminal), for at most 60 s each. Before the
comparison, durations (``in 0.4 s``), rates (``16.0 pages/s``) and ISO-8601 timestamps become
placeholders, the directory's path becomes ``/tmp/example`` and the port ``8765`` (in text
files of ``files/`` and in what the site serves, ``127.0.0.1:8765`` becomes the real address).
A line ``...`` of the expected output stands for any number of lines, none included.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = Path(__file__).resolve().parent / "examples"
BIN = Path(sys.executable).parent  # the venv's bin: sitemap-crawler, scrapy, python
DOC_HOST = "127.0.0.1:8765"
DOC_PORT = "8765"
DOC_DIR = "/tmp/example"
NO_SITE = "none"
FILES = "files"  # tests/examples/SITE/files/: copied into the working directory, never served
ANY_LINES = "..."
TIMEOUT = 60.0
PROXIES = {"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"}
TEXT_SUFFIXES = {".html", ".htm", ".txt", ".xml", ".json", ".jsonl", ".toml", ".csv", ".md"}
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml",
    ".gz": "application/gzip",
    ".json": "application/json",
    ".pdf": "application/pdf",
}

#: MyST directives whose content is text, not Markdown (a console fence inside them is shown as is).
LITERAL_DIRECTIVES = {"code-block", "code", "code-cell", "sourcecode", "literalinclude", "raw", "math", "eval-rst"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARK_RUN = re.compile(r"^\s*<!--\s*example:(?P<site>.*?)-->\s*$")
MARK_SHOWN = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")
SITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
DURATION = re.compile(r"\bin \d[\d,]*(?:\.\d+)? s\b")
RATE = re.compile(r"\b\d[\d,]*(?:\.\d+)? pages/s\b")
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?")


@dataclass(frozen=True)
class Command:
    line: int  # of the "$ " line in the document, from 1
    text: str  # what bash runs: continuation lines kept, with their backslash-newline
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    document: str  # relative to the checkout, as the tests name it
    line: int  # of the opening fence, from 1
    site: str | None  # None: not run
    reason: str | None  # of a block not run
    commands: tuple[Command, ...]


@dataclass(frozen=True)
class Group:
    """The blocks of one document with one site: run in order in one directory."""

    document: str
    site: str
    blocks: tuple[Block, ...]

    @property
    def name(self) -> str:
        return f"{self.document}:{self.site}"


def _fence_closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _marker(lines: Sequence[str], fence_index: int) -> str | None:
    """The last non-blank line before the fence, if any."""
    for index in range(fence_index - 1, -1, -1):
        if lines[index].strip():
            return lines[index]
    return None


def _commands(content: Sequence[str], first_line: int, where: str, problems: list[str]) -> tuple[Command, ...]:
    commands: list[Command] = []
    text: list[str] = []
    expected: list[str] = []
    start = 0
    continued = False

    def finish() -> None:
        if text:
            commands.append(Command(start, "\n".join(text), tuple(expected)))

    for offset, raw in enumerate(content):
        number = first_line + offset
        if continued:
            part = raw.removeprefix("> ")
            text.append(part)
            continued = part.endswith("\\")
        elif raw.startswith("$ ") or raw.rstrip() == "$":
            finish()
            text, expected, start = [raw[2:]], [], number
            continued = raw.endswith("\\")
        elif not text:
            if raw.strip():
                problems.append(f"{where}:{number}: output before the first `$ ` command")
        else:
            expected.append(raw)
    if continued:
        problems.append(f"{where}:{start}: the command's last line ends with a backslash")
    finish()
    return tuple(command for command in commands if command.text.strip())


def parse_document(text: str, document: str) -> tuple[list[Block], list[str]]:
    """The console blocks of a Markdown document, and what is wrong with their marking."""
    lines = text.splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    _scan(lines, 0, len(lines), document, blocks=blocks, problems=problems)
    return blocks, problems


def _scan(
    lines: Sequence[str], start: int, stop: int, document: str, *, blocks: list[Block], problems: list[str]
) -> None:
    index = start
    while index < stop:
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        end = index + 1
        while end < stop and not _fence_closes(lines[end], fence):
            end += 1
        info = opening["info"].split()
        name = info[0] if info else ""
        if name == "console":
            content = [line[min(indent, len(line) - len(line.lstrip())) :] for line in lines[index + 1 : end]]
            blocks.append(_block(lines, index, content, document, problems))
        elif name.startswith("{") and name.strip("{}") not in LITERAL_DIRECTIVES:
            _scan(lines, index + 1, end, document, blocks=blocks, problems=problems)  # a MyST note, tip, ...: Markdown
        index = end + 1  # whatever a code block holds (a fence shown inside a longer one) is no block


def _block(lines: Sequence[str], index: int, content: Sequence[str], document: str, problems: list[str]) -> Block:
    line = index + 1
    commands = _commands(content, line + 1, document, problems)
    marker = _marker(lines, index) or ""
    if run := MARK_RUN.match(marker):
        site = run["site"].strip()
        if not SITE_NAME.match(site):
            problems.append(f"{document}:{line}: `<!-- example: SITE -->` names no site folder: {site!r}")
        elif site != NO_SITE and not (EXAMPLES / site).is_dir():
            problems.append(f"{document}:{line}: no folder tests/examples/{site}/ for `example: {site}`")
        if not commands:
            problems.append(f"{document}:{line}: a console block to run has no `$ ` command")
        return Block(document, line, site, None, commands)
    if shown := MARK_SHOWN.match(marker):
        reason = shown["reason"].strip()
        if not reason:
            problems.append(f"{document}:{line}: `<!-- not run: REASON -->` without a reason")
        return Block(document, line, None, reason, commands)
    problems.append(
        f"{document}:{line}: a console block without a marker: put `<!-- example: SITE -->` "
        "or `<!-- not run: REASON -->` on the line before the fence (mark it example: or not run:)"
    )
    return Block(document, line, None, None, commands)


def group_blocks(blocks: Sequence[Block]) -> list[Group]:
    """Per document, per site, in the order of first appearance; blocks in document order."""
    groups: dict[tuple[str, str], list[Block]] = {}
    for block in blocks:
        if block.site is not None and block.commands:
            groups.setdefault((block.document, block.site), []).append(block)
    return [Group(document, site, tuple(each)) for (document, site), each in groups.items()]


def documents() -> list[Path]:
    found = [ROOT / "README.md"]
    docs = ROOT / "docs"
    if docs.is_dir():
        found += sorted(
            path
            for path in docs.rglob("*.md")
            if not any(part.startswith((".", "_build")) for part in path.relative_to(docs).parts)
        )
    return [path for path in found if path.is_file()]


def _parsed() -> dict[str, tuple[list[Block], list[str]]]:
    parsed = {}
    for path in documents():
        name = path.relative_to(ROOT).as_posix()
        parsed[name] = parse_document(path.read_text("utf-8"), name)
    return parsed


PARSED = _parsed()
GROUPS = [group for blocks, _ in PARSED.values() for group in group_blocks(blocks)]


# -- normalising and comparing -------------------------------------------------------------------


def normalise(text: str, directory: Path | None = None, port: int | None = None) -> list[str]:
    """Lines as compared: *directory* and *port* (of a run) as the docs write them, durations,
    rates and timestamps as placeholders, trailing spaces and blank lines at the end dropped."""
    if directory is not None:
        for path in sorted({str(directory), str(directory.resolve())}, key=len, reverse=True):
            text = text.replace(path, DOC_DIR)
    if port is not None:
        text = re.sub(rf"(?<=[\w.\]]):{port}\b", f":{DOC_PORT}", text)
    text = TIMESTAMP.sub("<timestamp>", text)
    text = DURATION.sub("in <duration>", text)
    text = RATE.sub("<rate> pages/s", text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Line by line, a line ``...`` of *expected* matching any run of lines of *actual* (or none)."""
    rows, columns = len(expected), len(actual)
    # fits[i][j]: expected[i:] matches actual[j:]
    fits = [[False] * (columns + 1) for _ in range(rows + 1)]
    fits[rows][columns] = True
    for i in range(rows - 1, -1, -1):
        for j in range(columns, -1, -1):
            if expected[i] == ANY_LINES:
                fits[i][j] = fits[i + 1][j] or (j < columns and fits[i][j + 1])
            else:
                fits[i][j] = j < columns and expected[i] == actual[j] and fits[i + 1][j + 1]
    return fits[0][0]


def _find(line: str, actual: Sequence[str], start: int) -> int | None:
    """Where *line* is in ``actual[start:]``: the same line, else the most alike (if alike enough)."""
    for index in range(start, len(actual)):
        if actual[index] == line:
            return index
    ratios = [
        (difflib.SequenceMatcher(None, line, actual[index]).ratio(), index) for index in range(start, len(actual))
    ]
    best = max(ratios, default=(0.0, 0))
    return best[1] if best[0] >= 0.75 else None


def _expanded(expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    """*expected* with each ``...`` replaced by the actual lines it stands for (up to where the
    next expected line is, or the line most like it), so that a diff shows only what differs."""
    shown: list[str] = []
    position = 0
    for index, line in enumerate(expected):
        if line != ANY_LINES:
            shown.append(line)
            found = position if position < len(actual) and actual[position] == line else _find(line, actual, position)
            position = position if found is None else found + 1
            continue
        following = next((each for each in expected[index + 1 :] if each != ANY_LINES), None)
        end = len(actual) if following is None else _find(following, actual, position)
        if end is not None:
            shown.extend(actual[position:end])
            position = end
    return shown


def difference(expected: Sequence[str], actual: Sequence[str], where: str) -> str:
    """A unified diff, the lines a ``...`` matches shown as they are."""
    shown = _expanded(expected, actual)
    diff = difflib.unified_diff(shown, list(actual), f"{where} (expected)", "actual output", lineterm="")
    return "\n".join(diff)


# -- the site and the commands -------------------------------------------------------------------


class ExampleSite(ThreadingHTTPServer):
    """tests/examples/SITE/ on 127.0.0.1, a free port; ``127.0.0.1:8765`` in text files is served
    as the real address, and ``files/`` is not served."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), ExampleHandler)
        self.root = root.resolve()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class ExampleHandler(BaseHTTPRequestHandler):
    server: ExampleSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.answer(with_body=True)

    def do_HEAD(self) -> None:
        self.answer(with_body=False)

    def answer(self, with_body: bool) -> None:
        status, content_type, body = self.read(unquote(urlsplit(self.path).path))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def read(self, path: str) -> tuple[int, str, bytes]:
        root = self.server.root
        file = (root / path.lstrip("/")).resolve()
        if file.is_dir():
            file = file / "index.html"
        if root not in file.parents or not file.is_file() or file.relative_to(root).parts[0] == FILES:
            return 404, TYPES[".html"], b"<!doctype html>\n<html><body>not found</body></html>\n"
        body = file.read_bytes()
        if file.suffix in TEXT_SUFFIXES:
            body = body.replace(DOC_HOST.encode(), f"127.0.0.1:{self.server.port}".encode())
        return 200, TYPES.get(file.suffix, "application/octet-stream"), body


@contextmanager
def served(site: str) -> Iterator[int | None]:
    """The port of SITE served while the block runs (None for ``none``)."""
    if site == NO_SITE:
        yield None
        return
    server = ExampleSite(EXAMPLES / site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def copy_files(site: str, directory: Path, port: int | None) -> None:
    """SITE/files/ into *directory*, ``127.0.0.1:8765`` in its text files the real address."""
    source = EXAMPLES / site / FILES
    if site == NO_SITE or not source.is_dir():
        return
    shutil.copytree(source, directory, dirs_exist_ok=True)
    if port is None:
        return
    for path in directory.rglob("*"):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            text = path.read_text("utf-8")
            path.write_text(text.replace(DOC_HOST, f"127.0.0.1:{port}"), "utf-8")


def example_environment() -> dict[str, str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("SITEMAP_CRAWLER_") and name.lower() not in PROXIES
    }
    environment["PATH"] = os.pathsep.join([str(BIN), environment.get("PATH", os.defpath)])
    environment["LC_ALL"] = "C.UTF-8"  # the order of `ls`, the same on every machine
    environment["PYTHONUNBUFFERED"] = "1"  # stdout line by line between stderr lines, as on a terminal
    return environment


def run_command(command: str, directory: Path, port: int | None, previous: int = 0) -> tuple[int, str]:
    """The exit status and the merged output of one command, as a terminal shows it; ``$?`` is
    *previous*, the status of the command before."""
    if port is not None:
        command = command.replace(DOC_HOST, f"127.0.0.1:{port}")
    process = subprocess.Popen(
        ["bash", "-c", f"(exit {previous}); {command}"],
        cwd=directory,
        env=example_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a timeout kills the whole group, a crawl started by bash too
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        output += f"\n[killed after {TIMEOUT:g} s]\n".encode()
    return process.returncode, output.decode("utf-8", "replace")


# -- the tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("document", list(PARSED))
def test_every_console_block_is_marked(document: str) -> None:
    _, problems = PARSED[document]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("group", GROUPS, ids=[group.name for group in GROUPS])
def test_the_example_prints_what_the_docs_show(group: Group, tmp_path: Path) -> None:
    directory = tmp_path / "example"
    directory.mkdir()
    with served(group.site) as port:
        copy_files(group.site, directory, port)
        status = 0
        for block in group.blocks:
            for command in block.commands:
                status, output = run_command(command.text, directory, port, status)
                expected = normalise("\n".join(command.expected))
                actual = normalise(output, directory, port)
                where = f"{group.document}:{command.line}"
                if not matches(expected, actual):
                    pytest.fail(
                        f"{where} (block of line {block.line}, site {group.site}): `{command.text}` "
                        f"(exit status {status}) printed other output (a line `...` matches any lines):\n"
                        + difference(expected, actual, where),
                        pytrace=False,
                    )


SAMPLE = """\
# Title

<!-- example: first-run -->

```console
$ sitemap-crawler crawl http://127.0.0.1:8765/ \\
    --out public --delay 0
Crawled 7 responses in 0.4 s (16.0 pages/s)
...
$ ls public
sitemap.xml
```

<!-- not run: needs a container -->
```console
$ docker run sitemap-crawler
```

````markdown
```console
$ shown inside a Markdown example: no block
```
````

````{note}
<!-- not run: inside a note -->
```console
$ shown in a note: a block
```
````

Some text.
```console
$ echo unmarked
unmarked
```

<!-- example: first-run -->
~~~console
$ echo $?
0
~~~
"""


def test_the_parser_reads_commands_outputs_and_continuations() -> None:
    blocks, problems = parse_document(SAMPLE, "SAMPLE.md")
    assert [(block.line, block.site, block.reason) for block in blocks] == [
        (5, "first-run", None),
        (15, None, "needs a container"),
        (27, None, "inside a note"),  # a MyST directive holds Markdown: its blocks count
        (33, None, None),
        (39, "first-run", None),
    ]
    crawl, ls = blocks[0].commands
    assert crawl == Command(
        6,
        "sitemap-crawler crawl http://127.0.0.1:8765/ \\\n    --out public --delay 0",
        ("Crawled 7 responses in 0.4 s (16.0 pages/s)", "..."),
    )
    assert ls == Command(10, "ls public", ("sitemap.xml",))
    assert len(problems) == 1
    assert problems[0].startswith("SAMPLE.md:33: a console block without a marker: put `<!-- example: SITE -->`")
    assert problems[0].endswith("(mark it example: or not run:)")
    (group,) = group_blocks(blocks)
    assert group.name == "SAMPLE.md:first-run"
    assert [block.line for block in group.blocks] == [5, 39]


def test_a_block_not_run_needs_a_reason_and_one_run_a_site_folder() -> None:
    text = "<!-- not run:   -->\n```console\n$ x\n```\n\n<!-- example: no-such-site -->\n```console\n$ y\n```\n"
    _, problems = parse_document(text, "T.md")
    assert problems == [
        "T.md:2: `<!-- not run: REASON -->` without a reason",
        "T.md:7: no folder tests/examples/no-such-site/ for `example: no-such-site`",
    ]
    _, problems = parse_document("<!-- example: none -->\n```console\noutput\n```\n", "T.md")
    assert problems == [
        "T.md:3: output before the first `$ ` command",
        "T.md:2: a console block to run has no `$ ` command",
    ]


def test_the_output_is_normalised(tmp_path: Path) -> None:
    output = (
        f"Crawled 7 responses in 12.3 s (1,016.0 pages/s)  \n"
        f"Report: {tmp_path}/public.crawl-report.jsonl\n"
        f"<lastmod>2026-12-03T15:46:34Z</lastmod> 2026-12-03T15:46:34.123+01:00 2026-11-30\n"
        f"Sitemap: http://127.0.0.1:40123/sitemap.xml (not :401234)\n\n\n"
    )
    assert normalise(output, tmp_path, 40123) == [
        "Crawled 7 responses in <duration> (<rate> pages/s)",
        "Report: /tmp/example/public.crawl-report.jsonl",
        "<lastmod><timestamp></lastmod> <timestamp> 2026-11-30",
        "Sitemap: http://127.0.0.1:8765/sitemap.xml (not :401234)",
    ]
    assert normalise("read in 0.0 s)\nchecked within 30 s") == ["read in <duration>)", "checked within 30 s"]


def test_three_dots_match_any_number_of_lines() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert matches(["...", "x", "..."], ["x"])
    assert matches(["..."], [])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["a", "...", "b", "..."], ["a", "c"])
    assert "-b\n+c" in difference(["a", "b"], ["a", "c"], "README.md:3")
    # the lines a `...` stands for are context, the line that differs is the diff
    diff = difference(
        ["...", "delay = 1.5  # --delay", "...", "end"], ["start", "delay = 1.0  # --delay", "x", "end"], "R"
    )
    assert diff.splitlines()[2:] == [
        "@@ -1,4 +1,4 @@",
        " start",
        "-delay = 1.5  # --delay",
        "+delay = 1.0  # --delay",
        " x",
        " end",
    ]


def test_a_command_runs_in_bash_without_our_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_MAX_PAGES", "7")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9/")
    status, output = run_command(
        "echo \"[$SITEMAP_CRAWLER_MAX_PAGES][$HTTPS_PROXY]\" >&2; X=1 bash -c 'echo $X' | cat; "
        "command -v sitemap-crawler; pwd; exit 3",
        tmp_path,
        None,
    )
    assert status == 3
    assert normalise(output, tmp_path) == ["[][]", "1", f"{BIN}/sitemap-crawler", DOC_DIR]
