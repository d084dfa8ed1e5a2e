#!/usr/bin/env python3
"""The virtualenv of one pinned Python tool the tests use (pt-snap-cli, maturin, the MCP SDK):
`scripts/tool_venv.py REQUIREMENT` prints its folder, making it on first use.

The folders live in the user's cache (SNAPSCOPE_VENVS, else $XDG_CACHE_HOME/snapscope/venvs, else
~/.cache/snapscope/venvs), one per requirement, so a fresh clone reuses them like Cargo's registry
instead of making and filling them again. A requirement is pinned (NAME==VERSION): a folder never
changes once made. A folder without its `.complete` mark (an install cut short) is made again.
Python callers import `tool_venv` from this folder; shell callers run this file.
"""
import os
import re
import shutil
import subprocess
import sys


def venvs_root():
    if os.environ.get("SNAPSCOPE_VENVS"):
        return os.environ["SNAPSCOPE_VENVS"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "snapscope", "venvs")


def tool_venv(requirement):
    """The folder of the virtualenv holding `requirement` (NAME==VERSION), made when missing."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9._+-]+", requirement):
        raise SystemExit(f"tool_venv: {requirement!r} is not NAME==VERSION: pin the tool's version")
    venv = os.path.join(venvs_root(), requirement.replace("==", "-"))
    done = os.path.join(venv, ".complete")
    if not os.path.exists(done):
        shutil.rmtree(venv, ignore_errors=True)
        # stdout is the folder's path for shell callers: the tools' own output goes to stderr.
        subprocess.check_call([sys.executable, "-m", "venv", venv], stdout=sys.stderr)
        pip = os.path.join(venv, "bin", "pip")
        subprocess.check_call([pip, "install", "-q", "--disable-pip-version-check", requirement], stdout=sys.stderr)
        open(done, "w").close()
    return venv


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: scripts/tool_venv.py NAME==VERSION")
    print(tool_venv(sys.argv[1]))
