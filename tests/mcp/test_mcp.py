#!/usr/bin/env python3
"""`snapscope mcp` with the official MCP Python SDK (`mcp` from PyPI) as the client.

Run with any python3: it re-runs itself in the virtualenv of the pinned SDK (scripts/tool_venv.py,
made on the machine's first run and reused by every checkout). The server is the CLI of
this checkout (SNAPSCOPE_BIN, else target/release/snapscope, else target/debug/snapscope).

Covered: initialize, tools with input and output schemas, prompts (the skills) and resources;
every tool on real corpus files with its structuredContent compared to the CLI's --json for the
same question; bounds (an SQL over 650k rows, the tree of a 100k-frame stack); errors (missing
file, bad arguments, hostile pickles, a path outside the allowed folders); the cache (a second
question on the 99 MiB generated file at least 5x faster than the first); cancellation; and the
MCP Inspector CLI when npx can run it.
"""
import contextlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from tool_venv import tool_venv  # noqa: E402

# The SDK's version, pinned so that a virtualenv made once stays the one tested.
MCP_SDK = "mcp==2.3.0"


def ensure_venv():
    """Re-run inside the SDK's virtualenv (scripts/tool_venv.py, made on first use)."""
    venv = tool_venv(MCP_SDK)
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    py = os.path.join(venv, "bin", "python")
    os.execv(py, [py, os.path.abspath(__file__), *sys.argv[1:]])


if __name__ == "__main__":
    ensure_venv()

import anyio  # noqa: E402
import jsonschema  # noqa: E402
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


def find_bin():
    for p in [os.environ.get("SNAPSCOPE_BIN"), os.path.join(ROOT, "target", "release", "snapscope"), os.path.join(ROOT, "target", "debug", "snapscope")]:
        if p and os.path.exists(p):
            return p
    raise SystemExit("build the CLI first (cargo build)")


BIN = find_bin()
CORPUS = os.path.realpath(os.path.join(ROOT, "..", "shared", "snapshots"))
# Three devices, an OOM on device 1, annotations.
REAL = os.path.join(CORPUS, "cuda", "Constructor-Sun__code_location", "memory_snapshot.pickle")
OTHER = os.path.join(CORPUS, "npu", "snapshot_expandable.pkl")
BAD = os.path.join(ROOT, "fixtures", "bad")
OUT = os.path.join(ROOT, "tests", "out", "mcp")
BIG = os.path.join(OUT, "big_650k.pickle")
DEEP = os.path.join(OUT, "deep_stack.pickle")
SERVER_EXTRA = ["--allow", CORPUS, "--allow", OUT, "--allow", BAD]
# What the server adds to the CLI's answer.
ADDED = ("provenance", "bounds", "cursor", "next_cursor")
BIG_BYTES = 10 << 20


def cli_json(*args):
    r = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"snapscope {' '.join(args)} failed: {r.stderr}")
    return json.loads(r.stdout)


def strip(v):
    v = dict(v)
    for k in ADDED:
        v.pop(k, None)
    return v


def make_fixtures():
    os.makedirs(OUT, exist_ok=True)
    if not os.path.exists(BIG):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_big.py"), "650000", BIG], check=True, capture_output=True)
    if not os.path.exists(DEEP):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import gen_fixtures as g  # noqa: E402

        t = g.Trace()
        base = 0x7F0000000000
        t.segment_alloc(base, 20 << 20)
        frames = [{"filename": f"/work/deep/f{i}.py", "line": i, "name": f"level{i}"} for i in range(100_000)]
        t.malloc(base, 1 << 20, 1 << 20, frames)
        t.malloc(base + (1 << 20), 4096, 4096, frames[:3])
        with open(DEEP, "wb") as f:
            pickle.dump({"segments": t.dump_segments(), "device_traces": [t.events]}, f, protocol=4)


class C:
    def __init__(self, session, init):
        self.session, self.init = session, init

    async def call(self, name, **args):
        r = await self.session.call_tool(name, args)
        size = len(json.dumps(r.structured_content or {}, separators=(",", ":"), ensure_ascii=False).encode()) + sum(len(c.text.encode()) for c in r.content if c.type == "text")
        return r, size

    async def ok(self, name, **args):
        r, size = await self.call(name, **args)
        assert not r.is_error, f"{name} {args}: {r.content[0].text if r.content else r}"
        return r.structured_content, size


