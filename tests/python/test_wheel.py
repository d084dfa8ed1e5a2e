#!/usr/bin/env python3
"""The Python wheel: scripts/build_wheel.sh builds it, a fresh virtualenv installs it (no Rust, no
network: --no-index), and there the `snapscope` command and the `snapscope` module answer like
the CLI of this checkout on a real snapshot, a path, its bytes and its dict alike; `show()` and
`html()` give a page that Chromium opens to `data-snapscope="ready"` with the same peaks, from
disk and inside an iframe as Jupyter shows it."""
import glob
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "target", "release", "snapscope")
CORPUS = os.path.join(ROOT, "..", "shared", "snapshots")
# A real snapshot with annotations and an OOM on device 1; the generated fixture without the corpus.
REAL = os.path.join(CORPUS, "cuda", "Constructor-Sun__code_location", "memory_snapshot.pickle")
SNAPSHOT = REAL if os.path.exists(REAL) else os.path.join(ROOT, "fixtures", "multi_device_oom.pickle")
OUT = os.path.join(ROOT, "tests", "out", "wheel")


def cli_json(*args):
    return json.loads(subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, check=True).stdout)


def has_pip_python_option():
    """Whether this Python has a pip that installs into another interpreter (--python, pip >= 22.3)."""
    try:
        import pip
    except ImportError:
        return False
    return tuple(int(x) for x in pip.__version__.split(".")[:2]) >= (22, 3)


def peaks(ov):
    return [(d["device"], d["peaks"]["allocated"], d["peaks"]["reserved"]) for d in ov["devices"]]


class Wheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        work = tempfile.mkdtemp(prefix="snapscope-wheel-")
        # The wheel the release step built (scripts/test.sh passes it: built once), else a new one.
        given = os.environ.get("SNAPSCOPE_WHEEL", "")
        if given and os.path.isfile(given):
            cls.wheel = given
        else:
            built = subprocess.run(
                ["bash", os.path.join(ROOT, "scripts", "build_wheel.sh"), os.path.join(work, "wheels")],
                capture_output=True, text=True, check=True,
            )
            cls.wheel = built.stdout.strip().splitlines()[-1]
        venv = os.path.join(work, "venv")
        install = ["install", "-q", "--no-index", "--disable-pip-version-check", cls.wheel]
        if has_pip_python_option():
            # No pip of its own (ensurepip spent about 6 s of CPU filling every new virtualenv):
            # this Python's pip installs the wheel into it.
            subprocess.check_call([sys.executable, "-m", "venv", "--without-pip", venv])
            subprocess.check_call([sys.executable, "-m", "pip", "--python", os.path.join(venv, "bin", "python"), *install])
        else:
            subprocess.check_call([sys.executable, "-m", "venv", venv])
            subprocess.check_call([os.path.join(venv, "bin", "pip"), *install])
        cls.bin = os.path.join(venv, "bin")
        cls.work = work
        os.makedirs(OUT, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def py(self, code, env=None):
        """Run `code` in the venv's Python, outside this checkout; its last stdout line as JSON."""
        done = subprocess.run([os.path.join(self.bin, "python"), "-c", code], capture_output=True, text=True,
                              cwd=self.work, env={**os.environ, "PATH": "/usr/bin:/bin", **(env or {})})
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout.strip().splitlines()[-1])

    def test_the_wheel_is_named_for_this_version_and_carries_the_cli(self):
        version = cli_json("capabilities")["engine_version"]
        self.assertIn(f"snapscope-{version}-", os.path.basename(self.wheel))
        out = subprocess.run([os.path.join(self.bin, "snapscope"), "--version"], capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), f"snapscope {version}")

    def test_the_installed_cli_answers_like_this_checkouts(self):
        got = subprocess.run([os.path.join(self.bin, "snapscope"), "overview", SNAPSHOT, "--json"],
                             capture_output=True, text=True, check=True)
        self.assertEqual(json.loads(got.stdout), cli_json("overview", SNAPSHOT))

    def test_module_overview_of_a_path_bytes_and_a_dict(self):
        want = peaks(cli_json("overview", SNAPSHOT))
        got = self.py(f"""
import json, pickle, snapscope
p = {SNAPSHOT!r}
a = snapscope.overview(p)
b = snapscope.overview(open(p, "rb").read())
c = snapscope.overview(pickle.load(open(p, "rb")))   # the dict torch.cuda.memory._snapshot() gives
print(json.dumps([a, b, c, snapscope.__version__]))
""")
        for ov in got[:3]:
            self.assertEqual([tuple(x) for x in peaks(ov)], [tuple(x) for x in want])
        self.assertEqual(got[3], cli_json("capabilities")["engine_version"])

    def test_module_analyze_and_query_return_the_clis_json(self):
        got = self.py(f"""
import json, snapscope
p = {SNAPSHOT!r}
print(json.dumps([snapscope.analyze(p, mode="oom"), snapscope.query(p, "memory_peak", device=0)]))
""")
        self.assertEqual(got[0], cli_json("analyze", SNAPSHOT, "--mode", "oom"))
        self.assertEqual(got[1], cli_json("query", SNAPSHOT, "-t", "memory_peak", "--device", "0"))

    def test_module_errors_say_what_and_what_to_do(self):
        got = self.py("""
import json, snapscope
try:
    snapscope.overview(b"not a pickle at all")
except snapscope.SnapscopeError as e:
    print(json.dumps([e.code, e.message, e.hint]))
""")
        bad = os.path.join(self.work, "bad.pickle")
        with open(bad, "wb") as f:
            f.write(b"not a pickle at all")
        want = json.loads(subprocess.run([CLI, "overview", bad, "--json"], capture_output=True, text=True).stderr)
        self.assertEqual(got, [want["error"]["code"], want["error"]["message"], want["error"]["hint"]])
        self.assertTrue(got[2], "a hint says what to do")
        self.assertRegex(got[1], r"byte|offset|pickle")
        got = self.py("""
import json, snapscope
try:
    snapscope.overview(42)
except TypeError as e:
    print(json.dumps(str(e)))
""")
        self.assertIn("a path, bytes or a dict", got)

    def test_show_and_html_open_in_chromium_ready_with_the_same_peaks(self):
        want = peaks(cli_json("overview", SNAPSHOT))
        # Outside a notebook show() writes the page and opens a browser ($BROWSER: do nothing).
        page, frame_host = self.py(f"""
import json, pickle, snapscope
p = {SNAPSHOT!r}
shown = snapscope.show(pickle.load(open(p, "rb")), name="live.pickle")
doc = snapscope.html(p)
host = {os.path.join(OUT, "jupyter.html")!r}
open(host, "w").write("<!doctype html><title>notebook</title><h1>In [1]:</h1>" + snapscope._iframe(doc, 700))
print(json.dumps([shown, host]))
""", env={"BROWSER": "true"})
        target = os.path.join(OUT, "show.html")
        shutil.copy(page, target)
        os.unlink(page)
        for file, flag, name in ((target, None, "live.pickle"), (frame_host, "--frame", os.path.basename(SNAPSHOT))):
            cmd = ["node", os.path.join(ROOT, "tests", "python", "page_ready.mjs"), file] + ([flag] if flag else [])
            res = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            self.assertEqual(res["state"], "ready", res)
            self.assertTrue(res["name"].startswith(name + " "), res["name"])
            self.assertEqual([tuple(x) for x in peaks(res["overview"])], [tuple(x) for x in want])
            self.assertEqual(res["errors"], [])
            if flag:
                # Jupyter's iframe is sandboxed: the page works in it but cannot read the notebook.
                self.assertFalse(res["parentReadable"], res)
        iframe = open(frame_host, encoding="utf-8").read()
        self.assertIn('sandbox="allow-scripts allow-downloads"', iframe)
        self.assertNotIn("allow-same-origin", iframe)


if __name__ == "__main__":
    unittest.main(verbosity=2)
