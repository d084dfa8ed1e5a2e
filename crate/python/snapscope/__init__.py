"""snapscope for Python and Jupyter: where did my GPU memory go?

The wheel carries the ``snapscope`` command line (on the PATH once installed); this module runs it
and gives back what its ``--json`` prints, as Python objects, and shows the analyzer inline in a
notebook: the single-file page with the snapshot embedded (nothing is uploaded, no server).

A snapshot is a path, its bytes, or the dict that ``torch.cuda.memory._snapshot()`` returns (the
module pickles it with the standard library; it never imports torch).

    import snapscope
    snapscope.overview("snapshot.pickle")["devices"][0]["peaks"]["allocated"]
    snapscope.analyze("snapshot.pickle", mode="oom")
    snapscope.query("snapshot.pickle", "top_allocations", device=0)
    snapscope.show(torch.cuda.memory._snapshot())      # in Jupyter
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from html import escape as _escape
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Union

__all__ = ["SnapscopeError", "overview", "analyze", "query", "html", "show", "binary", "__version__"]

Snapshot = Union[str, os.PathLike, bytes, bytearray, memoryview, Dict[str, Any]]

try:
    from importlib.metadata import version as _dist_version

    __version__ = _dist_version("snapscope")
except Exception:  # not installed as a distribution (a source checkout)
    __version__ = "unknown"


class SnapscopeError(Exception):
    """The CLI refused: ``code``, ``message`` (what and where) and ``hint`` (what to do)."""

    def __init__(self, code: str, message: str, hint: str = ""):
        super().__init__(f"{code}: {message}" + (f" ({hint})" if hint else ""))
        self.code, self.message, self.hint = code, message, hint


def binary() -> str:
    """The ``snapscope`` CLI this module runs: $SNAPSCOPE_BIN, this environment's, or the PATH's."""
    given = os.environ.get("SNAPSCOPE_BIN")
    if given:
        return given
    exe = "snapscope.exe" if sys.platform == "win32" else "snapscope"
    # The wheel installs it into this interpreter's scripts folder, which need not be on the PATH
    # (a virtualenv not activated, a Jupyter kernel started from elsewhere).
    here = Path(sysconfig.get_path("scripts")) / exe
    if here.exists():
        return str(here)
    found = shutil.which("snapscope")
    if found:
        return found
    raise SnapscopeError(
        "NO_CLI",
        "the snapscope command line was not found",
        "pip install snapscope, or set SNAPSCOPE_BIN to the binary",
    )


def overview(snapshot: Snapshot) -> Dict[str, Any]:
    """Per-device dump figures, exact peaks and replay consistency: ``snapscope overview --json``."""
    with _snapshot_file(snapshot) as path:
        return _run("overview", paths=[path])


def analyze(
    snapshot: Snapshot,
    mode: str = "all",
    *,
    device: Optional[int] = None,
    event: Optional[int] = None,
    ref: Optional[Snapshot] = None,
    device_memory: Optional[Union[int, str]] = None,
) -> Dict[str, Any]:
    """One analysis (peak, fragment, leak, oom, tree, categories, steps, streams, tune, compare) or
    ``all``: ``snapscope analyze --mode MODE --json``. ``ref`` is the other snapshot for compare."""
    with contextlib.ExitStack() as stack:
        path = stack.enter_context(_snapshot_file(snapshot))
        args = ["analyze", "--mode", mode]
        if ref is not None:
            # One argument: a path is never read as an option, whatever its name.
            args.append("--ref=" + stack.enter_context(_snapshot_file(ref)))
        args += _options(device=device, event=event, device_memory=device_memory)
        return _run(*args, paths=[path])


def query(snapshot: Snapshot, template: str, *, device: Optional[int] = None, **params: Any) -> Dict[str, Any]:
    """A template of the catalogue with its parameters: ``snapscope query -t TEMPLATE --json``.
    ``rows`` are objects keyed by column name; ``columns`` give names and units."""
    with _snapshot_file(snapshot) as path:
        args = ["query", "-t", template, "--params", json.dumps(params)]
        return _run(*args, *_options(device=device), paths=[path])


def html(snapshot: Snapshot, name: Optional[str] = None) -> str:
    """The single-file analyzer page with ``snapshot`` embedded: open it from disk in any browser,
    or display it (``show``). It opens the snapshot at once, in the browser; nothing is uploaded."""
    data, default_name = _snapshot_bytes(snapshot)
    page = _page()
    carrier = (
        f'<script type="application/x-snapscope-snapshot" id="snapscope-snapshot" '
        f'data-name="{_escape(name or default_name, quote=True)}">'
        f"{base64.b64encode(data).decode('ascii')}</script>\n"
    )
    at = page.rfind("</body>")
    if at < 0:
        raise SnapscopeError("BAD_PAGE", "the embedded snapscope.html has no </body>", "reinstall snapscope")
    return page[:at] + carrier + page[at:]


def show(snapshot: Snapshot, name: Optional[str] = None, height: int = 760) -> Optional[str]:
    """Display the analyzer inline in Jupyter (an iframe holding ``html(snapshot)``). Outside a
    notebook (plain Python, terminal IPython), write the page to a temporary file, open it in the
    browser and return its path (delete it when done: it holds the snapshot)."""
    doc = html(snapshot, name)
    if _in_notebook():
        from IPython.display import HTML, display  # type: ignore

        display(HTML(_iframe(doc, height)))
        return None
    fd, path = tempfile.mkstemp(prefix="snapscope-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(doc)
    import webbrowser

    webbrowser.open(Path(path).as_uri())
    return path


# ---- helpers ---------------------------------------------------------------------------------


def _in_notebook() -> bool:
    """A Jupyter kernel (it renders HTML), not terminal IPython or plain Python."""
    try:
        from IPython import get_ipython  # type: ignore
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


# The embedded page runs in an opaque origin: scripts (the app, its worker from a blob: URL, the
# wasm engine) and downloads (Report, Export .db) only. Without allow-same-origin it cannot read
# the notebook's page, cookies or the Jupyter server's API; nothing else is allowed.
IFRAME_SANDBOX = "allow-scripts allow-downloads"


def _iframe(doc: str, height: int) -> str:
    return (
        f'<iframe srcdoc="{_escape(doc, quote=True)}" title="snapscope" sandbox="{IFRAME_SANDBOX}" '
        f'style="width:100%;height:{int(height)}px;border:1px solid #e2e8f0;border-radius:8px"></iframe>'
    )


def _page() -> str:
    page = Path(__file__).with_name("snapscope.html")
    if not page.exists():
        raise SnapscopeError(
            "NO_PAGE",
            f"{page} is missing",
            "this module was not installed from a wheel: build one with scripts/build_wheel.sh",
        )
    return page.read_text(encoding="utf-8")


def _snapshot_bytes(snapshot: Snapshot) -> "tuple[bytes, str]":
    if isinstance(snapshot, dict):
        return pickle.dumps(snapshot, protocol=4), "snapshot.pickle"
    if isinstance(snapshot, (bytes, bytearray, memoryview)):
        return bytes(snapshot), "snapshot.pickle"
    if isinstance(snapshot, (str, os.PathLike)):
        p = Path(snapshot)
        return p.read_bytes(), p.name
    raise TypeError(f"a snapshot is a path, bytes or a dict (torch.cuda.memory._snapshot()), not {type(snapshot).__name__}")


@contextlib.contextmanager
def _snapshot_file(snapshot: Snapshot) -> Iterator[str]:
    """A path the CLI can read: the file itself, or a temporary copy of bytes or a pickled dict.
    Absolute, so it never starts with "-" (a file named ``--categories=/dev/zero`` or ``-h`` is
    a file, not an option)."""
    if isinstance(snapshot, (str, os.PathLike)):
        p = Path(snapshot)
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such snapshot file")
        yield os.path.abspath(p)
        return
    data, _ = _snapshot_bytes(snapshot)
    fd, path = tempfile.mkstemp(prefix="snapscope-", suffix=".pickle")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def _options(**given: Any) -> "list[str]":
    out = []
    for key, value in given.items():
        if value is not None:
            # --key=value: one argument, so a value is never read as another option.
            out.append(f"--{key.replace('_', '-')}={value}")
    return out


def _run(*args: str, paths: "list[str]" = ()) -> Dict[str, Any]:
    # Paths go after "--": the CLI takes them as files whatever their names look like.
    done = subprocess.run([binary(), *args, "--json", "--", *paths], capture_output=True, text=True)
    if done.returncode != 0:
        try:
            err = json.loads(done.stderr)["error"]
        except (ValueError, KeyError, TypeError):
            raise SnapscopeError("CLI_FAILED", done.stderr.strip() or f"exit code {done.returncode}") from None
        raise SnapscopeError(err.get("code", "ERROR"), err.get("message", ""), err.get("hint", ""))
    return json.loads(done.stdout)
