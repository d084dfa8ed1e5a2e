#!/usr/bin/env python3
"""The meaning evaluation: what the engine concludes about each corpus file against what its
stacks say (tests/meaning/corpus.json, decided by reading the frames; see tests/meaning/README.md).

usage: tests/meaning/evaluate.py SNAPSCOPE [SNAPSHOTS_DIR] [--truth TRUTH.json]   (stdlib only)

`--truth` reads another set of files and answers in corpus.json's format (paths relative to
SNAPSHOTS_DIR): a set kept outside the repository, for files the rules were not written on.

Per device it checks the program kind, the number of complete training steps, the leak verdict
(a high-priority leak finding exactly where memory grows across steps), the category shares at
the allocated peak (or at the dump) within the stated tolerance, and that the headline finding
is among the first three. Prints every miss and the score; exits 1 on any miss.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def shares_ok(want, got, tol):
    """`want`: {"a|b": share}: the engine's categories a and b together; any category no key
    names must stay within the tolerance."""
    misses, used = [], set()
    for key, share in want.items():
        names = key.split("|")
        have = sum(v for c, v in got.items() if c in names and c not in used)
        used.update(n for n in names if n in got)
        if abs(have - share) > tol + 1e-9:
            misses.append(f"{key} {have:.2f} (want {share:.2f} ± {tol:.2f})")
    for c, v in got.items():
        if c not in used and v > tol + 1e-9:
            misses.append(f"{c} {v:.2f} (want at most {tol:.2f})")
    return misses


def headline(want, findings):
    top = findings[:3]
    for f in top:
        names = want.get("names", "").lower().split("|")
        if f["category"] in want["finding"].split("|") and any(n in f["title"].lower() for n in names):
            return None
    return f"headline {want} not in the first three: {[f['title'] for f in top]}"


def check(dev, want, got_dev):
    misses = []
    steps = got_dev.get("steps") or {}
    program = steps.get("program") or {}
    kind = program.get("kind", "dump_only" if got_dev["overview"]["events"] == 0 else None)
    if kind != want["kind"]:
        misses.append(f"kind {kind} (want {want['kind']}): {program.get('text', '')}")
    if program.get("training_steps", 0) != want["training_steps"]:
        misses.append(f"training steps {program.get('training_steps', 0)} (want {want['training_steps']})")
    findings = got_dev.get("findings", [])
    leak = [f for f in findings if f["category"] == "leak" and f["priority"] in ("high", "medium")]
    if want["leak"] == "leak" and not any(f["priority"] == "high" for f in leak):
        misses.append("no high-priority leak finding (want one: memory grows across steps)")
    if want["leak"] != "leak" and leak:
        misses.append(f"leak finding {leak[0]['priority']}: {leak[0]['title']} (want none: {want['leak']})")
    cats = got_dev.get("categories") or {}
    got = {c["category"]: c["share"] for c in cats.get("categories", [])}
    misses += [f"categories at the peak: {m}" for m in shares_ok(want["categories_at_peak"], got, want["tolerance"])]
    phase = (steps.get("peak_allocated_at") or {}).get("phase")
    if "peak_phase" in want and phase != want["peak_phase"]:
        misses.append(f"the allocated peak's phase {phase} (want {want['peak_phase']})")
    h = headline(want["headline_finding"], findings)
    if h:
        misses.append(h)
    return misses


def main():
    args = sys.argv[1:]
    truth_path = os.path.join(HERE, "corpus.json")
    if "--truth" in args:
        k = args.index("--truth")
        truth_path = args[k + 1]
        del args[k : k + 2]
    cli = args[0]
    root = args[1] if len(args) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "snapshots")
    if not os.path.isdir(root):
        print(f"meaning: {root} not present: skipped")
        return 0
    truth = json.load(open(truth_path))
    checked = failed = 0
    for rel, entry in sorted(truth.items()):
        out = subprocess.run([cli, "analyze", os.path.join(root, rel), "--mode", "all", "--json"], capture_output=True, text=True)
        if out.returncode:
            print(f"FAIL {rel}: {out.stderr.strip()[:300]}")
            failed += 1
            continue
        got = {str(d["device"]): d for d in json.loads(out.stdout)["devices"]}
        for dev, want in sorted(entry["devices"].items()):
            checked += 1
            if want["kind"] == "empty":
                misses = [] if not got else [f"devices {sorted(got)} (want none: the snapshot is empty)"]
            elif dev not in got:
                misses = [f"device {dev} missing"]
            else:
                misses = check(dev, want, got[dev])
            if misses:
                failed += 1
                print(f"FAIL {rel} device {dev}:")
                for m in misses:
                    print(f"     {m}")
    print(f"meaning: {checked - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
