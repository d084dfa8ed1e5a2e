#!/usr/bin/env python3
"""Native import benchmark: snapscope against pt-snap-cli 0.4.1 on the same snapshot, same run.

usage: scripts/bench_native.py [--mb 100] [--file SNAPSHOT] [--repeat 3] [--no-ptsnap] [--json OUT]

Generates the snapshot with scripts/gen_big.py when --file is not given (bench-out/big<MB>.pickle),
installs pt-snap-cli==0.4.1 (scripts/tool_venv.py) on first use, then times `snapscope import` and
`pt-snap import --force` (wall clock, peak RSS of the process via wait4) and prints a table with
MB/s and the ratio. Not a test: numbers depend on the machine and its load; compare within a run.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_venv import tool_venv  # noqa: E402

EVENTS_PER_MB = 11000  # gen_big.py writes ~91 bytes per event


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[0]} failed: {err[-2000:]}")
    return wall, ru.ru_maxrss * 1024


def ensure_ptsnap():
    return os.path.join(tool_venv("pt-snap-cli==0.4.1"), "bin", "pt-snap")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-ptsnap", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    snap = a.file
    if not snap:
        os.makedirs(os.path.join(ROOT, "bench-out"), exist_ok=True)
        snap = os.path.join(ROOT, "bench-out", f"big{a.mb}.pickle")
        if not os.path.exists(snap):
            subprocess.check_call([sys.executable, os.path.join(ROOT, "scripts", "gen_big.py"), str(a.mb * EVENTS_PER_MB), snap])
    size = os.path.getsize(snap)
    cli = os.path.join(ROOT, "target", "release", "snapscope")
    if not os.path.exists(cli):
        subprocess.check_call(["cargo", "build", "-j", "2", "--release", "--bin", "snapscope"], cwd=ROOT)
    out = tempfile.mkdtemp(prefix="snapscope-bench-")
    results = {}
    tools = {"snapscope import": [cli, "import", snap, "-o", os.path.join(out, "s.db"), "--force", "--no-focus"]}
    if not a.no_ptsnap:
        tools["pt-snap-cli 0.4.1 import"] = [ensure_ptsnap(), "import", snap, "-o", out, "--force", "--no-focus"]
    for name, cmd in tools.items():
        runs = [run(cmd) for _ in range(a.repeat)]
        best = min(r[0] for r in runs)
        results[name] = {"seconds": [round(r[0], 3) for r in runs], "best_s": round(best, 3), "mb_per_s": round(size / 1e6 / best, 1), "peak_rss_mib": round(max(r[1] for r in runs) / 2**20)}
    shutil.rmtree(out)  # the imports' databases: only their times are kept
    print(f"\nsnapshot: {snap} ({size / 2**20:.1f} MiB)")
    print(f"{'tool':<28}{'best s':>9}{'MB/s':>9}{'peak RSS MiB':>15}   runs")
    for name, r in results.items():
        print(f"{name:<28}{r['best_s']:>9}{r['mb_per_s']:>9}{r['peak_rss_mib']:>15}   {r['seconds']}")
    if len(results) == 2:
        s, p = results["snapscope import"], results["pt-snap-cli 0.4.1 import"]
        print(f"\nsnapscope is {p['best_s'] / s['best_s']:.1f}x faster and uses {p['peak_rss_mib'] / max(1, s['peak_rss_mib']):.1f}x less memory")
        results["speedup"] = round(p["best_s"] / s["best_s"], 2)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"snapshot": snap, "bytes": size, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
