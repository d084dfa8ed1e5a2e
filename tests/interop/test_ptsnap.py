#!/usr/bin/env python3
"""pt-snap-cli 0.4.1 (installed from PyPI into a virtualenv of scripts/tool_venv.py) reads snapscope's
`export --format pt-snap` of the NPU snapshots: its memory_peak equals snapscope's peaks and its
leak_detection finds the same candidates as its own import (pt-snap-cli-golden.json)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "..", "shared")
NPU = os.path.join(SHARED, "snapshots", "npu")
CLI = os.path.join(ROOT, "target", "release", "snapscope")


sys.path.insert(0, os.path.join(ROOT, "scripts"))
from tool_venv import tool_venv  # noqa: E402


def ptsnap():
    return os.path.join(tool_venv("pt-snap-cli==0.4.1"), "bin", "pt-snap")


def js(cmd, cwd):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"{cmd}: {out.stderr or out.stdout}")
    return json.loads(out.stdout)


@unittest.skipUnless(os.path.isdir(NPU), "../shared/snapshots/npu not present")
class PtSnapReadsTheExport(unittest.TestCase):
    def test_npu_exports(self):
        exe = ptsnap()
        golden = json.load(open(os.path.join(SHARED, "docs", "pt-snap-cli-golden.json")))
        work = tempfile.mkdtemp(prefix="snapscope-ptsnap-")
        for key, g in golden.items():
            name, dev = key.split("#device")
            snap = os.path.join(NPU, name)
            db = os.path.join(work, f"{name}.{dev}.pt.db")
            subprocess.check_call([CLI, "export", snap, "--format", "pt-snap", "-o", db], stdout=subprocess.DEVNULL)
            ours = js([CLI, "overview", snap, "--json"], work)
            d = next(x for x in ours["devices"] if x["device"] == int(dev))
            peak = js([exe, "query", db, "--template-use", "memory_peak", "--device", dev, "--json"], work)["rows"][0]
            self.assertEqual(peak["peak_allocated"], d["peaks"]["allocated"]["bytes"], key)
            self.assertEqual(peak["peak_reserved"], d["peaks"]["reserved"]["bytes"], key)
            self.assertEqual(peak["peak_reserved_event_id"], d["peaks"]["reserved"]["event"], key)
            leaks = js([exe, "query", db, "--template-use", "leak_detection", "--device", dev, "--json"], work)
            self.assertEqual(leaks["returned"], g["leak_candidates_total"], key)
        # Last, so a failing test keeps its files to look at.
        shutil.rmtree(work)


if __name__ == "__main__":
    unittest.main(verbosity=2)
