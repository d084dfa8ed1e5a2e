#!/usr/bin/env python3
"""An agent-style session over MCP: the calls an agent makes to find an OOM's cause in a corpus
file, each answer's size and the total (the transcript in the closing note). Run it with the
python of `scripts/tool_venv.py mcp==2.3.0` (the SDK's virtualenv tests/mcp/test_mcp.py uses)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anyio  # noqa: E402
import test_mcp as t  # noqa: E402

FILE = t.REAL


async def main():
    total = 0
    async with t.Client() as c:
        async def ask(name, why, **args):
            nonlocal total
            r, size = await c.call(name, snapshot=FILE, **args)
            total += size
            shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
            print(f"\n>>> {name}({shown})    # {why}")
            print(f"<<< {size} bytes{' (error)' if r.is_error else ''}")
            text = r.content[0].text
            print("    " + "\n    ".join(text.strip().splitlines()[:12]))
            return r.structured_content

        ov = await ask("overview", "what is in the file")
        oom = await ask("analyze", "is there an OOM, and what kind", mode="oom")
        dev, o = next((d["device"], d["oom"]["ooms"][0]) for d in oom["devices"] if d["oom"]["ooms"])
        ev = o["event"]
        h = await ask("holders", "who holds the memory when it fails", device=dev, event=ev - 1, limit=5)
        await ask("holders", "the same by category", device=dev, event=ev - 1, by="category", limit=5)
        await ask("event", "the failing request itself", device=dev, event=ev)
        await ask("stack", "the whole stack of the largest holder", stack_id=h["rows"][0]["stack_id"], limit=40)
        await ask("simulate", "would expandable segments have avoided it", device=dev, alloc_conf="expandable_segments:True")
        await ask("analyze", "the allocator settings ranked", mode="tune", device=dev)
    print(f"\ntotal: {total} bytes over 8 calls")


anyio.run(main)