@contextlib.asynccontextmanager
async def Client(*extra, roots=None, cwd=None):
    """One server process and an initialized session on it."""
    params = StdioServerParameters(command=BIN, args=["mcp", *SERVER_EXTRA, *extra], cwd=cwd or ROOT)
    kw = {}
    if roots is not None:

        async def list_roots(_ctx):
            return types.ListRootsResult(roots=[types.Root(uri=f"file://{r}") for r in roots])

        kw["list_roots_callback"] = list_roots
    with open(os.devnull, "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write, **kw) as session:
                init = await session.initialize()
                yield C(session, init)


def run(coro_fn):
    return anyio.run(coro_fn)


class Mcp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        make_fixtures()

    def test_1_lists(self):
        async def go():
            async with Client() as c:
                self.assertEqual(c.init.server_info.name, "snapscope")
                tools = (await c.session.list_tools()).tools
                names = {t.name for t in tools}
                self.assertEqual(names, {"overview", "analyze", "holders", "tree", "event", "stack", "compare", "diff", "simulate", "query", "sql", "ranks"})
                for t in tools:
                    self.assertEqual(t.input_schema["type"], "object", t.name)
                    self.assertEqual(t.output_schema["type"], "object", t.name)
                    self.assertIn("ok", t.output_schema["properties"], t.name)
                    self.assertGreater(len(t.description), 80, t.name)
                    self.assertTrue(t.annotations.read_only_hint, t.name)
                prompts = (await c.session.list_prompts()).prompts
                self.assertEqual({p.name for p in prompts}, {"snapscope-preflight", "snapscope-peak", "snapscope-leak", "snapscope-fragmentation", "snapscope-oom"})
                p = await c.session.get_prompt("snapscope-oom", {"snapshot": REAL})
                self.assertIn(REAL, p.messages[0].content.text)
                templates = (await c.session.list_resource_templates()).resource_templates
                self.assertEqual(len(templates), 2)

        run(go)

    def test_2_tools_match_cli(self):
        async def go():
            async with Client() as c:
                mb = {"max_bytes": BIG_BYTES}
                v, _ = await c.ok("overview", snapshot=REAL, **mb)
                self.assertEqual(strip(v), cli_json("overview", REAL))
                prov = v["provenance"]
                self.assertEqual(prov["size"], os.path.getsize(REAL))
                self.assertEqual(len(prov["sha256"]), 64)
                caps = cli_json("capabilities")["answer_schemas"]
                tools = {t.name: t for t in (await c.session.list_tools()).tools}
                broken = dict(cli_json("overview", REAL), devices="none")
                with self.assertRaises(jsonschema.ValidationError):
                    jsonschema.validate(broken, tools["overview"].output_schema)
                for mode in ["overview", "peak", "fragment", "leak", "oom", "categories", "steps", "streams", "all"]:
                    v, _ = await c.ok("analyze", snapshot=REAL, mode=mode, **mb)
                    cli = cli_json("analyze", REAL, "--mode", mode)
                    self.assertEqual(strip(v), cli, mode)
                    jsonschema.validate(cli, caps["analyses"][mode])
                    broken = dict(cli, devices=[{"device": "zero"}])
                    with self.assertRaises(jsonschema.ValidationError, msg=mode):
                        jsonschema.validate(broken, caps["analyses"][mode])
                v, _ = await c.ok("analyze", snapshot=REAL, mode="tune", device=0, **mb)
                self.assertEqual(strip(v), cli_json("analyze", REAL, "--mode", "tune", "--device", "0"))
                v, _ = await c.ok("analyze", snapshot=REAL, mode="peak", device=1, event=100, **mb)
                self.assertEqual(strip(v), cli_json("analyze", REAL, "--mode", "peak", "--device", "1", "--event", "100"))
                # tree: the CLI's nodes, all of them in one page
                v, _ = await c.ok("tree", snapshot=REAL, device=0, limit=1_000_000, **mb)
                cli = cli_json("analyze", REAL, "--mode", "tree", "--device", "0")
                self.assertEqual(v["devices"][0]["tree"]["nodes"], cli["devices"][0]["tree"]["nodes"])
                self.assertEqual(v["devices"][0]["tree"]["total"], len(cli["devices"][0]["tree"]["nodes"]))
                v, _ = await c.ok("tree", snapshot=REAL, device=0, depth=2, min_share=0.05)
                self.assertTrue(all(n["depth"] <= 2 and n["share"] >= 0.05 for n in v["devices"][0]["tree"]["nodes"]))
                # holders at the peak = the template at the peak event
                peak = cli_json("overview", REAL)["devices"][0]["peaks"]["allocated"]["event"]
                v, _ = await c.ok("holders", snapshot=REAL, device=0, limit=5)
                self.assertEqual(v["provenance"]["event"], peak)
                cli = cli_json("query", REAL, "-t", "active_memory_callstack_at_event", "--params", json.dumps({"event_id": peak, "top_n": -1, "stack_bytes": 1024}), "--device", "0")
                self.assertEqual(v["rows"], cli["rows"][:5])
                self.assertEqual(v["total"], cli["total"])
                self.assertEqual(v["has_more"], cli["total"] > 5)
                v2, _ = await c.ok("holders", snapshot=REAL, device=0, limit=5, cursor=v["next_cursor"])
                self.assertEqual(v2["rows"], cli["rows"][5:10])
                v, _ = await c.ok("holders", snapshot=REAL, device=0, by="category")
                cli = cli_json("query", REAL, "-t", "categories", "--params", json.dumps({"event_id": peak, "group_by": "category"}), "--device", "0")
                self.assertEqual(v["rows"], cli["rows"][:20])
                v, _ = await c.ok("holders", snapshot=REAL, device=0, by="frame")
                cli = cli_json("analyze", REAL, "--mode", "peak", "--device", "0")
                self.assertEqual(v["groups"], cli["devices"][0]["peak"]["by_top_frame"][:20])
                # a line that runs the whole loop (trainer.train()) names no group: the library's
                # lines inside it do
                loop = os.path.join(OUT, "program_hf_trainer.pickle")
                shutil.copy(os.path.join(ROOT, "fixtures", "program_hf_trainer.pickle"), loop)
                r, _ = await c.call("holders", snapshot=loop, device=0, by="frame")
                self.assertFalse(r.is_error, r.content[0].text)
                labels = [g["label"] for g in r.structured_content["groups"]]
                self.assertNotIn("finetune.py:40", r.content[0].text)
                self.assertIn("_init_group (torch/optim/adamw.py:400)", labels)
                self.assertIn("forward (transformers/models/llama/modeling_llama.py:300)", labels)
                details = [g["detail"] for g in r.structured_content["groups"]]
                self.assertIn("freed at zero_grad (torch/nn/modules/module.py:2800)", details)
                # event and stack
                v, _ = await c.ok("event", snapshot=REAL, device=0, event=peak)
                self.assertEqual(strip(v), cli_json("query", REAL, "-t", "event", "--params", json.dumps({"id": peak, "stack_bytes": 2048}), "--device", "0"))
                stack_id = v["rows"][0]["stack_id"]
                v, _ = await c.ok("stack", snapshot=REAL, device=0, event=peak, limit=1000)
                cli = cli_json("query", REAL, "-t", "event_frames", "--params", json.dumps({"event_id": peak}), "--device", "0")
                self.assertEqual(v["rows"], cli["rows"])
                v, _ = await c.ok("stack", snapshot=REAL, stack_id=stack_id, limit=1000)
                self.assertEqual([r["name"] for r in v["frames"]], [r["name"] for r in cli["rows"]])
                self.assertEqual(v["total"], len(cli["rows"]))
                # compare, simulate, query, sql, ranks
                v, _ = await c.ok("compare", snapshot=REAL, ref=OTHER, **mb)
                self.assertEqual(strip(v), cli_json("analyze", REAL, "--mode", "compare", "--ref", OTHER))
                # diff: its three forms, each the CLI's answer and valid by the tool's output schema
                forms = [
                    ({"ref": OTHER}, [REAL, OTHER], "files"),
                    ({"ref": OTHER, "steps": True, "top": 5}, [REAL, OTHER, "--steps", "--top", "5"], "steps"),
                    ({"at": [100, "peak"], "device": 0}, [REAL, "--at", "100", "--at", "peak", "--device", "0"], "moments"),
                ]
                for args, argv, form in forms:
                    v, _ = await c.ok("diff", snapshot=REAL, **args, **mb)
                    self.assertEqual(v["mode"], form)
                    self.assertEqual(strip(v), cli_json("diff", *argv), form)
                    jsonschema.validate(v, tools["diff"].output_schema)
                self.assertEqual(v["devices"][0]["event_a"], 100)
                with self.assertRaises(jsonschema.ValidationError):
                    jsonschema.validate(dict(v, devices=[{"device": "zero"}]), tools["diff"].output_schema)
                v, _ = await c.ok("simulate", snapshot=REAL, alloc_conf="expandable_segments:True", **mb)
                self.assertEqual(strip(v), cli_json("simulate", REAL, "--alloc-conf", "expandable_segments:True"))
                v, _ = await c.ok("query", snapshot=REAL, template="leak_detection", params={"limit": 7}, device=1)
                cli = cli_json("query", REAL, "-t", "leak_detection", "--params", json.dumps({"limit": 7, "stack_bytes": 1024}), "--device", "1", "--max-rows", "200")
                self.assertEqual(strip(v), cli)
                v, _ = await c.ok("query", snapshot=REAL, template="top_allocations")
                cli = cli_json("query", REAL, "-t", "top_allocations", "--max-rows", "200")
                self.assertEqual(strip(v), cli)
                jsonschema.validate(cli, caps["templates"]["top_allocations"])
                sql = "SELECT action, COUNT(*) AS n, SUM(size) AS bytes FROM traces GROUP BY action ORDER BY action"
                v, _ = await c.ok("sql", snapshot=REAL, sql=sql)
                self.assertEqual(strip(v), cli_json("sql", REAL, sql, "--max-rows", "200"))
                files = [os.path.join(CORPUS, "npu", f) for f in ["snapshot_expandable.pkl", "snapshot_with_empty_cache.pkl"]]
                v, _ = await c.ok("ranks", snapshots=files, **mb)
                self.assertEqual(strip(v), cli_json("ranks", *files))
                # resources: the opened files' overview and report
                res = (await c.session.list_resources()).resources
                uris = {str(r.uri) for r in res}
                self.assertIn(f"snapscope://overview{REAL}", uris)
                r = await c.session.read_resource(f"snapscope://overview{REAL}")
                self.assertEqual(json.loads(r.contents[0].text), cli_json("overview", REAL))
                r = await c.session.read_resource(f"snapscope://report{REAL}")
                self.assertIn("<html", r.contents[0].text[:500].lower())

        run(go)

    def test_3_bounds(self):
        async def go():
            async with Client() as c:
                v, size = await c.ok("sql", snapshot=BIG, sql="SELECT * FROM traces", limit=700_000, timeout_s=120)
                self.assertLessEqual(size, 256 << 10)
                self.assertTrue(v["truncated"] and v["has_more"] and v["bounds"]["truncated"])
                n = v["returned"]
                self.assertEqual(len(v["rows"]), n)
                self.assertGreater(n, 100)
                v2, size = await c.ok("sql", snapshot=BIG, sql="SELECT * FROM traces", cursor=v["next_cursor"], limit=10)
                self.assertEqual(v2["rows"][0]["trace_index"], v["rows"][-1]["trace_index"] + 1)
                total = cli_json("sql", BIG, "SELECT COUNT(*) AS n FROM traces")["rows"][0]["n"]
                self.assertGreaterEqual(total, 650_000)
                v, size = await c.ok("sql", snapshot=BIG, sql="SELECT * FROM traces", max_bytes=1 << 20, limit=700_000, timeout_s=120)
                self.assertLessEqual(size, 1 << 20)
                self.assertGreater(v["returned"], n)
                # the memory tree of a 100k-frame stack: paged, bounded
                v, size = await c.ok("tree", snapshot=DEEP)
                tree = v["devices"][0]["tree"]
                self.assertLessEqual(size, 256 << 10)
                self.assertGreater(tree["total"], 100_000)
                self.assertTrue(tree["has_more"])
                v, size = await c.ok("stack", snapshot=DEEP, event=1, limit=50, cursor=99_990)
                self.assertEqual(v["returned"], 10)
                self.assertFalse(v["has_more"])
                v, size = await c.ok("event", snapshot=DEEP, event=1)
                deep_stack = v["rows"][0]["stack_id"]
                self.assertTrue(v["rows"][0]["stack_truncated"])
                p, _ = await c.ok("stack", snapshot=DEEP, stack_id=deep_stack, cursor=99_990)
                self.assertEqual((p["total"], p["returned"], p["has_more"]), (100_000, 10, False))
                p, size = await c.ok("stack", snapshot=DEEP, stack_id=deep_stack, limit=100_000)
                self.assertLessEqual(size, 256 << 10)
                self.assertTrue(p["has_more"] and p["truncated"])
                self.assertEqual(p["frames"][0]["name"], "level0")
                self.assertLessEqual(len(v["rows"][0]["callstack"].encode()), 2048 + 64)
                self.assertLessEqual(size, 256 << 10)

        run(go)

    def test_4_errors(self):
        async def go():
            async with Client() as c:
                async def err(name, **args):
                    r, _ = await c.call(name, **args)
                    self.assertTrue(r.is_error, f"{name} {args} should fail")
                    return r.structured_content["error"]

                e = await err("overview", snapshot=os.path.join(OUT, "missing.pickle"))
                self.assertEqual(e["code"], "FILE_NOT_FOUND")
                e = await err("overview", snapshot="/etc/hostname")
                self.assertEqual(e["code"], "PATH_NOT_ALLOWED")
                e = await err("analyze", snapshot=REAL, mode="nonsense")
                self.assertEqual(e["code"], "INVALID_PARAMETER")
                e = await err("analyze", snapshot=REAL, colour="red")
                self.assertEqual(e["code"], "INVALID_PARAMETER")
                e = await err("diff", snapshot=REAL, ref=OTHER, at=[1, 2])
                self.assertEqual(e["code"], "INVALID_PARAMETER")
                e = await err("diff", snapshot=REAL, at=["peak"])
                self.assertEqual(e["code"], "INVALID_PARAMETER")
                e = await err("event", snapshot=REAL, event="ten")
                self.assertEqual(e["code"], "INVALID_PARAMETER")
                e = await err("event", snapshot=REAL, device=0, event=10**9)
                self.assertEqual(e["code"], "EVENT_OUT_OF_RANGE")
                e = await err("sql", snapshot=REAL, sql="DELETE FROM traces")
                self.assertEqual(e["code"], "QUERY_NOT_READONLY")
                e = await err("sql", snapshot=REAL, sql="ATTACH DATABASE '/tmp/x.db' AS x")
                for hostile in ["os_system.pickle", "reduce_class.pickle", "eval_stack_global.pickle", "gzip_bomb.pickle.gz", "truncated.pickle"]:
                    path = os.path.join(BAD, hostile)
                    e = await err("overview", snapshot=path)
                    r = subprocess.run([BIN, "overview", path, "--json"], capture_output=True, text=True)
                    self.assertEqual(e["code"], json.loads(r.stderr)["error"]["code"], hostile)
                self.assertFalse(os.path.exists("/tmp/x.db"))
                # the server is still up
                v, _ = await c.ok("overview", snapshot=REAL)
                self.assertTrue(v["ok"])

            # a client with roots: only those (and --allow) are readable
            with tempfile.TemporaryDirectory() as d:
                async with Client(roots=[d], cwd=d) as c:
                    r, _ = await c.call("overview", snapshot=REAL)
                    self.assertFalse(r.is_error)  # --allow CORPUS
                    shutil.copy(os.path.join(ROOT, "fixtures", "multi_device_oom.pickle"), os.path.join(d, "x.pickle"))
                    r, _ = await c.call("overview", snapshot="x.pickle")
                    self.assertFalse(r.is_error, r.content[0].text)
                    r, _ = await c.call("overview", snapshot=os.path.join(ROOT, "fixtures", "multi_device_oom.pickle"))
                    self.assertTrue(r.is_error)
                    self.assertEqual(r.structured_content["error"]["code"], "PATH_NOT_ALLOWED")

        run(go)

    def test_5_cache(self):
        async def go():
            async with Client() as c:
                progress = []

                async def on_progress(p, total, message):
                    progress.append(message)

                t0 = time.monotonic()
                r = await c.session.call_tool("overview", {"snapshot": BIG}, progress_callback=on_progress)
                first = time.monotonic() - t0
                v = r.structured_content
                self.assertEqual(v["provenance"]["cache"], "miss")
                if first > 2.5:  # progress every second while a call runs
                    self.assertTrue(progress, "no progress notification")
                t0 = time.monotonic()
                v, _ = await c.ok("overview", snapshot=BIG)
                second = time.monotonic() - t0
                self.assertEqual(v["provenance"]["cache"], "hit")
                print(f"\n  cache: first {first:.2f} s, second {second * 1000:.1f} ms ({first / max(second, 1e-6):.0f}x)", file=sys.stderr)
                self.assertGreaterEqual(first, 5 * second)
                v, _ = await c.ok("event", snapshot=BIG, event=1000)
                self.assertEqual(v["provenance"]["cache"], "hit")

        run(go)

    def test_6_cancellation(self):
        async def go():
            async with Client() as c:
                await c.ok("overview", snapshot=BIG)
                # 650k x 650k rows, no index can help: runs to its 100 s limit unless cancelled
                slow = "SELECT COUNT(*) FROM traces a, traces b WHERE a.size + b.size = 12345"
                with anyio.move_on_after(1.5):
                    await c.session.call_tool("sql", {"snapshot": BIG, "sql": slow, "timeout_s": 100})
                    self.fail("the slow query answered")
                # the cancelled query let go of the file: the next question on it answers at once
                t0 = time.monotonic()
                v, _ = await c.ok("event", snapshot=BIG, event=5)
                self.assertLess(time.monotonic() - t0, 10)
                self.assertTrue(v["ok"])

        run(go)

    def test_8_current_revision(self):
        """The SDK's default client probes server/discover and talks revision 2026-07-28 (no initialize)."""
        from mcp import Client as SdkClient

        async def go():
            params = StdioServerParameters(command=BIN, args=["mcp", *SERVER_EXTRA], cwd=ROOT)
            async with SdkClient(params, mode="auto") as c:
                self.assertEqual(str(c.session.protocol_version), "2026-07-28")
                self.assertEqual(len((await c.list_tools()).tools), 12)
                r = await c.call_tool("overview", {"snapshot": REAL})
                self.assertFalse(r.is_error)
                self.assertEqual(strip(r.structured_content), cli_json("overview", REAL))
                r = await c.call_tool("overview", {"snapshot": "/etc/hostname"})
                self.assertTrue(r.is_error)

        run(go)

    def test_7_inspector(self):
        npx = shutil.which("npx")
        if not npx:
            self.skipTest("no npx")
        local = os.environ.get("MCP_INSPECTOR_DIR", "/tmp/inspector")
        # One pinned version: the same inspector on every machine.
        pinned = "@modelcontextprotocol/inspector@0.15.0"
        cmd = [npx, "--no-install", "@modelcontextprotocol/inspector"] if os.path.exists(os.path.join(local, "node_modules", "@modelcontextprotocol", "inspector")) else [npx, "-y", pinned]
        cwd = local if os.path.exists(local) else ROOT
        base = [*cmd, "--cli", BIN, "mcp", *SERVER_EXTRA]
        try:
            r = subprocess.run([*base, "--method", "tools/list"], capture_output=True, text=True, timeout=300, cwd=cwd)
        except subprocess.TimeoutExpired:
            self.skipTest("the inspector did not start in time")
        if r.returncode != 0 and ("ERR!" in r.stderr or "not found" in r.stderr):
            self.skipTest(f"the inspector is not installable here: {r.stderr[-300:]}")
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(len(json.loads(r.stdout)["tools"]), 12)
        r = subprocess.run([*base, "--method", "tools/call", "--tool-name", "overview", "--tool-arg", f"snapshot={REAL}"], capture_output=True, text=True, timeout=300, cwd=cwd)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        out = json.loads(r.stdout)
        self.assertEqual(strip(out["structuredContent"]), cli_json("overview", REAL))


if __name__ == "__main__":
    unittest.main(verbosity=2)
