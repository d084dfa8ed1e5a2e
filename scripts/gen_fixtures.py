#!/usr/bin/env python3
"""Write snapscope's small test snapshots and their expected figures.

usage: scripts/gen_fixtures.py [OUT_DIR]   (default: fixtures/; Python stdlib only)

Every fixture is produced by a tiny bookkeeping model (`Trace` below) in which each allocation
states its block size, so the expected counters and peaks are computed here, independently of
the engine. The dump (`segments`) is derived from the same bookkeeping, as PyTorch derives it
from the allocator. Output: one file per fixture plus `expected.json`.
"""
import copy
import gzip
import io
import json
import os
import pickle
import sys
import types

MIB = 1 << 20
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def r512(n, pad=0):
    n += pad
    return 512 if n < 512 else (n + 511) // 512 * 512


class Frames:
    """Shared frame dicts and stacks, as PyTorch's pickles share them."""

    def __init__(self):
        self.pool = {}

    def stack(self, *names):
        out = []
        for n in names:
            if n not in self.pool:
                self.pool[n] = {"filename": f"/work/train/{n}.py", "line": 10 + len(self.pool), "name": n}
            out.append(self.pool[n])
        return out


class Trace:
    """One device: segments, blocks and the trace, with counters after every event."""

    def __init__(self, device=0, time=True):
        self.device = device
        self.events = []
        self.segments = {}  # addr -> dict(size, stream, expandable, pool)
        self.live = {}  # addr -> dict(size, req, state, frames)
        self.alloc = self.active = self.reserved = self.requested = 0
        self.series = []
        self.t = 1_700_000_000_000_000 if time else None

    def _ev(self, action, addr, size, stream=0, frames=None, **extra):
        e = {"action": action, "addr": addr, "size": size, "stream": stream}
        if frames is not None:
            e["frames"] = frames
        if self.t is not None:
            self.t += 7
            e["time_us"] = self.t
        e.update(extra)
        self.events.append(e)
        self.series.append((self.alloc, self.active, self.reserved, self.requested))

    def segment_alloc(self, addr, size, pool="large", frames=None, pool_id=(0, 0)):
        self.segments[addr] = {"size": size, "pool": pool, "expandable": False, "pool_id": pool_id}
        self.reserved += size
        self._ev("segment_alloc", addr, size, frames=frames or [])

    def segment_free(self, addr):
        s = self.segments.pop(addr)
        self.reserved -= s["size"]
        self._ev("segment_free", addr, s["size"])

    def segment_map(self, addr, size, pool="large"):
        self.segments[addr] = {"size": size, "pool": pool, "expandable": True}
        self.reserved += size
        self._ev("segment_map", addr, size)

    def malloc(self, addr, req, block, frames=None):
        self.live[addr] = {"size": block, "req": req, "state": "active_allocated", "frames": frames or []}
        self.alloc += block
        self.active += block
        self.requested += req
        self._ev("alloc", addr, req, frames=frames or [])

    def free(self, addr, frames=None, complete=True):
        b = self.live[addr]
        fr = frames or []
        b["state"] = "active_pending_free"
        self.alloc -= b["size"]
        self._ev("free_requested", addr, b["req"], frames=fr)
        if complete:
            self.complete(addr, fr)

    def complete(self, addr, frames=None):
        b = self.live.pop(addr)
        self.active -= b["size"]
        self.requested -= b["req"]
        self._ev("free_completed", addr, b["req"], frames=frames or [])

    def oom(self, size, device_free):
        e = {"action": "oom", "device_free": device_free, "size": size, "stream": 0, "frames": []}
        self.events.append(e)
        self.series.append((self.alloc, self.active, self.reserved, self.requested))

    def marker(self):
        self._ev("snapshot", 0, self.active)

    def dump_segments(self):
        out = []
        for addr, s in sorted(self.segments.items()):
            blocks, cur, end = [], addr, addr + s["size"]
            for a in sorted(x for x in self.live if addr <= x < end):
                if a > cur:
                    blocks.append({"address": cur, "size": a - cur, "requested_size": 0, "state": "inactive", "frames": []})
                b = self.live[a]
                blocks.append({"address": a, "size": b["size"], "requested_size": b["req"], "state": b["state"], "frames": b["frames"]})
                cur = a + b["size"]
            if cur < end:
                blocks.append({"address": cur, "size": end - cur, "requested_size": 0, "state": "inactive", "frames": []})
            act = [b for b in blocks if b["state"] != "inactive"]
            out.append({
                "device": self.device, "address": addr, "total_size": s["size"],
                "allocated_size": sum(b["size"] for b in act if b["state"] == "active_allocated"),
                "active_size": sum(b["size"] for b in act),
                "requested_size": sum(b["requested_size"] for b in act),
                "stream": 0, "segment_type": s["pool"], "segment_pool_id": s.get("pool_id", (0, 0)),
                "is_expandable": s["expandable"], "frames": [], "blocks": blocks,
            })
        return out

    def expected(self, start=None, cut=0):
        """Expected overview figures over events[cut:], `start` = counters before events[cut]."""
        ser = self.series[cut:]
        if start is None:
            start = (0, 0, 0, 0)
        names = ["allocated", "active", "reserved", "requested"]
        peaks = {}
        for k, name in enumerate(names):
            best, ev = start[k], None
            for i, c in enumerate(ser):
                if c[k] > best:
                    best, ev = c[k], i
            peaks[name] = {"bytes": best, "event": ev}
        last = ser[-1] if ser else None
        return {
            "device": self.device,
            "events": len(ser),
            "peaks": peaks if ser else None,
            "at_last_event": dict(zip(names, last)) if last else None,
            "at_window_start": dict(zip(names, start)) if ser else None,
        }


def training_like(fr, pad=0, time=True, device=0):
    """Small-pool and large-pool traffic in three iterations; one tensor leaks per iteration."""
    t = Trace(device, time)
    base = 0x7F0000000000 + device * 0x100000000
    t.segment_alloc(base, 2 * MIB, "small", fr.stack("model", "main"))
    t.segment_alloc(base + 0x10000000, 20 * MIB, "large", fr.stack("model", "main"))
    weights = fr.stack("init_weights", "model", "main")
    t.malloc(base, 4000, r512(4000, pad), weights)
    for it in range(3):
        act = fr.stack("forward", "layer", "train_step", "main")
        grad = fr.stack("backward", "train_step", "main")
        a1 = base + 0x10000000
        a2 = a1 + 3 * MIB
        leak = base + 4096 + it * 1024
        t.malloc(a1, 3 * MIB - 100 - pad, 3 * MIB, act)
        t.malloc(a2, 5 * MIB, r512(5 * MIB, pad), act)
        t.malloc(leak, 700, r512(700, pad), grad)
        t.free(a2, grad)
        t.free(a1, grad)
    return t


def frame(path, line, name):
    return {"filename": path, "line": line, "name": name}


TORCH = "/usr/lib/python3/site-packages/torch"


def semantics_training(steps=4, params=3, leak=2 * MIB):
    """A training loop shaped like PyTorch's: model moved to the device, then `steps` steps in
    ProfilerStep#N ranges (data, zero_grad, forward, backward on autograd's thread without
    Python frames, Adam step). Every allocation carries the category the default rules must
    give it; one tensor per step is kept (`keep_history`) so memory grows by `leak` per step.
    Returns the trace, its annotations and the expected answers."""
    t = Trace(0)
    main = frame("/work/train/train.py", 40, "main")
    to = [frame(f"{TORCH}/nn/modules/module.py", 1340, "convert"), frame(f"{TORCH}/nn/modules/module.py", 900, "_apply"), frame(f"{TORCH}/nn/modules/module.py", 1355, "to"), main]
    data = [frame(f"{TORCH}/utils/data/dataloader.py", 630, "__next__"), main]
    zero = [frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), main]
    fwd = [frame("/work/train/model.py", 12, "forward"), frame(f"{TORCH}/nn/modules/module.py", 1750, "_call_impl"), main]
    keep = [frame("/work/train/train.py", 55, "keep_history"), main]
    seed = [frame(f"{TORCH}/autograd/__init__.py", 347, "backward"), frame(f"{TORCH}/_tensor.py", 581, "backward"), main]
    fx_frame = dict(frame("/tmp/torchinductor_user/ab/cabc123.py", 88, "call"), fx_node_op="call_function", fx_node_name="mm_default", fx_node_target="aten.mm.default", fx_original_trace="/work/train/model.py:12 forward")
    adam = [frame(f"{TORCH}/optim/adam.py", 400, "_single_tensor_adam"), frame(f"{TORCH}/optim/adam.py", 240, "step"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"), main]
    tags = {}  # addr -> category of the live block
    by_event = []  # category -> bytes after each event
    places = {}  # what -> address of its own segment, made on first use as the allocator would

    def note():
        sums = {}
        for a, b in t.live.items():
            sums[tags[a]] = sums.get(tags[a], 0) + b["size"]
        by_event.append(sums)

    def place(what, size):
        if what not in places:
            small = size <= MIB
            seg = 2 * MIB if small else 20 * MIB
            addr = 0x7F0000000000 + len(places) * 32 * MIB
            t.segment_alloc(addr, seg, "small" if small else "large")
            note()
            places[what] = addr
        return places[what]

    def malloc(what, size, frames, tag, **extra):
        addr = place(what, size)
        tags[addr] = tag
        t.malloc(addr, size, size, frames)
        t.events[-1].update(extra)
        note()
        return addr

    def free(addr, frames=None):
        t.free(addr, frames, complete=False)
        note()  # free_requested: still active (pending)
        t.complete(addr, frames)
        note()

    for i in range(params):
        malloc(("param", i), 4 * MIB, to, "parameter")
    grads = []
    annotations = []
    for step in range(1, steps + 1):
        annotations.append({"name": f"ProfilerStep#{step}", "stage": "START", "device": 0, "time_us": t.t + 1})
        batch = malloc("batch", 6 * MIB, data, "input/data")
        for g in grads:
            free(g, zero)
        ctx = {"compile_context": "0/0"} if step == steps else {}
        # The compiled step runs generated code: its frames carry the FX node (augment_with_fx_traces).
        stack = [fx_frame] + fwd if ctx else fwd
        acts = [malloc(("act", i), 10 * MIB, stack, "activation", **ctx) for i in range(3)]
        free(malloc("tmp", 2 * MIB, fwd, "temporary", **ctx), fwd)
        # Kept by the loop (a history of outputs), made between the forward pass and backward:
        # nothing in its frames says what it is, but that code is the pass's loss part (forward),
        # so it is an output of the forward pass, kept (activation) until three optimizer steps
        # have ended with it alive: then the program holds it, as nothing that a backward pass
        # saved is (unknown); the leak finding names it.
        held = steps - step + 1 >= 3
        malloc(("kept", step), leak, keep, "unknown" if held else "activation", user_metadata="history")
        s0 = malloc("seed", 512, seed, "autograd temporary")
        grads = [malloc(("grad", i), 4 * MIB, [], "gradient", forward_frames=["/work/train/model.py:12:forward\n"]) for i in range(params)]
        for a in reversed(acts):
            free(a)
        free(malloc("work", 3 * MIB, [], "autograd temporary"))
        free(s0)
        if step == 1:
            for i in range(params):
                malloc(("state", i), 8 * MIB, adam, "optimizer state")
        free(malloc("update", 4 * MIB, adam, "temporary"), adam)
        free(batch, [main])
        annotations.append({"name": f"ProfilerStep#{step}", "stage": "END", "device": 0, "time_us": t.t + 1})
    annotations.append({"name": "## dynamo internal ##", "stage": "START", "device": 0, "time_us": annotations[-2]["time_us"] + 2})
    annotations.append({"name": "## dynamo internal ##", "stage": "END", "device": 0, "time_us": annotations[-2]["time_us"] - 1})
    assert len(by_event) == len(t.events)
    peak = max(range(len(t.series)), key=lambda i: (t.series[i][0], -i))
    ends = []
    k = 0
    for step in range(1, steps + 1):
        # The last event of the step is the batch's free_completed before its END annotation.
        end_t = [a["time_us"] for a in annotations if a["name"] == f"ProfilerStep#{step}" and a["stage"] == "END"][0]
        last = max(i for i, e in enumerate(t.events) if e["time_us"] < end_t)
        ends.append(t.series[last][0])
    expected = {
        "peak_allocated_event": peak,
        "categories_at_peak": {c: b for c, b in by_event[peak].items() if b},
        "active_at_peak": t.series[peak][1],
        "steps": steps,
        "step_end_allocated": ends,
        "growth_per_step": ends[-1] - ends[-2],
        "by_event": by_event,
    }
    return t, annotations, expected


class Program:
    """A program's allocations with the category each one is, from the program's own
    bookkeeping: every block in a segment of its own, the categories summed after every event."""

    def __init__(self):
        self.t = Trace(0)
        self.tags = {}
        self.by_event = []
        self.places = {}
        self.lives = []  # [tag, size, alloc event, free-completed event or None], in order
        self.open = {}  # addr -> index into lives

    def note(self):
        sums = {}
        for a, b in self.t.live.items():
            sums[self.tags[a]] = sums.get(self.tags[a], 0) + b["size"]
        self.by_event.append(sums)

    def malloc(self, what, size, frames, tag):
        if what not in self.places:
            small = size <= MIB
            addr = 0x7F0000000000 + len(self.places) * 32 * MIB
            self.t.segment_alloc(addr, 2 * MIB if small else max(20 * MIB, size), "small" if small else "large")
            self.note()
            self.places[what] = addr
        addr = self.places[what]
        self.tags[addr] = tag
        self.t.malloc(addr, size, size, frames)
        self.note()
        self.open[addr] = len(self.lives)
        self.lives.append([tag, size, len(self.t.series) - 1, None])
        return addr

    def free(self, addr, frames=None):
        self.t.free(addr, frames)
        self.note()
        self.note()
        self.lives[self.open.pop(addr)][3] = len(self.t.series) - 1

    def moments(self, a, b):
        """Kept, freed, born and transient bytes by category between events a and b (a < b):
        live after an event = allocated at or before it and not freed by it."""
        out = {}
        for tag, size, born, freed in self.lives:
            at_a = born <= a and (freed is None or freed > a)
            at_b = born <= b and (freed is None or freed > b)
            if born > b or (freed is not None and freed <= a):
                continue
            kind = "kept" if at_a and at_b else "freed" if at_a else "born" if at_b else "transient"
            row = out.setdefault(tag, {"kept": 0, "freed": 0, "born": 0, "transient": 0})
            row[kind] += size
        return {"a": a, "b": b, "by_category": out}

    def expected(self, kind, training_steps, leak, cut=0):
        """What the engine must answer; `cut`: the events the recording missed (it started late)."""
        ser = self.t.series[cut:]
        peak = max(range(len(ser)), key=lambda i: (ser[i][0], -i))
        start = self.t.series[cut - 1] if cut else None
        return {
            "format": "dict", "consistent": True, "devices": [self.t.expected(start=start, cut=cut)],
            "program": {"kind": kind, "training_steps": training_steps, "leak": leak,
                        "peak_allocated_event": peak, "categories_at_peak": {c: b for c, b in self.by_event[cut + peak].items() if b}},
        }


def program_fixtures():
    """One small program per kind the engine must tell apart, each allocation tagged with what
    it is: a forward pass through repeating layers (no steps), a model build, one training step,
    training steps with and without a kept tensor per step (and one running out of memory from
    it), steps whose zero_grad runs after the
    forward pass (the previous gradients held at its peak), an optimizer built inside the window
    by the program's own optimizer class, and a forward pass whose frees came after recording
    stopped; generation with a KV cache grown by copying (per layer, and as a tuple) beside a
    U-Net's inference, whose outputs also grow at one line but start small at every pass;
    training with activation checkpointing (a forward pass recomputed inside backward);
    training under DistributedDataParallel (its gradient buckets made in its constructor);
    training through a custom autograd Function whose backward has no frame of loss.backward();
    a language model's loss computed in the script, where its peak is; PyTorch Lightning's
    closure (forward and backward inside the optimizer's step), recorded from the second step,
    and with SGD's momentum, whose steps but the first leave no event;
    an inference server that keeps every request's output; a float32 model's inference under
    autocast, whose weight casts autocast keeps until the region ends; a hand-written
    optimizer whose state, as large as the parameters, nothing names; a GAN whose two
    optimizers take turns, keeping a tensor per iteration; SGD with momentum, whose later steps
    leave no event; and, with whole Python stacks, a
    gradient hook on autograd's thread, an optimizer stepped from one (fused into backward), a
    pipeline stage whose backward passes start from a received gradient and whose later steps
    leave no event, FSDP (its forward wrapping the model's, its hooks in
    backward), and Hugging Face's Trainer over DeepSpeed ZeRO-2 (one line runs every pass)."""
    main = frame("/work/prog/run.py", 30, "main")
    build = [frame(f"{TORCH}/nn/modules/linear.py", 106, "__init__"), frame("/work/prog/model.py", 8, "__init__"), main]
    move = [frame(f"{TORCH}/nn/modules/module.py", 1340, "convert"), frame(f"{TORCH}/nn/modules/module.py", 900, "_apply"), frame(f"{TORCH}/nn/modules/module.py", 1355, "to"), main]
    call = frame(f"{TORCH}/nn/modules/module.py", 1750, "_call_impl")
    layer = [frame("/work/prog/model.py", 20, "forward"), call, frame("/work/prog/model.py", 40, "forward"), call, main]
    top = [frame("/work/prog/model.py", 44, "forward"), call, main]
    seed = [frame(f"{TORCH}/autograd/__init__.py", 347, "backward"), frame(f"{TORCH}/_tensor.py", 581, "backward"), main]
    adam = [frame(f"{TORCH}/optim/adam.py", 400, "_init_group"), frame(f"{TORCH}/optim/adam.py", 240, "step"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"), main]
    zero = [frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), main]
    own_init = [frame("/work/prog/optimizer.py", 27, "__init__"), main]
    own_step = [frame("/work/prog/optimizer.py", 50, "step"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"), main]
    params, layers = 3, 6

    def model(p, moved=False):
        out = [p.malloc(("param", i), 4 * MIB, build, "parameter") for i in range(params)]
        if moved:  # .to(device): each parameter's device copy
            out += [p.malloc(("moved", i), 2 * MIB, move, "parameter") for i in range(params)]
        return out

    def forward(p, keep_output=False, stack=layer):
        acts = []
        for k in range(layers):  # the same pattern in every layer: one kept, one temporary
            acts.append(p.malloc(("act", k), 3 * MIB, stack, "activation"))
            p.free(p.malloc("tmp", 1 * MIB, stack, "temporary"), stack)
        if keep_output:
            p.malloc("out", 2 * MIB, top, "activation")
        return acts

    def set_to_none(p, grads, frames=zero):
        """The gradients let go of (zero_grad(set_to_none=True) or the script's own)."""
        for g in grads:
            p.free(g, frames)

    def backward_pass(p, acts, seed_stack=seed):
        """loss.backward(): its seed, the gradients (made on autograd's thread: no frames), the
        saved activations freed; returns the gradients."""
        s = p.malloc("seed", 512, seed_stack, "autograd temporary")
        grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
        for a in reversed(acts):
            p.free(a)
        p.free(s)
        return grads

    def adam_step(p, state, init, update=None, count=params, state_bytes=8 * MIB, update_bytes=4 * MIB):
        """Adam's step: its state made in the first step (at `init`), a temporary every step."""
        if not state:
            state += [p.malloc(("state", i), state_bytes, init, "optimizer state") for i in range(count)]
        update = update or init
        p.free(p.malloc("update", update_bytes, update, "temporary"), update)

    def step(p, n, grads, state, own=False, kept=None, late_zero_grad=False, stack=layer, steps=0):
        """Step `n` of `steps`: a tensor it keeps (`kept`) is the program's (unknown) where three
        optimizer steps or more end while it lives, an output of the forward pass otherwise."""
        if not late_zero_grad:
            set_to_none(p, grads)
        acts = forward(p, stack=stack)
        if late_zero_grad:
            # The loss's logits make the forward pass the peak; zero_grad runs only after it.
            p.free(p.malloc("logits", 16 * MIB, top, "activation"), [main])
            set_to_none(p, grads)
        if kept is not None:
            kept.append(p.malloc(("kept", n), MIB + 512, top, "unknown" if steps - n + 1 >= 3 else "activation"))
        grads = backward_pass(p, acts)
        if not state and not own:
            state += [p.malloc(("state", i), 8 * MIB, adam, "optimizer state") for i in range(params)]
        p.free(p.malloc("update", 4 * MIB, own_step if own else adam, "temporary"), own_step if own else adam)
        return grads

    out = []
    p = Program()
    model(p)
    p.malloc("batch", 2 * MIB, [frame("/work/prog/run.py", 12, "get_batch"), main], "input/data")
    forward(p, keep_output=True)
    out.append(("program_forward_layers.pickle", p, p.expected("forward", 0, False)))

    p = Program()
    model(p, moved=True)
    out.append(("program_model_build.pickle", p, p.expected("model_build", 0, False)))

    # Recording stops after the forward pass; the program then frees its activations and dumps:
    # the trace has their allocations, never their frees, and the dump no longer has them.
    p = Program()
    model(p)
    acts = forward(p, keep_output=True)
    exp = p.expected("forward", 0, False)
    exp["consistent"] = False  # six ALLOC_UNMATCHED issues, one per activation
    recorded = len(p.t.events)
    for a in acts:
        p.t.free(a)
    p.t.events = p.t.events[:recorded]
    out.append(("program_recording_stopped.pickle", p, exp))

    p = Program()
    model(p)
    step(p, 1, [], [])
    out.append(("program_one_step.pickle", p, p.expected("one_training_step", 1, False)))

    for name, leak, steps in (("program_steps_leak.pickle", True, 5), ("program_steps_stable.pickle", False, 5), ("program_steps_many.pickle", False, 50)):
        p = Program()
        model(p)
        grads, state, kept = [], [], [] if leak else None
        for n in range(1, steps + 1):
            grads = step(p, n, grads, state, kept=kept, steps=steps)
        exp = p.expected("training_steps", steps, leak)
        if leak:
            # What each step keeps; the last step's end also holds its gradients (zero_grad at
            # the top of the next iteration frees the others'), which a mean would count.
            exp["program"]["growth_per_step"] = MIB + 512
        # Pairs of moments: a third of the way in and the allocated peak; the peak and the end.
        peak, last = exp["program"]["peak_allocated_event"], len(p.t.series) - 1
        exp["program"]["moments"] = [p.moments(len(p.t.series) // 3, peak), p.moments(peak, last)]
        out.append((name, p, exp))

    # A notebook's training cell run three times: each run builds a new model (set-up in the
    # step its first pass opens) and trains it three steps with a new Adam, while the old model
    # is still referenced (IPython's Out[...]): its parameters and the gradients its last step
    # left stay (its Adam state goes with the optimizer). Nine steps.
    cell = frame("/tmp/ipykernel_4242/2417006535.py", 12, "<module>")
    nb_build = [frame(f"{TORCH}/nn/modules/linear.py", 106, "__init__"), frame("/work/prog/model.py", 8, "__init__"), cell]
    nb_layer = [frame("/work/prog/model.py", 20, "forward"), call, frame("/tmp/ipykernel_4242/2417006535.py", 20, "<module>")]
    nb_seed = [frame(f"{TORCH}/autograd/__init__.py", 347, "backward"), frame(f"{TORCH}/_tensor.py", 581, "backward"), frame("/tmp/ipykernel_4242/2417006535.py", 22, "<module>")]
    nb_adam = [*adam[:-1], frame("/tmp/ipykernel_4242/2417006535.py", 23, "<module>")]
    nb_zero = [frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), frame("/tmp/ipykernel_4242/2417006535.py", 18, "<module>")]
    p = Program()
    old_state = []
    for run in range(3):
        [p.malloc(("param", run, i), 4 * MIB, nb_build, "parameter") for i in range(params)]
        for b_ in old_state:  # the old optimizer, rebound, lets its state go
            p.free(b_, nb_adam)
        grads, old_state = [], []
        for n in range(3):
            set_to_none(p, grads, nb_zero)
            acts = [p.malloc(("act", k), 3 * MIB, nb_layer, "activation") for k in range(layers)]
            s_ = p.malloc("seed", 512, nb_seed, "autograd temporary")
            grads = [p.malloc(("grad", run, i), 4 * MIB, [], "gradient") for i in range(params)]
            for a_ in reversed(acts):
                p.free(a_)
            p.free(s_)
            if not old_state:
                old_state = [p.malloc(("state", run, i), 4 * MIB, nb_adam, "optimizer state") for i in range(2 * params)]
            p.free(p.malloc("update", 4 * MIB, nb_adam, "temporary"), nb_adam)
    exp = p.expected("training_steps", 9, True)
    exp["program"]["growth_verdict"] = "growing"
    # Kept by the end of step 9 from the compared steps (2-9): run one's last gradients (step
    # 3) and run two's (step 6). The old models' parameters are set-up blocks, left out of what
    # is kept: a site that builds again may be a model growing by design (a layer or a task
    # head added, all kept), which looks the same to the allocator.
    exp["program"]["kept_bytes"] = 24 * MIB
    exp["program"]["leak_site"] = False
    exp["program"]["passes_kept"] = False
    out.append(("program_notebook_cell_rerun.pickle", p, exp))

    # The same leak until it runs out: five steps, each keeping a tensor, then an OOM in the
    # sixth step's forward pass. The OOM is where the growth ends (its verdict, before what the
    # cache looked like at it).
    p = Program()
    model(p)
    grads, state, kept = [], [], []
    for n in range(1, 6):
        grads = step(p, n, grads, state, kept=kept, steps=5)
    set_to_none(p, grads)
    forward(p)
    p.t.oom(64 * MIB, device_free=2 * MIB)
    p.note()
    exp = p.expected("training_steps", 5, True)
    exp["program"]["growth_per_step"] = MIB + 512
    exp["program"]["oom_verdict"] = "growth"
    out.append(("program_steps_leak_until_oom.pickle", p, exp))

    p = Program()
    model(p)
    grads, state = [], []
    for n in range(1, 4):
        grads = step(p, n, grads, state, late_zero_grad=True)
    exp = p.expected("training_steps", 3, False)
    exp["program"]["held_gradient_bytes"] = params * 4 * MIB  # the step before's grads at the peak
    out.append(("program_late_zero_grad.pickle", p, exp))

    # Generation: each layer's KV cache re-made one token longer every step (torch.cat), the old
    # copy freed once the new one exists; a temporary of the same line between. 12 tokens.
    attn = [frame("/work/prog/model.py", 60, "forward"), call, frame("/work/prog/model.py", 40, "forward"), call, frame("/work/prog/generate.py", 15, "generate"), main]
    p = Program()
    model(p)
    cache = {}
    for token in range(12):
        for k in range(layers):
            new = p.malloc(("kv", k, token), (token + 1) * 256 * 1024, attn, "cache")
            if k in cache:
                p.free(cache[k], attn)
            cache[k] = new
            p.free(p.malloc("tmp", MIB, attn, "temporary"), attn)
    out.append(("program_generate_kv_cache.pickle", p, p.expected("forward", 0, False)))

    # Hugging Face's DynamicCache: the prompt's pass keeps each layer's keys as the projection
    # made them (no copy), and from the next token on the cache copies them one token longer
    # (torch.cat in cache_utils.py), the first copy letting the projection's block go. The peak
    # is the prompt's pass, its keys alive: cache, not the pass's outputs. Six tokens after it.
    proj = [frame(f"{TORCH}/nn/modules/linear.py", 125, "forward"), call, frame("/work/prog/model.py", 58, "forward"), call,
            frame("/work/prog/model.py", 40, "forward"), call, frame("/work/prog/generate.py", 15, "generate"), main]
    update = [frame("/x/site-packages/transformers/cache_utils.py", 449, "update"), frame("/work/prog/model.py", 60, "forward"), call,
              frame("/work/prog/model.py", 40, "forward"), call, frame("/work/prog/generate.py", 15, "generate"), main]
    p = Program()
    model(p)
    cache = {}
    for k in range(layers):
        cache[k] = p.malloc(("prompt-k", k), 2 * MIB, proj, "cache")
        p.free(p.malloc(("prompt-tmp", k), 6 * MIB, attn, "temporary"), attn)
    for token in range(1, 7):
        for k in range(layers):
            new = p.malloc(("kvd", k, token), 2 * MIB + token * 64 * 1024, update, "cache")
            p.free(cache[k], update)
            cache[k] = new
            p.free(p.malloc("tmp", 256 * 1024, attn, "temporary"), attn)
    out.append(("program_generate_dynamic_cache.pickle", p, p.expected("forward", 0, False)))

    # The same with the cache as a tuple: every layer's longer copy made in the pass, the old
    # tuple dropped after it (by the caller). 16 tokens.
    p = Program()
    model(p)
    old = []
    for token in range(16):
        new = [p.malloc(("kvt", k, token), (token + 1) * 128 * 1024, attn, "cache") for k in range(layers)]
        for o in old:
            p.free(o, [main])
        old = new
    out.append(("program_generate_kv_tuple.pickle", p, p.expected("forward", 0, False)))

    # Not a cache: a sweep over batch sizes (`out = model(x)` for 1 to 10 samples), each pass's
    # output kept until the next one's exists. The output site makes a larger block before the
    # one before goes, ten times, but each pass's temporaries grow with it: passes that each do
    # more, outputs of a forward pass.
    head = [frame("/work/prog/model.py", 90, "forward"), call, frame("/work/prog/sweep.py", 12, "main"), main]
    p = Program()
    model(p)
    out_block = None
    for bs in range(1, 11):
        for k in range(layers):
            p.free(p.malloc(("sweep-tmp", k), bs * 2 * MIB, attn, "temporary"), attn)
        new = p.malloc(("sweep-out", bs), bs * 512 * 1024, head, "activation")
        if out_block is not None:
            p.free(out_block, [main])
        out_block = new
    out.append(("program_batch_sweep.pickle", p, p.expected("forward", 0, False)))

    # Not a cache: a U-Net's decoder outputs grow level by level at one line, each freed by the
    # next level, and start small again at every pass (10 denoising passes).
    unet = [frame("/work/prog/unet.py", 33, "forward"), call, frame("/work/prog/unet.py", 80, "forward"), call, main]
    p = Program()
    model(p)
    for _ in range(10):
        prev = None
        for level in range(5):
            cur = p.malloc(("up", level), (1 << level) * MIB, unet, "temporary")
            if prev is not None:
                p.free(prev, unet)
            prev = cur
        p.free(prev, unet)
    out.append(("program_unet_inference.pickle", p, p.expected("forward", 0, False)))

    # Activation checkpointing (use_reentrant=False): the forward pass keeps each layer's input
    # only; backward recomputes the layer under the autograd node's unpack hook (forward frames
    # on top of checkpoint.py's), uses the activations and frees them. Four steps.
    checkpointed = [frame(f"{TORCH}/utils/checkpoint.py", 495, "checkpoint"), frame("/work/prog/model.py", 40, "forward"), call, main]
    recompute = [frame("/work/prog/model.py", 20, "forward"), call, frame(f"{TORCH}/utils/checkpoint.py", 1590, "recompute_fn"), frame(f"{TORCH}/utils/checkpoint.py", 1160, "unpack_hook")]
    p = Program()
    model(p)
    grads, state = [], []
    for _ in range(4):
        set_to_none(p, grads)
        kept = [p.malloc(("input", k), MIB, checkpointed, "activation") for k in range(layers)]
        s = p.malloc("seed", 512, seed, "autograd temporary")
        grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
        for k in reversed(range(layers)):
            p.free(p.malloc(("recomputed", k), 3 * MIB, recompute, "autograd temporary"), recompute)
            p.free(kept[k])
        p.free(s)
        adam_step(p, state, adam)
    out.append(("program_checkpointing.pickle", p, p.expected("training_steps", 4, False)))

    # DistributedDataParallel: its reducer's gradient buckets (one copy of every gradient) are
    # allocated in DDP's constructor, and its forward wraps the model's. Four steps.
    ddp = f"{TORCH}/nn/parallel/distributed.py"
    ddp_init = [frame(ddp, 1180, "_ddp_init_helper"), frame(ddp, 880, "__init__"), main]
    ddp_layer = layer[:-1] + [frame(ddp, 1450, "_run_ddp_forward"), frame(ddp, 1620, "forward"), call, main]
    p = Program()
    model(p)
    for i in range(2):
        p.malloc(("bucket", i), params * 2 * MIB, ddp_init, "communication")
    grads, state = [], []
    for n in range(1, 5):
        grads = step(p, n, grads, state, stack=ddp_layer)
    out.append(("program_ddp.pickle", p, p.expected("training_steps", 4, False)))

    # A fused kernel as a custom autograd.Function in every layer, recorded with Python stacks
    # only: its forward under Function.apply, its backward on autograd's own thread (no frame of
    # loss.backward() there) through BackwardCFunction.apply. Plain SGD written in the script (an
    # in-place update allocates nothing; the gradients set to None by the script). Five steps.
    function = f"{TORCH}/autograd/function.py"
    fused = "/work/prog/fused_attention.py"
    fused_fwd = [frame(fused, 40, "_attention_forward"), frame(fused, 80, "forward"), frame(function, 575, "apply")] + layer
    fused_bwd = [frame(fused, 60, "_attention_backward"), frame(fused, 95, "backward"), frame(function, 310, "wrapper"), frame(function, 307, "apply")]
    p = Program()
    model(p)
    grads = []
    for _ in range(5):
        for g in grads:
            p.free(g, [main])
        acts = []
        for k in range(layers):
            acts.append(p.malloc(("act", k), 3 * MIB, fused_fwd, "activation"))
            p.free(p.malloc("tmp", MIB, layer, "temporary"), layer)
        s = p.malloc("seed", 512, seed, "autograd temporary")
        grads = []
        for k, a in enumerate(reversed(acts)):
            d = p.malloc(("d_input", k), 3 * MIB, fused_bwd, "autograd temporary")
            if k < params:
                grads.append(p.malloc(("grad", k), 4 * MIB, [], "gradient"))
            p.free(a)
            p.free(d)
        p.free(s)
    exp = p.expected("training_steps", 5, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_custom_function.pickle", p, exp))

    # A language model's loss computed in the script, between its forward pass and backward:
    # the logits (the model's head), their float copy (freed once log_softmax has its output)
    # and log_softmax's output, saved for backward; the peak is there. Four Adam steps.
    head = [frame("/work/prog/model.py", 90, "forward"), call, main]
    loss_line = [frame("/work/prog/run.py", 88, "train_step"), main]
    p = Program()
    model(p)
    grads, state = [], []
    for _ in range(4):
        set_to_none(p, grads)
        acts = forward(p)
        logits = p.malloc("logits", 8 * MIB, head, "activation")
        upcast = p.malloc("upcast", 16 * MIB, loss_line, "temporary")
        log_probs = p.malloc("log_probs", 16 * MIB, loss_line, "activation")
        p.free(upcast, loss_line)
        loss = p.malloc("loss", 512, loss_line, "activation")
        s = p.malloc("seed", 512, seed, "autograd temporary")
        p.free(log_probs)
        p.free(logits)
        grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
        for a in reversed(acts):
            p.free(a)
        p.free(s)
        p.free(loss, loss_line)
        adam_step(p, state, adam)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "forward"
    out.append(("program_loss_in_script.pickle", p, exp))

    # PyTorch Lightning's automatic optimization: optimizer.step(closure) runs the closure's
    # forward and backward passes inside Adam's step, and zero_grad inside the closure, between
    # training_step and backward (as Lightning's closure does). The
    # recording started after the first step, so Adam's state is older than the window, with its
    # stack in the dump. Four steps, three in the window.
    lit = "/site-packages/lightning/pytorch"
    in_step = [frame(f"{TORCH}/optim/adam.py", 210, "step"), frame(f"{TORCH}/optim/optimizer.py", 79, "_use_grad"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"),
               frame(f"{lit}/core/optimizer.py", 154, "step"), frame(f"{lit}/plugins/precision/precision.py", 123, "optimizer_step"), frame(f"{lit}/loops/optimization/automatic.py", 270, "_optimizer_step"), main]
    closure = [frame(f"{lit}/loops/optimization/automatic.py", 146, "closure"), frame(f"{lit}/plugins/precision/precision.py", 108, "_wrap_closure")] + in_step
    lit_layer = layer[:-1] + [frame("/work/prog/lit_module.py", 30, "training_step"), frame(f"{lit}/strategies/strategy.py", 390, "training_step")] + closure
    lit_seed = seed[:-1] + [frame(f"{lit}/core/module.py", 1100, "backward")] + closure
    lit_zero = [frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), frame(f"{lit}/loops/optimization/automatic.py", 160, "zero_grad_fn")] + closure
    lit_init = [frame(f"{TORCH}/optim/adam.py", 400, "_init_group")] + in_step
    lit_update = [frame(f"{TORCH}/optim/adam.py", 300, "_single_tensor_adam")] + in_step
    p = Program()
    model(p)
    grads, state, cut = [], [], 0
    for n in range(4):
        if n == 1:
            cut = len(p.t.events)
        acts = forward(p, stack=lit_layer)
        set_to_none(p, grads, lit_zero)
        grads = backward_pass(p, acts, lit_seed)
        adam_step(p, state, lit_init, update=lit_update)
    exp = p.expected("training_steps", 3, False, cut=cut)
    exp["program"]["peak_phase"] = "forward"
    # Lightning's closure zeroes the gradients after training_step: the step before's are held
    # through the forward pass, at its peak.
    exp["program"]["held_gradient_bytes"] = params * 4 * MIB
    p.t.events = p.t.events[cut:]
    out.append(("program_lightning.pickle", p, exp))

    # The same with SGD's momentum instead of Adam, recorded from the start: the first step makes
    # the momentum buffers and the later ones leave no event, so only zero_grad, inside the
    # closure between forward and backward, is seen of the optimizer. Four steps.
    sgd_step = [frame(f"{TORCH}/optim/sgd.py", 420, "_multi_tensor_sgd"), frame(f"{TORCH}/optim/sgd.py", 120, "step")] + in_step[1:]
    p = Program()
    model(p)
    grads = []
    for n in range(4):
        acts = forward(p, stack=lit_layer)
        set_to_none(p, grads, lit_zero)
        grads = backward_pass(p, acts, lit_seed)
        if n == 0:
            [p.malloc(("momentum", i), 4 * MIB, sgd_step, "optimizer state") for i in range(params)]
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "forward"
    exp["program"]["held_gradient_bytes"] = params * 4 * MIB  # zero_grad after the forward, as above
    out.append(("program_lightning_sgd.pickle", p, exp))

    # Lightning with the loss computed in training_step itself (F.cross_entropy on the logits,
    # no module's forward frame): inside the closure, so the forward pass's, and an activation
    # saved for backward, not optimizer state; the first step is a whole one. Four steps.
    lit_loss = [frame(f"{TORCH}/nn/functional.py", 3494, "cross_entropy"), frame("/work/prog/lit_module.py", 34, "training_step"),
                frame(f"{lit}/strategies/strategy.py", 390, "training_step")] + closure
    p = Program()
    model(p)
    grads, state = [], []
    for n in range(4):
        acts = forward(p, stack=lit_layer) + [p.malloc(("loss", n), 8 * MIB, lit_loss, "activation")]
        set_to_none(p, grads, lit_zero)
        grads = backward_pass(p, acts, lit_seed)
        adam_step(p, state, lit_init, update=lit_update)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_lightning_loss_in_step.pickle", p, exp))

    # torch.compile's CUDA graph trees record the backward graph in the first step and keep a
    # static copy of its input (the logits' gradient) for the replays: made in backward and
    # kept, yet no parameter's gradient: cache. Four steps.
    r_static = [frame(f"{TORCH}/_inductor/cudagraph_trees.py", 1130, "_allocate_and_copy_recording_inputs"),
                frame(f"{TORCH}/_inductor/cudagraph_trees.py", 690, "record"), frame(f"{TORCH}/_inductor/cudagraph_trees.py", 2040, "run")]
    p = Program()
    model(p)
    grads, state = [], []
    for n in range(4):
        set_to_none(p, grads)
        acts = forward(p)
        if n == 0:
            p.malloc("static-input", 6 * MIB, r_static, "cache")
        grads = backward_pass(p, acts)
        adam_step(p, state, adam)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_cudagraph_static_input.pickle", p, exp))

    # An inference server that keeps every request's output on the GPU: each request's input is
    # made by the server, then a forward pass whose activations are freed layer by layer, and its
    # 1 MiB output kept in a list. Eight requests.
    request = [frame("/work/prog/server.py", 31, "prepare_inputs"), frame("/work/prog/server.py", 60, "handle_request"), main]
    p = Program()
    model(p)
    for r in range(8):
        x = p.malloc("input", 512 * 1024, request, "input/data")
        held = None
        for k in range(layers):
            a = p.malloc(("act", k), 3 * MIB, layer, "temporary")
            if held is not None:
                p.free(held, layer)
            held = a
        p.malloc(("output", r), MIB, top, "activation")
        p.free(held, layer)
        p.free(x, request)
    exp = p.expected("forward", 0, False)
    exp["program"]["kept_per_pass"] = {"passes": 8, "blocks": 8, "bytes": 8 * MIB}
    out.append(("program_serve_kept.pickle", p, exp))

    # Inference of a float32 model under torch.autocast: each linear layer's weight is cast to
    # half precision at its first use and kept in autocast's cache until the region ends, where
    # __exit__ frees the casts. Four passes.
    linear = [frame(f"{TORCH}/nn/modules/linear.py", 125, "forward"), call] + layer
    autocast_exit = [frame(f"{TORCH}/amp/autocast_mode.py", 400, "__exit__"), main]
    p = Program()
    model(p)
    for _ in range(4):
        casts, held = [], None
        for k in range(layers):
            if k < params:
                casts.append(p.malloc(("cast", k), 2 * MIB, linear, "cache"))
            a = p.malloc(("act", k), MIB, linear, "temporary")
            if held is not None:
                p.free(held, layer)
            held = a
        p.free(held, layer)
        for c in casts:
            p.free(c, autocast_exit)
    out.append(("program_autocast_inference.pickle", p, p.expected("forward", 0, False)))

    # A hand-written optimizer (no torch.optim class under it) that makes two state tensors per
    # parameter, as large as the parameter, in its first step(); the script sets the gradients
    # to None. Nothing in the frames says optimizer, so the honest answer is unknown: never the
    # parameters whose size the state shares (each parameter has one gradient at a time, over
    # all five steps). Five steps, found by their backward passes.
    own_lazy = [frame("/work/prog/my_adamw.py", 40, "step"), main]
    p = Program()
    model(p)
    grads, state = [], []
    for _ in range(5):
        for g in grads:
            p.free(g, [main])
        grads = backward_pass(p, forward(p))
        if not state:
            state += [p.malloc(("lazy-state", i), 4 * MIB, own_lazy, "unknown") for i in range(2 * params)]
    out.append(("program_own_lazy_optimizer.pickle", p, p.expected("training_steps", 5, False)))

    # A GAN: a discriminator step and a generator step per iteration, each with its own Adam, so
    # the step ends take turns at two levels; the loop keeps a 1 MiB tensor per iteration. Six
    # iterations, twelve optimizer steps.
    def gan_step(p, name, grads, state, kept=None):
        set_to_none(p, grads)
        acts = forward(p)
        if kept is not None:
            # Iteration i of six: two optimizer steps an iteration end while it lives.
            held = 2 * (6 - len(kept)) >= 3
            kept.append(p.malloc(("kept", len(kept)), MIB, top, "unknown" if held else "activation"))
        s = p.malloc("seed", 512, seed, "autograd temporary")
        grads = [p.malloc((name, "grad", i), 2 * MIB, [], "gradient") for i in range(params)]
        for a in reversed(acts):
            p.free(a)
        p.free(s)
        opt = adam[:-1] + [frame("/work/prog/run.py", 61 if name == "d" else 62, "main")]
        if not state:
            state += [p.malloc((name, "state", i), 4 * MIB, opt, "optimizer state") for i in range(params)]
        p.free(p.malloc((name, "update"), 2 * MIB, opt, "temporary"), opt)
        return grads

    p = Program()
    model(p)
    d_grads, d_state, g_grads, g_state, kept = [], [], [], [], []
    for _ in range(6):
        d_grads = gan_step(p, "d", d_grads, d_state, kept)
        g_grads = gan_step(p, "g", g_grads, g_state)
    exp = p.expected("training_steps", 12, True)
    exp["program"]["growth_per_step"] = MIB // 2  # 1 MiB per iteration of two steps
    out.append(("program_gan_leak.pickle", p, exp))

    # SGD with momentum (foreach): its first step makes a momentum buffer per parameter, and
    # every later step works in place, so it leaves no event; zero_grad(set_to_none=True) at the
    # top of each iteration. Five steps, each still one (zero_grad's frees divide them).
    sgd = f"{TORCH}/optim/sgd.py"
    momentum = [frame(sgd, 420, "_multi_tensor_sgd"), frame(sgd, 250, "sgd"), frame(sgd, 120, "step"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"), main]
    p = Program()
    model(p)
    grads = []
    for n in range(5):
        set_to_none(p, grads)
        grads = backward_pass(p, forward(p))
        if n == 0:
            [p.malloc(("momentum", i), 4 * MIB, momentum, "optimizer state") for i in range(params)]
    out.append(("program_sgd_momentum.pickle", p, p.expected("training_steps", 5, False)))

    # The programs below are recorded as Python records its stacks: every stack of the main
    # thread starts at the script's module body (run with `python -m`), and the hooks the
    # autograd engine calls on its own thread start at the hook.
    entry = [frame("/work/prog/train.py", 200, "<module>"), frame("<frozen runpy>", 88, "_run_code"), frame("<frozen runpy>", 198, "_run_module_as_main")]

    def rooted(*frames_):
        return list(frames_) + entry

    r_main = frame("/work/prog/train.py", 30, "main")
    r_build = rooted(frame(f"{TORCH}/nn/modules/linear.py", 106, "__init__"), frame("/work/prog/model.py", 8, "__init__"), r_main)
    r_layer = rooted(frame("/work/prog/model.py", 20, "forward"), call, frame("/work/prog/model.py", 40, "forward"), call, frame("/work/prog/train.py", 40, "main"))
    r_seed = rooted(frame(f"{TORCH}/autograd/__init__.py", 347, "backward"), frame(f"{TORCH}/_tensor.py", 581, "backward"), frame("/work/prog/train.py", 55, "main"))
    r_adam = rooted(*adam[:-1], frame("/work/prog/train.py", 60, "main"))
    r_zero = rooted(frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), frame("/work/prog/train.py", 45, "main"))

    def r_step(p, grads, state, layer_stack=r_layer, hook=None):
        """One rooted training step; `hook`: a gradient hook's stack, run on autograd's thread
        after each gradient is made (a temporary it frees)."""
        set_to_none(p, grads, r_zero)
        acts = []
        for k in range(layers):
            acts.append(p.malloc(("act", k), 3 * MIB, layer_stack, "activation"))
            p.free(p.malloc("tmp", 1 * MIB, layer_stack, "temporary"), layer_stack)
        s = p.malloc("seed", 512, r_seed, "autograd temporary")
        grads = []
        for i, a in enumerate(reversed(acts)):
            if i < params:
                grads.append(p.malloc(("grad", i), 4 * MIB, [], "gradient"))
                if hook:
                    p.free(p.malloc(("hook", i), 512, hook, "autograd temporary"), hook)
            p.free(a)
        p.free(s)
        adam_step(p, state, r_adam)
        return grads

    # A gradient hook (a norm per gradient) that autograd runs on its own thread: its stack is
    # the hook alone, named for nothing. Five steps.
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    grads, state = [], []
    for _ in range(5):
        grads = r_step(p, grads, state, hook=[frame("/work/prog/hooks.py", 12, "grad_norm")])
    exp = p.expected("training_steps", 5, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_gradient_hooks.pickle", p, exp))

    # An optimizer fused into the backward pass (PyTorch's tutorial: a per-parameter Adam stepped
    # and zeroed by a post-accumulate-grad hook, which autograd runs on its own thread): no
    # optimizer step after backward; the state is made, the update computed and the gradient
    # freed inside the pass, amid its frameless events. Three iterations; the peak is an update
    # in the second backward pass.
    adam_py = f"{TORCH}/optim/adam.py"
    wrapper = frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper")
    in_hook = frame("/work/prog/train.py", 15, "optimizer_hook")
    h_init = [frame(adam_py, 400, "_init_group"), frame(adam_py, 240, "step"), wrapper, in_hook]
    h_update = [frame(adam_py, 520, "_single_tensor_adam"), frame(adam_py, 900, "adam"), frame(adam_py, 250, "step"), wrapper, in_hook]
    h_zero = [frame(f"{TORCH}/optim/optimizer.py", 980, "zero_grad"), frame("/work/prog/train.py", 16, "optimizer_hook")]
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    fused_state = {}
    for _ in range(3):
        acts = []
        for k in range(layers):
            acts.append(p.malloc(("act", k), 3 * MIB, r_layer, "activation"))
            p.free(p.malloc("tmp", 1 * MIB, r_layer, "temporary"), r_layer)
        s = p.malloc("seed", 512, r_seed, "autograd temporary")
        for i, a in enumerate(reversed(acts)):
            if i < params:
                g = p.malloc(("grad", i), 4 * MIB, [], "gradient")
                if i not in fused_state:
                    fused_state[i] = [p.malloc(("state", i, j), 4 * MIB, h_init, "optimizer state") for j in range(2)]
                p.free(p.malloc(("update", i), 8 * MIB, h_update, "temporary"), h_update)
                p.free(g, h_zero)
            p.free(a)
        p.free(s)
    exp = p.expected("training_steps", 3, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_optimizer_in_backward.pickle", p, exp))

    # Multi-task training: one forward pass through a shared trunk, then each of four heads runs
    # backward(retain_graph=True) but the last, and steps its own Adam. The trunk's saved tensors
    # live through four optimizer steps and are freed by the last backward pass: activations,
    # not something the program keeps. Three iterations, twelve optimizer steps.
    r_adam_h = lambda h: rooted(*adam[:-1], frame("/work/prog/train.py", 70 + h, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    head_state = {}
    for _ in range(3):
        acts = [p.malloc(("act", k), 3 * MIB, r_layer, "activation") for k in range(layers)]
        for h in range(4):
            s_ = p.malloc("seed", 512, r_seed, "autograd temporary")
            g_ = p.malloc(("hgrad", h), 2 * MIB, [], "gradient")
            if h == 3:
                for a_ in reversed(acts):
                    p.free(a_)
            p.free(s_)
            if h not in head_state:
                head_state[h] = [p.malloc(("hstate", h, j), 2 * MIB, r_adam_h(h), "optimizer state") for j in range(2)]
            p.free(p.malloc("update", MIB, r_adam_h(h), "temporary"), r_adam_h(h))
            p.free(g_, r_zero)
    exp = p.expected("training_steps", 12, False)
    out.append(("program_multitask_retain_graph.pickle", p, exp))

    # Inference whose model forks work onto threads of its own (TorchScript's torch.jit.fork on
    # the inter-op pool): those allocations carry no stack, between the forward pass's own. No
    # optimizer, no backward pass: forward passes only, not training. Four requests.
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    for _ in range(4):
        # (What a pass makes and frees within it is temporary, as in every inference fixture.)
        outs = [p.malloc(("act", k), 3 * MIB, r_layer, "temporary") for k in range(2)]
        forked = [p.malloc(("forked", k), 2 * MIB, [], "temporary") for k in range(3)]
        for f_ in forked:
            p.free(f_)
        outs.append(p.malloc(("act", 2), 3 * MIB, r_layer, "temporary"))
        for o_ in outs:
            p.free(o_, r_layer)
    out.append(("program_forked_inference.pickle", p, p.expected("forward", 0, False)))

    # Out of memory inside a forward pass that catches it and falls back to smaller chunks
    # (memory-efficient attention's fallback): the step goes on and finishes. Four steps.
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    grads, state = [], []
    for n in range(4):
        if n == 0:
            acts = [p.malloc(("act", k), 3 * MIB, r_layer, "activation") for k in range(layers)]
            p.t.oom(64 * MIB, device_free=2 * MIB)
            p.note()
            for a_ in reversed(acts):
                p.free(a_, r_layer)
        grads = r_step(p, grads, state)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["oom_recovered"] = True
    out.append(("program_oom_fallback_in_forward.pickle", p, exp))

    # A pipeline stage (Megatron's 1F1B, the first of several stages): each iteration runs two
    # micro-batches' forward passes, then each one's backward from the gradient the next stage
    # sends (a receive buffer, then autograd's engine given that gradient: no seed and no frame
    # of loss.backward(); every event of the pass is on autograd's thread). The gradients are
    # made in the first iteration and accumulated in place after; Adam's state is made in the
    # first step, and its later steps, like the zeroing of the gradients, leave no event. Three
    # iterations.
    sched = "/work/mg/megatron/core/pipeline_parallel/schedules.py"
    p2p = "/work/mg/megatron/core/pipeline_parallel/p2p_communication.py"
    pp_loop = frame("/work/mg/megatron/training/training.py", 600, "train_step")
    pp_fwd = rooted(frame("/work/prog/model.py", 20, "forward"), call, frame(sched, 200, "forward_step"), frame(sched, 1300, "forward_backward_pipelining_without_interleaving"), pp_loop)
    pp_recv = rooted(frame(p2p, 330, "_communicate"), frame(p2p, 420, "recv_backward"), frame(sched, 1350, "forward_backward_pipelining_without_interleaving"), pp_loop)
    pp_adam = rooted(*adam[:-1], frame("/work/mg/megatron/core/optimizer/optimizer.py", 400, "step"), pp_loop)
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    pp_grads, pp_state = [], []
    for _ in range(3):
        micro = []
        for mb in range(2):
            acts = []
            for k in range(layers):
                acts.append(p.malloc(("act", mb, k), 3 * MIB, pp_fwd, "activation"))
                p.free(p.malloc("tmp", 1 * MIB, pp_fwd, "temporary"), pp_fwd)
            micro.append(acts)
        for acts in micro:
            recv = p.malloc("recv", 2 * MIB, pp_recv, "communication")
            work = p.malloc("work", 2 * MIB, [], "autograd temporary")
            if not pp_grads:
                pp_grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
            for a in reversed(acts):
                p.free(a)
            p.free(work)
            p.free(recv)
        if not pp_state:
            pp_state = [p.malloc(("state", i), 4 * MIB, pp_adam, "optimizer state") for i in range(2 * params)]
    exp = p.expected("training_steps", 3, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_pipeline_stage.pickle", p, exp))

    # FSDP (FullyShardedDataParallel): sharded flat parameters made in its constructor; each
    # layer's full parameters gathered before its forward (under FSDP's forward, which wraps the
    # model's) and freed after it; in backward FSDP's hooks gather them again and reduce each
    # gradient to its shard, on autograd's thread. Four steps.
    fs = f"{TORCH}/distributed/fsdp"
    fsdp_forward = frame(f"{fs}/fully_sharded_data_parallel.py", 850, "forward")
    fsdp_main = frame("/work/prog/train.py", 40, "main")

    def unshard(*caller):
        return [frame(f"{fs}/_flat_param.py", 1400, "_alloc_padded_unsharded_flat_param"), frame(f"{fs}/_flat_param.py", 1350, "unshard"), frame(f"{fs}/_runtime_utils.py", 300, "_unshard"), *caller]

    pre_forward = unshard(*rooted(frame(f"{fs}/_runtime_utils.py", 500, "_pre_forward_unshard"), frame(f"{fs}/_runtime_utils.py", 480, "_pre_forward"), fsdp_forward, call, fsdp_main))
    pre_backward = unshard(frame(f"{fs}/_runtime_utils.py", 700, "_pre_backward_hook"))
    post_backward = [frame(f"{fs}/_runtime_utils.py", 900, "_reduce_grad"), frame(f"{fs}/_runtime_utils.py", 800, "_post_backward_hook")]
    reshard = rooted(frame(f"{fs}/_flat_param.py", 1500, "_free_unsharded_flat_param"), frame(f"{fs}/_runtime_utils.py", 400, "_reshard"), frame(f"{fs}/_runtime_utils.py", 600, "_post_forward"), fsdp_forward, call, fsdp_main)
    shard_init = rooted(frame(f"{fs}/_flat_param.py", 700, "_init_flat_param_and_metadata"), frame(f"{fs}/_flat_param.py", 600, "__init__"), frame(f"{fs}/fully_sharded_data_parallel.py", 480, "__init__"), frame("/work/prog/train.py", 20, "main"))
    fsdp_layer = rooted(frame("/work/prog/model.py", 20, "forward"), call, fsdp_forward, call, frame("/work/prog/model.py", 40, "forward"), call, fsdp_forward, call, fsdp_main)
    p = Program()
    [p.malloc(("shard", k), 2 * MIB, shard_init, "parameter") for k in range(layers)]
    grads, state = [], []
    for _ in range(4):
        set_to_none(p, grads, r_zero)
        grads, acts = [], []
        for k in range(layers):
            full = p.malloc("full", 8 * MIB, pre_forward, "parameter")
            acts.append(p.malloc(("act", k), 3 * MIB, fsdp_layer, "activation"))
            p.free(p.malloc("tmp", 1 * MIB, fsdp_layer, "temporary"), fsdp_layer)
            p.free(full, reshard)
        s = p.malloc("seed", 512, r_seed, "autograd temporary")
        for k in reversed(range(layers)):
            full = p.malloc("full", 8 * MIB, pre_backward, "parameter")
            act_grad = p.malloc("act-grad", 3 * MIB, [], "autograd temporary")
            padded = p.malloc("padded-grad", 8 * MIB, [], "autograd temporary")
            p.free(acts[k])
            p.free(full)
            grads.append(p.malloc(("grad", k), 2 * MIB, post_backward, "gradient"))
            p.free(padded, post_backward)
            p.free(act_grad)
        p.free(s)
        adam_step(p, state, r_adam, count=layers, state_bytes=4 * MIB, update_bytes=2 * MIB)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_fsdp.pickle", p, exp))

    # Hugging Face's Trainer: the script's one line `trainer.train()` runs every pass (the model
    # and the loop are the library's), AdamW steps through accelerate, model.zero_grad() ends
    # each step. That line holds all the memory, but it is no allocation site. DeepSpeed ZeRO-2
    # under it: its optimizer's constructor flattens the 16-bit parameters and keeps an fp32
    # master copy, which the optimizer updates (and, in some versions, gradient buffers as large
    # from the same frames: unknown). Four steps.
    site = "/usr/lib/python3/site-packages"
    trainer = f"{site}/transformers/trainer.py"
    ft = [frame("/work/prog/finetune.py", 40, "<module>"), *entry[1:]]
    loop = [frame(trainer, 2400, "_inner_training_loop"), frame(trainer, 2100, "train"), *ft]
    llama = f"{site}/transformers/models/llama/modeling_llama.py"
    hf_build = [frame(f"{TORCH}/nn/modules/linear.py", 106, "__init__"), frame(llama, 100, "__init__"), frame(f"{site}/transformers/modeling_utils.py", 4000, "from_pretrained"), frame("/work/prog/finetune.py", 20, "<module>"), *entry[1:]]
    hf_layer = [frame(f"{TORCH}/nn/modules/linear.py", 125, "forward"), call, frame(llama, 300, "forward"), call, frame(f"{site}/deepspeed/runtime/engine.py", 1800, "forward"), call, frame(trainer, 3600, "compute_loss"), frame(trainer, 3500, "training_step"), *loop]
    zero2 = f"{site}/deepspeed/runtime/zero/stage_1_and_2.py"
    # accelerate's backward → DeepSpeed's engine → the ZeRO optimizer's backward, which makes its
    # gradient-reduction buckets (ipg_buffer) and then runs loss.backward() (the seed).
    ds_backward = [frame(zero2, 2060, "backward"), frame(f"{site}/deepspeed/runtime/engine.py", 2000, "backward"), frame(f"{site}/accelerate/utils/deepspeed.py", 170, "backward"), frame(f"{site}/accelerate/accelerator.py", 2200, "backward"), frame(trainer, 3550, "training_step"), *loop]
    hf_seed = [frame(f"{TORCH}/autograd/__init__.py", 347, "backward"), frame(f"{TORCH}/_tensor.py", 581, "backward"), frame(f"{site}/deepspeed/runtime/fp16/loss_scaler.py", 60, "backward"), *ds_backward]
    zero_init = [frame(zero2, 300, "__init__"), frame(f"{site}/deepspeed/runtime/engine.py", 1500, "_configure_zero_optimizer"), frame(f"{site}/deepspeed/__init__.py", 180, "initialize"), frame(f"{site}/accelerate/accelerator.py", 1900, "prepare"), frame(trainer, 2300, "_inner_training_loop"), frame(trainer, 2100, "train"), *ft]
    zero_step = [frame(zero2, 1700, "step"), frame(f"{site}/deepspeed/runtime/engine.py", 2200, "step"), frame(f"{site}/accelerate/optimizer.py", 170, "step"), *loop]
    hf_adam = [frame(f"{TORCH}/optim/adamw.py", 400, "_init_group"), frame(f"{TORCH}/optim/adamw.py", 240, "step"), frame(f"{TORCH}/optim/optimizer.py", 487, "wrapper"), *zero_step]
    model_zero_grad = [frame(f"{TORCH}/nn/modules/module.py", 2800, "zero_grad"), *loop]
    p = Program()
    [p.malloc(("param", i), 4 * MIB, hf_build, "parameter") for i in range(params)]
    p.malloc("flat16", 6 * MIB, [frame(zero2, 950, "flatten_dense_tensors_aligned"), *zero_init], "parameter")
    p.malloc("fp32-master", 12 * MIB, zero_init, "unknown")  # beside gradient buffers its frames cannot tell apart
    state, ipg = [], []
    for _ in range(4):
        acts = []
        for k in range(layers):
            acts.append(p.malloc(("act", k), 3 * MIB, hf_layer, "activation"))
            p.free(p.malloc("tmp", 1 * MIB, hf_layer, "temporary"), hf_layer)
        for b in ipg:  # `self.ipg_buffer = []` lets the last step's buckets go
            p.free(b, ds_backward)
        ipg = [p.malloc(("ipg", b), 2 * MIB, ds_backward, "communication") for b in range(2)]
        s = p.malloc("seed", 512, hf_seed, "autograd temporary")
        grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
        for a in reversed(acts):
            p.free(a)
        p.free(s)
        adam_step(p, state, hf_adam, count=2, state_bytes=12 * MIB)
        set_to_none(p, grads, model_zero_grad)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["site_finding"] = False
    out.append(("program_hf_trainer.pickle", p, exp))

    p = Program()
    model(p)
    state = [p.malloc(("own-state", i), 4 * MIB, own_init, "optimizer state") for i in range(2 * params)]
    grads = []
    for n in range(1, 4):
        grads = step(p, n, grads, state, own=True)
    out.append(("program_own_optimizer.pickle", p, p.expected("training_steps", 3, False)))

    # Resuming from a checkpoint: the model built, then optimizer.load_state_dict(...) restores
    # Adam's state (moved to the parameters' device inside torch.optim's loading), then four
    # steps that find their state made. Loading is set-up, not a step: four steps.
    r_load = rooted(frame(f"{TORCH}/optim/optimizer.py", 760, "_process_value_according_to_param_policy"),
                    frame(f"{TORCH}/optim/optimizer.py", 820, "_cast"), frame(f"{TORCH}/optim/optimizer.py", 870, "load_state_dict"),
                    frame("/work/prog/train.py", 25, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    state = [p.malloc(("state", i), 8 * MIB, r_load, "optimizer state") for i in range(params)]
    grads = []
    for _ in range(4):
        grads = r_step(p, grads, state)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_resume_optimizer.pickle", p, exp))

    # Stochastic weight averaging: four steps, each followed by the averaged model's update
    # (AveragedModel.update_parameters, torch.optim's swa_utils), then update_bn: a forward pass
    # of the averaged model over eight batches, each batch moved to the device inside update_bn,
    # to recompute batch-norm statistics. The batches are no optimizer steps: four steps.
    swa = f"{TORCH}/optim/swa_utils.py"
    r_average = rooted(frame(swa, 250, "update_parameters"), frame("/work/prog/train.py", 62, "main"))
    r_averaged_copy = rooted(frame("/usr/lib/python3.11/copy.py", 172, "deepcopy"), frame(swa, 200, "__init__"), frame("/work/prog/train.py", 22, "main"))
    r_update_bn = rooted(frame(swa, 330, "update_bn"), frame("/work/prog/train.py", 70, "main"))
    r_bn_layer = rooted(frame("/work/prog/model.py", 20, "forward"), call, frame(swa, 225, "forward"), call, frame(swa, 340, "update_bn"), frame("/work/prog/train.py", 70, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    # The averaged model: a deep copy of the model's parameters, made by AveragedModel.
    [p.malloc(("averaged", i), 4 * MIB, r_averaged_copy, "parameter") for i in range(params)]
    grads, state = [], []
    for _ in range(4):
        grads = r_step(p, grads, state)
        p.free(p.malloc("average-tmp", 4 * MIB, r_average, "temporary"), r_average)
    for b in range(8):
        batch = p.malloc(("batch", b), 2 * MIB, r_update_bn, "unknown")
        for k in range(layers):
            p.free(p.malloc(("bn-act", k), 1 * MIB, r_bn_layer, "temporary"), r_bn_layer)
        p.free(batch, r_update_bn)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_swa_update_bn.pickle", p, exp))

    # A recording started inside a backward pass: its first events free activations made before
    # the window (on autograd's thread: no frames), then Adam's step; three whole steps follow.
    # The first, seen from inside, is partial: three complete steps.
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    grads, state = [], []
    grads = r_step(p, grads, state)
    set_to_none(p, grads, r_zero)
    # Made before the window and freed without frames: nothing left tells what they were.
    acts = [p.malloc(("act", k), 3 * MIB, r_layer, "unknown") for k in range(layers)]
    s = p.malloc("seed", 512, r_seed, "unknown")
    cut = len(p.t.events)
    grads = [p.malloc(("grad", i), 4 * MIB, [], "gradient") for i in range(params)]
    for a in reversed(acts):
        p.free(a)
    p.free(s)
    adam_step(p, state, r_adam)
    for _ in range(3):
        grads = r_step(p, grads, state)
    exp = p.expected("training_steps", 3, False, cut=cut)
    exp["program"]["peak_phase"] = "backward"
    p.t.events = p.t.events[cut:]
    out.append(("program_recording_mid_backward.pickle", p, exp))

    # A CUDA prefetcher (the data_prefetcher of NVIDIA's ImageNet example): its constructor
    # moves the first batch to the device, and each next() hands over the batch it holds and
    # moves the one after; plain SGD (its steps leave no event; zero_grad's frees divide them).
    # The first batch, made in a constructor and let go in the second step, is no parameter;
    # nothing in the frames says what the batches are. Four steps, the first one's peak the
    # highest (the first of equal ones).
    r_preload_first = rooted(frame("/work/prog/data.py", 20, "preload"), frame("/work/prog/data.py", 12, "__init__"), frame("/work/prog/train.py", 28, "main"))
    r_preload = rooted(frame("/work/prog/data.py", 20, "preload"), frame("/work/prog/data.py", 31, "next"), frame("/work/prog/train.py", 38, "main"))
    r_loop = rooted(frame("/work/prog/train.py", 38, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    held = p.malloc(("batch", 0), 8 * MIB, r_preload_first, "unknown")
    grads, used = [], None
    for n in range(4):
        if used is not None:
            p.free(used, r_loop)
        used, held = held, p.malloc(("batch", n + 1), 8 * MIB, r_preload, "unknown")
        set_to_none(p, grads, r_zero)
        acts = [p.malloc(("act", k), 3 * MIB, r_layer, "activation") for k in range(layers)]
        grads = backward_pass(p, acts, r_seed)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_cuda_prefetcher.pickle", p, exp))

    # A sequence-length warmup: each step's logits grow with its sequence length (1 to 9 MiB,
    # then two short batches), and the script keeps them (`outputs = model(...)`) until the next
    # step's forward pass rebinds the name. The site makes a larger block before freeing the one
    # before, step after step, yet across a backward pass and an optimizer step: step outputs,
    # not a buffer grown by copying. Eleven steps.
    r_head = rooted(frame("/work/prog/model.py", 90, "forward"), call, frame("/work/prog/train.py", 40, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    grads, state, logits = [], [], None
    for n, length in enumerate(list(range(1, 10)) + [2, 3]):
        set_to_none(p, grads, r_zero)
        acts = [p.malloc(("act", k), 3 * MIB, r_layer, "activation") for k in range(layers)]
        new = p.malloc(("logits", n), length * MIB, r_head, "activation")
        if logits is not None:
            p.free(logits, r_loop)
        logits = new
        grads = backward_pass(p, acts, r_seed)
        adam_step(p, state, r_adam)
    exp = p.expected("training_steps", 11, False)
    exp["program"]["peak_phase"] = "backward"
    out.append(("program_seqlen_warmup.pickle", p, exp))

    # A no-grad pass over a validation batch between loss.backward() and optimizer.step():
    # the peak is in that pass, with this step's gradients alive for the step right after it
    # (zero_grad already runs before the forward pass): no gradients held from the step before.
    # Four steps.
    r_eval = rooted(frame("/work/prog/model.py", 20, "forward"), call, frame("/work/prog/model.py", 40, "forward"), call, frame("/work/prog/train.py", 58, "main"))
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    grads, state = [], []
    for _ in range(4):
        set_to_none(p, grads, r_zero)
        acts = [p.malloc(("act", k), 3 * MIB, r_layer, "activation") for k in range(layers)]
        grads = backward_pass(p, acts, r_seed)
        evals = [p.malloc(("eval", k), 8 * MIB, r_eval, "temporary") for k in range(layers)]
        for e in evals:
            p.free(e, r_eval)
        adam_step(p, state, r_adam)
    exp = p.expected("training_steps", 4, False)
    exp["program"]["peak_phase"] = "forward"
    out.append(("program_eval_before_step.pickle", p, exp))

    # Three ways for each step to end at a different level. Each is eight steps of training.
    r_keep = rooted(frame("/work/prog/model.py", 44, "forward"), call, frame("/work/prog/train.py", 40, "main"))
    r_cat = rooted(frame("/work/prog/train.py", 66, "main"))

    def grown_steps(keep=None, buffer=False, grow=False, steps=8, small_leak=False, hook_keep=None):
        """`keep(n)`: step n's logits stay (a list of samples); `buffer`: each step replaces a
        buffer by one a step larger (torch.cat of the predictions); `grow`: step n runs on
        n + 1 times the sequence length (its activations and logits); `small_leak`: each step
        keeps 64 KiB (its predictions); `hook_keep(n)`: a backward hook keeps a 2 MiB
        gradient in step n (made on autograd's thread: no frames)."""
        p = Program()
        [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
        grads, state, logits, preds = [], [], None, None
        for n in range(steps):
            size = (n + 1) * MIB if grow else MIB
            set_to_none(p, grads, r_zero)
            acts = [p.malloc(("act", n, k), size, r_layer, "activation") for k in range(layers)]
            # What a step keeps is the program's (unknown) once three optimizer steps end
            # while it lives (see `step`).
            held = steps - n >= 3
            new = p.malloc(("logits", n), size, r_keep, "unknown" if keep and keep(n) and held else "activation")
            if logits is not None and not (keep and keep(n - 1)):
                p.free(logits, r_loop)
            logits = new
            if small_leak:
                p.malloc(("preds", n), 64 * 1024, r_keep, "unknown" if held else "activation")
            grads = backward_pass(p, acts, r_seed)
            if hook_keep and hook_keep(n):
                p.malloc(("hooked", n), 2 * MIB, [], "gradient")
            adam_step(p, state, r_adam)
            if buffer:
                bigger = p.malloc(("preds", n), (n + 1) * MIB, r_cat, "unknown")
                if preds is not None:
                    p.free(preds, r_cat)
                preds = bigger
        return p

    # A sequence-length warm-up that only lengthens: every step ends higher (its logits, kept
    # until the next step rebinds the name, grow), yet nothing from a step two back is still
    # held: the steps grow, nothing leaks.
    p = grown_steps(grow=True)
    exp = p.expected("training_steps", 8, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "rising_working_set"
    out.append(("program_steps_rising.pickle", p, exp))

    # `if step % 3 == 0: samples.append(logits)`: the ends rise every third step, and the
    # logits of steps 3 and 6 (counted from 1) are still held at the end of step 8: growing.
    p = grown_steps(keep=lambda n: n % 3 == 2)
    exp = p.expected("training_steps", 8, True)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "growing"
    exp["program"]["passes_kept"] = False  # three passes keep logits: too few to name the site by passes
    out.append(("program_steps_kept_every_third.pickle", p, exp))

    # Every fifth step of twelve keeps its logits: the ends rise too seldom for a trend, but
    # the logits of steps 5 and 10 are still held at the end of step 12: kept across steps.
    p = grown_steps(keep=lambda n: n % 5 == 4, steps=12)
    exp = p.expected("training_steps", 12, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "kept_across_steps"
    exp["program"]["kept_steps"] = [5, 10]
    out.append(("program_steps_kept_every_fifth.pickle", p, exp))

    # A cache filled in the early steps (an attention mask per new sequence length: steps 1, 3
    # and 5 of twelve) and kept: blocks from several steps held to the end, but none added in
    # the second half: bounded state, no leak.
    p = grown_steps(keep=lambda n: n in (0, 2, 4), steps=12)
    exp = p.expected("training_steps", 12, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "stable"
    exp["program"]["passes_kept"] = False  # four passes' masks are held: the passes alone would say kept
    out.append(("program_steps_cache_filled_early.pickle", p, exp))

    # A sequence-length warm-up that also keeps 64 KiB of predictions from every step: the
    # rise is the steps growing, but the kept blocks pile up: kept across steps.
    p = grown_steps(grow=True, small_leak=True, steps=10)
    exp = p.expected("training_steps", 10, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "kept_across_steps"
    exp["program"]["kept_steps"] = list(range(2, 9))
    exp["program"]["passes_kept"] = False
    out.append(("program_steps_rising_with_small_leak.pickle", p, exp))

    # A backward hook that keeps a gradient every fourth step of sixteen: kept across steps,
    # though made in the backward pass.
    p = grown_steps(hook_keep=lambda n: n % 4 == 3, steps=16)
    exp = p.expected("training_steps", 16, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["growth_verdict"] = "kept_across_steps"
    exp["program"]["kept_steps"] = [4, 8, 12]
    exp["program"]["kept_site"] = "[no stack recorded]"
    out.append(("program_steps_hook_keeps_gradients.pickle", p, exp))

    def skipping(skipped):
        """Mixed precision: GradScaler skips the optimizer's step in the iterations `skipped`
        (an overflow), zero_grad runs in every one: six iterations, six steps."""
        p = Program()
        [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
        grads, state = [], []
        for n in range(6):
            set_to_none(p, grads, r_zero)
            acts = [p.malloc(("act", n, k), 3 * MIB, r_layer, "activation") for k in range(layers)]
            grads = backward_pass(p, acts, r_seed)
            if n not in skipped:
                adam_step(p, state, r_adam)
        exp = p.expected("training_steps", 6, False)
        exp["program"]["peak_phase"] = "backward"
        return p, exp

    # Iterations 2 and 4 skipped: six steps, not the four updates; the first three skipped (the
    # scale falls from its start): the first step is no longer than the others.
    out.append(("program_skipped_optimizer_steps.pickle", *skipping((1, 3))))
    out.append(("program_skipped_first_optimizer_steps.pickle", *skipping((0, 1, 2))))

    # Out of memory in the first optimizer step, Adam making its state: the forward pass's
    # activations are freed and their cached segments released (as the allocator does before it
    # gives up), so what holds the memory is the weights (one of four frozen), the gradients and
    # the state so far: the advice is about them, largest first, and not about the batch.
    p = Program()
    weights = [p.malloc(("param", i), 20 * MIB, r_build, "parameter") for i in range(4)]
    acts = [p.malloc(("act", k), 20 * MIB, r_layer, "activation") for k in range(2)]
    s = p.malloc("seed", 512, r_seed, "autograd temporary")
    grads = [p.malloc(("grad", i), 20 * MIB, [], "gradient") for i in range(3)]
    for a in reversed(acts):
        p.free(a)
    p.free(s)
    state = [p.malloc(("state", i), 20 * MIB, r_adam, "optimizer state") for i in range(2)]
    held = set(p.t.live)
    for addr in sorted(set(p.places.values()) - held):
        p.t.segment_free(addr)
        p.note()
    p.t.oom(20 * MIB, device_free=2 * MIB)
    p.note()
    exp = p.expected("one_training_step", 1, False)
    exp["program"]["peak_phase"] = "backward"
    exp["program"]["oom_advice_for"] = ["Parameter", "Gradient", "Optimizer state"]
    out.append(("program_oom_in_first_optimizer_step.pickle", p, exp))

    # Out of memory in a first forward pass at a batch too large, caught, and the step run again
    # at a smaller one (accelerate's find_executable_batch_size): the handler lets the attempt's
    # activations go, then four steps. The failed attempt is no step of the four.
    p = Program()
    [p.malloc(("param", i), 4 * MIB, r_build, "parameter") for i in range(params)]
    attempt = [p.malloc(("big", k), 12 * MIB, r_layer, "activation") for k in range(3)]
    p.t.oom(12 * MIB, device_free=2 * MIB)
    p.note()
    handler = rooted(frame("/work/prog/train.py", 70, "main"))
    for a in attempt:
        p.free(a, handler)
    retry_at = len(p.t.events)
    grads, state = [], []
    for _ in range(4):
        grads = r_step(p, grads, state)
    exp = p.expected("training_steps", 4, False)
    # The retry starts at its first block (this generator records no frames for a segment_alloc).
    exp["program"]["retry_at"] = next(i for i in range(retry_at, len(p.t.events)) if p.t.events[i]["action"] == "alloc")
    out.append(("program_oom_retry_smaller_batch.pickle", p, exp))

    # `preds = torch.cat([preds, batch_preds])` each step: one block, replaced by a larger one
    # every step, grows without bound though no step's own block outlives the next step. The
    # steps do the same work: growing.
    p = grown_steps(buffer=True)
    exp = p.expected("training_steps", 8, True)
    exp["program"]["peak_phase"] = "unknown"  # the torch.cat at the step's end, old and new buffer alive
    exp["program"]["growth_verdict"] = "growing"
    exp["program"]["growth_per_step"] = MIB
    exp["program"]["leak_site"] = False
    exp["program"]["passes_kept"] = False
    out.append(("program_steps_growing_buffer.pickle", p, exp))
    return [(name, {"segments": p.t.dump_segments(), "device_traces": [p.t.events]}, exp) for name, p, exp in out]


def shifted(snap, path, by):
    """`snap` with every frame of `path` `by` lines further down (each shared frame once)."""
    snap = copy.deepcopy(snap)
    seen = set()
    frames = [f for e in snap["device_traces"][0] for f in e.get("frames", [])]
    frames += [f for s in snap["segments"] for b in s["blocks"] for f in b.get("frames", [])]
    for f in frames:
        if f["filename"] == path and id(f) not in seen:
            seen.add(id(f))
            f["line"] += by
    return snap


def write(name, obj, expected, protocol=4, raw=None):
    path = os.path.join(OUT, name)
    data = raw if raw is not None else pickle.dumps(obj, protocol=protocol)
    with open(path, "wb") as f:
        f.write(data)
    EXPECTED[name] = expected


EXPECTED = {}


def main():
    os.makedirs(OUT, exist_ok=True)
    fr = Frames()

    # 1. CUDA, dict format, protocol 4, time_us, allocator_settings.
    t = training_like(fr)
    snap = {"segments": t.dump_segments(), "device_traces": [t.events], "allocator_settings": {"expandable_segments": False, "max_split_size": -1}, "external_annotations": [{"name": "fwd", "stage": "START", "device": 0, "time_us": 1}]}
    exp = {"format": "dict", "consistent": True, "devices": [t.expected()]}
    write("cuda_training.pickle", snap, exp)
    # Same data in the other encodings and protocols.
    write("cuda_training_p2.pickle", snap, exp, protocol=2)
    write("cuda_training_p5.pickle", snap, exp, protocol=5)
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        g.write(pickle.dumps(snap, protocol=4))
    write("cuda_training.pickle.gz", None, exp, raw=buf.getvalue())
    js = dict(snap)
    js["segments"] = [dict(s, segment_pool_id=list(s["segment_pool_id"])) for s in snap["segments"]]
    write("cuda_training.json", None, exp, raw=json.dumps(js).encode())
    write("trailing_bytes.pickle", None, dict(exp, warnings=["TRAILING_BYTES"]), raw=pickle.dumps(snap, protocol=4) + b"\x00\x00garbage after STOP")

    # 2. torch_npu: 32-byte pad, expandable segments, 16 KiB alignment of large blocks, no
    #    time_us, no allocator_settings.
    t = Trace(0, time=False)
    base = 0x12C000000000
    t.segment_map(base, 20 * MIB)
    s1 = fr.stack("npu_forward", "main")
    a1, b1 = base, r512(5 * MIB, 32)
    a2, b2 = a1 + b1, r512(MIB - 16, 32)  # 1 MiB + 512: large pool only because of the pad
    a3 = (a2 + b2 + 16383) // 16384 * 16384  # >= 2 MiB: the allocator aligns it to 16 KiB
    t.malloc(a1, 5 * MIB, b1, s1)
    t.malloc(a2, MIB - 16, b2, s1)
    t.malloc(a3, 2 * MIB - 32, 2 * MIB, s1)
    t.free(a2)
    t.malloc(a2, MIB - 100, r512(MIB - 100, 32), s1)
    snap = {"segments": t.dump_segments(), "device_traces": [t.events]}
    write("npu_expandable.pkl", snap, {"format": "dict", "consistent": True, "devices": [t.expected()]})

    # 3. Ring-buffer cut: the first events fell off the window. Blocks allocated before the window
    #    are freed inside it or still live at the dump; counters start where the full trace was.
    t = training_like(fr)
    cut = 9
    start = t.series[cut - 1]
    snap = {"segments": t.dump_segments(), "device_traces": [t.events[cut:]], "allocator_settings": {"trace_alloc_max_entries": len(t.events) - cut}}
    write("ring_buffer_cut.pickle", snap, {"format": "dict", "consistent": True, "devices": [t.expected(start=start, cut=cut)]})

    # 4. Two devices, an OOM, a pending free and a `snapshot` checkpoint marker.
    t0 = training_like(fr, device=0)
    t0.marker()
    t1 = Trace(1)
    b1 = 0x7F0000000000 + 0x100000000
    t1.segment_alloc(b1, 20 * MIB, "large")
    t1.malloc(b1, 12 * MIB, 12 * MIB, fr.stack("big", "main"))
    t1.oom(40 * MIB, 6 * MIB)
    t1.malloc(b1 + 12 * MIB, 8 * MIB - 4096, 8 * MIB, fr.stack("rest", "main"))
    t1.free(b1, complete=False)
    snap = {"segments": t0.dump_segments() + t1.dump_segments(), "device_traces": [t0.events, t1.events]}
    write("multi_device_oom.pickle", snap, {"format": "dict", "consistent": True, "devices": [t0.expected(), t1.expected()]})

    # 5. Legacy and degenerate shapes.
    t = training_like(fr)
    segs = t.dump_segments()
    write("legacy_list.pickle", segs, {"format": "list", "consistent": True, "devices": [dict(t.expected(), events=0, peaks=None, at_last_event=None, at_window_start=None)]})
    hist = []
    for s in segs:
        s2 = {k: v for k, v in s.items() if k not in ("blocks", "is_expandable", "frames")}
        s2["blocks"] = [{"size": b["size"], "state": b["state"], "history": [{"addr": b["address"], "real_size": b["requested_size"], "frames": b["frames"]}]} for b in s["blocks"]]
        hist.append(s2)
    write("pytorch20_history.pickle", {"segments": hist, "device_traces": [[]]}, {"format": "dict", "consistent": True, "devices": [dict(t.expected(), events=0, peaks=None, at_last_event=None, at_window_start=None)]})
    write("empty.pickle", {"segments": [], "device_traces": []}, {"format": "dict", "consistent": True, "devices": []})
    write("segments_only.pickle", {"segments": segs, "device_traces": [[]]}, {"format": "dict", "consistent": True, "devices": [dict(t.expected(), events=0, peaks=None, at_last_event=None, at_window_start=None)]})

    # 6. TorchScript pickler with type tags (torch_npu's C++ `_memory_snapshot_pickled`).
    write("torchscript_typetags.pickle", None, {"format": "dict", "consistent": True, "devices": [training_like(fr).expected()]}, raw=typetag_pickle(training_like(fr)))

    # 7. Inconsistent: allocations outside every segment (as Mosaic's synthetic file has).
    t = Trace(0)
    t.segment_alloc(0x7F0000000000, 2 * MIB, "small")
    t.malloc(0x7F0000000000, 100, 512)
    bad = list(t.events)
    bad.append({"action": "alloc", "addr": 0x1000, "size": 512, "stream": 0, "frames": []})
    bad.append({"action": "free_completed", "addr": 0x1000, "size": 512, "stream": 0, "frames": []})
    snap = {"segments": t.dump_segments(), "device_traces": [bad]}
    write("inconsistent_outside_segment.pickle", snap, {"format": "dict", "consistent": False, "devices": [{"device": 0, "events": 4, "at_last_event": {"allocated": 512, "active": 512, "reserved": 2 * MIB, "requested": 100}}]})

    # 8. Semantics: categories, phases and steps with known answers.
    t, ann, exp = semantics_training()
    snap = {"segments": t.dump_segments(), "device_traces": [t.events], "external_annotations": ann, "trace_alloc_max_entries": 10000}
    write("semantics_training.pickle", snap, dict({"format": "dict", "consistent": True, "devices": [t.expected()]}, semantics=exp))

    # 8b. Programs of each kind (forward only, model build, one step, steps with and without a
    #     leak, the program's own optimizer) with what each block is.
    for name, snap, exp in program_fixtures():
        write(name, snap, exp)
        if name == "program_steps_stable.pickle":
            # 8c. The same program after an edit that moved model.py's lines down by three: a
            #     comparison matches every site across the move and names the line change.
            write("program_steps_moved.pickle", shifted(snap, "/work/prog/model.py", 3), dict(exp, moved_from={"file": name, "path": "/work/prog/model.py", "lines": 3}))

    # 9a. A compiled model's trace: thousands of dynamo / inductor / AOT ranges around three
    #     ProfilerStep ranges. The framework ranges are grouped and hidden by default.
    t = training_like(fr)
    ann, names = [], ["## Call CompiledFxGraph fabc ##", "TorchDynamo Cache Lookup", "Torch-Compiled Region: 0/0", "CompiledFunction", "## inductor kernel ##"]
    first, last = t.events[0]["time_us"], t.events[-1]["time_us"]
    framework = 0
    for k in range(3000):
        start = first + (k * (last - first)) // 3000
        ann.append({"name": names[k % len(names)], "stage": "START", "device": 0, "time_us": start})
        ann.append({"name": names[k % len(names)], "stage": "END", "device": 0, "time_us": start + 1})
        framework += 1
    third = (last - first) // 3
    for step in range(3):
        ann.append({"name": f"ProfilerStep#{step}", "stage": "START", "device": 0, "time_us": first + step * third})
        ann.append({"name": f"ProfilerStep#{step}", "stage": "END", "device": 0, "time_us": first + (step + 1) * third - 1})
    ann.sort(key=lambda a: a["time_us"])
    snap = {"segments": t.dump_segments(), "device_traces": [t.events], "external_annotations": ann}
    write("compiled_ranges.pickle", snap, {"format": "dict", "consistent": True, "devices": [t.expected()], "framework_ranges": framework, "steps": 3})

    # 9. Pinned host memory (2.14+, record_pinned_host_memory=True): `host_segments` and
    #    `host_traces` in the shapes of `segments` and of one device's trace. The pinned-host
    #    allocator gives each request a block of its own (power-of-two sizes here, so the block is
    #    the request); it becomes the entry after the last device.
    t = training_like(fr)
    h = Trace(0)
    hb = 0x7E0000000000
    pin = fr.stack("pin_memory", "loader", "main")
    for k, size in enumerate([4 * MIB, 8 * MIB, 4 * MIB]):
        a = hb + k * 16 * MIB
        h.segment_alloc(a, size, "large", pin)
        h.malloc(a, size, size, pin)
    h.free(hb)
    h.malloc(hb, 4 * MIB, 4 * MIB, pin)
    host_segs = [dict(s, device=0) for s in h.dump_segments()]
    snap = {"segments": t.dump_segments(), "device_traces": [t.events], "host_segments": host_segs, "host_traces": h.events}
    host = dict(h.expected(), device=1, pinned_host=True)
    write("pinned_host.pickle", snap, {"format": "dict", "consistent": True, "devices": [t.expected(), host]})

    # 10. The allocator simulator: one small program per rule, recorded under the default
    #     settings (so the self-check must reproduce it), with what other settings do to it worked
    #     out by hand in `simulator_fixtures` below.
    for name, snap, exp in simulator_fixtures(fr):
        write(name, snap, exp)

    # 11. C++ frames and one line that allocates through many stacks: a notebook cell line calls
    #     a layer three ways (three stacks, 8 MiB each), another line 4 MiB, and the autograd
    #     thread (its stack starts at libc's __clone) 2 MiB for a backward node. The Peak rows
    #     merge the cell line's three stacks into one row of 24 MiB; SQL rows name the autograd
    #     stack by its backward node, not by __clone.
    snap, exp = peak_rows_fixture()
    write("peak_rows.pickle", snap, exp)

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1, sort_keys=True)
    print(f"wrote {len(EXPECTED)} fixtures to {os.path.normpath(OUT)}")


def peak_rows_fixture():
    cell = frame("/work/nb/cell.py", 21, "<module>")
    other = frame("/work/nb/cell.py", 30, "<module>")
    lin = frame(f"{TORCH}/nn/modules/linear.py", 125, "forward")
    conv = frame(f"{TORCH}/nn/modules/conv.py", 549, "forward")
    act = frame(f"{TORCH}/nn/functional.py", 1704, "relu")
    cpp = lambda name: frame("??", 0, name)
    alloc = cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)")
    autograd = [
        alloc,
        cpp("at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>)"),
        cpp("torch::autograd::generated::DivBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
        cpp("torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
        cpp("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*)"),
        cpp("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
        cpp("torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)"),
        frame("thread48.o", 0, "execute_native_thread_routine"),
        cpp("pthread_condattr_setpshared"),
        cpp("__clone"),
    ]
    stacks = [
        ([alloc, lin, cell], 8 * MIB),
        ([alloc, conv, cell], 8 * MIB),
        ([alloc, act, cell], 8 * MIB),
        ([alloc, lin, other], 4 * MIB),
        (autograd, 2 * MIB),
    ]
    t = Trace(0)
    base = 0x7F0000000000
    t.segment_alloc(base, 32 * MIB, "large")
    at = base
    for frames, size in stacks:
        t.malloc(at, size, size, frames)
        at += size
    snap = {"segments": t.dump_segments(), "device_traces": [t.events]}
    rows = {"site_rows": 3, "site_first_bytes": 24 * MIB, "site_first_stacks": 3, "stack_rows": 5, "live_bytes": 30 * MIB,
            "autograd_label_has": "DivBackward0", "autograd_stack_starts": "??:0 __clone"}
    return snap, {"format": "dict", "consistent": True, "devices": [t.expected()], "peak_rows": rows}


DEFAULT_SETTINGS = {
    "PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False, "max_split_size": -1,
    "garbage_collection_threshold": 0.0, "release_lock_on_cudamalloc": False,
    "roundup_power2_divisions": {str(1 << k): 0 for k in range(16)},
}


def simulator_fixtures(fr):
    """(name, snapshot, expected) per simulator rule. Each program is recorded as the default
    CUDA allocator runs it; `simulate` maps an alloc-conf to the figures that setting gives,
    reasoned step by step in the comments."""
    st = fr.stack("step", "train", "main")
    A, B, C = 0x7F1000000000, 0x7F2000000000, 0x7F3000000000
    out = []

    def case(name, t, simulate, **extra):
        """A program recorded under the defaults, with its figures per alloc-conf."""
        snap = {"segments": t.dump_segments(), "device_traces": [t.events], "allocator_settings": DEFAULT_SETTINGS}
        out.append((name, snap, dict({"format": "dict", "consistent": True, "devices": [t.expected()], "simulate": simulate}, **extra)))

    # Oversize blocks and max_split_size_mb. Defaults: 100 MiB is cached after its free; 60 MiB
    # and then 30 MiB are split from it: one segment, 100 MiB reserved.
    # max_split_size_mb:50: 60 MiB is oversize and may not take a block ≥ 60 + 20 MiB, so it gets
    # a 60 MiB segment; 30 MiB is under the limit and may not take a block ≥ 50 MiB (the cached
    # 100 MiB), so it gets a 30 MiB segment: 190 MiB reserved, 3 segments.
    # max_split_size_mb:128: no block reaches 128 MiB: as recorded.
    t = Trace(0)
    t.segment_alloc(A, 100 * MIB, "large", st)
    t.malloc(A, 100 * MIB, 100 * MIB, st)
    t.free(A)
    t.malloc(A, 60 * MIB, 60 * MIB, st)
    t.malloc(A + 60 * MIB, 30 * MIB, 30 * MIB, st)
    t.free(A)
    t.free(A + 60 * MIB)
    case("sim_oversize.pickle", t, simulate={
        "": {"reserved_peak": 100 * MIB, "segment_allocs": 1, "segment_frees": 0, "oom": "unknown capacity"},
        "max_split_size_mb:50": {"reserved_peak": 190 * MIB, "segment_allocs": 3, "segment_frees": 0, "allocated_peak": 100 * MIB},
        "max_split_size_mb:128": {"reserved_peak": 100 * MIB, "segment_allocs": 1, "segment_frees": 0},
    })

    # roundup_power2_divisions. 17 requests of 1,100,000 B: 512-rounded to 1,100,288 B they all
    # fit one 20 MiB segment (17 × 1,100,288 = 18,704,896 B). With 4 divisions per power of two
    # they round to 1 MiB + 256 KiB = 1,310,720 B: 16 fill the segment exactly, the 17th needs a
    # second 20 MiB segment; allocated peak 17 × 1,310,720 = 22,282,240 B.
    t = Trace(0)
    t.segment_alloc(A, 20 * MIB, "large", st)
    req, block = 1_100_000, r512(1_100_000)
    for k in range(17):
        t.malloc(A + k * block, req, block, st)
    for k in range(17):
        t.free(A + k * block)
    case("sim_rounding.pickle", t, simulate={
        "": {"reserved_peak": 20 * MIB, "segment_allocs": 1, "allocated_peak": 17 * block},
        "roundup_power2_divisions:4": {"reserved_peak": 40 * MIB, "segment_allocs": 2, "allocated_peak": 17 * 1_310_720},
    })

    # garbage_collection_threshold against a 100 MiB device. Defaults: 40 MiB cached, then 60 MiB
    # in a new segment: 100 MiB reserved. With a threshold of 0.3 (30 MiB), the allocation that
    # finds no cached block first collects: 40 MiB reserved > 30 MiB, the cached 40 MiB segment is
    # at least as old as the average, so it is freed: 60 MiB reserved at the peak, one cudaFree.
    t = Trace(0)
    t.segment_alloc(A, 40 * MIB, "large", st)
    t.malloc(A, 40 * MIB, 40 * MIB, st)
    t.free(A)
    t.segment_alloc(B, 60 * MIB, "large", st)
    t.malloc(B, 60 * MIB, 60 * MIB, st)
    t.free(B)
    case("sim_gc.pickle", t, device_memory=100 * MIB, simulate={
        "": {"reserved_peak": 100 * MIB, "segment_allocs": 2, "segment_frees": 0, "oom": None},
        "garbage_collection_threshold:0.3": {"reserved_peak": 60 * MIB, "segment_allocs": 2, "segment_frees": 1, "oom": None},
    })

    # The OOM path on a 100 MiB device (the capacity comes from the recorded OOM: 80 MiB reserved
    # + 20 MiB free). 60 MiB is cached; 80 MiB does not fit beside it, so the allocator frees the
    # cached segment and retries: it succeeds (a segment_free, then a segment_alloc). 40 MiB more
    # cannot fit at all: nothing is cached, the retry fails, OOM.
    # expandable_segments:True: the 80 MiB maps one 20 MiB page after the cached 60 MiB (80 MiB
    # reserved, no release); the 40 MiB still fails: the OOM happens anyway.
    t = Trace(0)
    t.segment_alloc(A, 60 * MIB, "large", st)
    t.malloc(A, 60 * MIB, 60 * MIB, st)
    t.free(A)
    t.segment_free(A)
    t.segment_alloc(B, 80 * MIB, "large", st)
    t.malloc(B, 80 * MIB, 80 * MIB, st)
    t.oom(40 * MIB, 20 * MIB)
    case("sim_oom_retry.pickle", t, simulate={
        "": {"reserved_peak": 80 * MIB, "segment_allocs": 2, "segment_frees": 1, "oom": len(t.events) - 1, "recorded_ooms_avoided": []},
        "expandable_segments:True": {"reserved_peak": 80 * MIB, "segment_allocs": 2, "segment_frees": 0, "oom": len(t.events) - 1, "recorded_ooms_avoided": []},
    })

    def split_cache_oom(cached, request, device_free):
        """`cached` MiB cached in one segment, split into two halves, the first freed; then an
        OOM for `request` MiB with `device_free` MiB free on the device. The trace and the OOM's
        index."""
        t = Trace(0)
        t.segment_alloc(A, cached * MIB, "large", st)
        t.malloc(A, cached * MIB, cached * MIB, st)
        t.free(A)
        t.malloc(A, cached // 2 * MIB, cached // 2 * MIB, st)
        t.malloc(A + cached // 2 * MIB, cached // 2 * MIB, cached // 2 * MIB, st)
        t.free(A)
        t.oom(request * MIB, device_free * MIB)
        return t, len(t.events) - 1

    # An OOM that expandable segments avoid (90 MiB device: 60 MiB reserved + 30 MiB free at the
    # OOM). 60 MiB is cached, then split into two 30 MiB blocks; the first is freed. 35 MiB fits
    # neither the free 30 MiB nor beside the split segment (60 + 36 > 90), which cannot be
    # released while the second block lives: OOM.
    # expandable_segments:True: the free 30 MiB's whole first page (20 MiB) is unmapped on the OOM
    # path and 40 MiB mapped after the live block: 80 MiB reserved, the request is served.
    t, oom_at = split_cache_oom(60, 35, 30)
    case("sim_oom_avoided.pickle", t, simulate={
        "": {"reserved_peak": 60 * MIB, "segment_allocs": 1, "oom": oom_at, "recorded_ooms_avoided": []},
        "expandable_segments:True": {"reserved_peak": 80 * MIB, "segment_allocs": 2, "segment_frees": 1, "oom": None, "recorded_ooms_avoided": [oom_at]},
    })
    # The same at the device's limit (630 MiB: 600 MiB reserved + 30 MiB free at the OOM): 300
    # of 600 MiB cached is free in one piece, 320 MiB fits neither it nor beside the segment.
    # expandable_segments:True: the free 300 MiB (15 whole pages) is unmapped on the OOM path and
    # 320 MiB mapped after the live block: 620 MiB reserved, the request served, with 10 MiB left
    # on the device: the next request like it would fail (the finding says exhaustion).
    t, oom_at = split_cache_oom(600, 320, 30)
    case("oom_at_the_limit.pickle", t, simulate={
        "": {"reserved_peak": 600 * MIB, "segment_allocs": 1, "oom": oom_at, "recorded_ooms_avoided": []},
        "expandable_segments:True": {"reserved_peak": 620 * MIB, "segment_allocs": 2, "segment_frees": 1, "oom": None, "recorded_ooms_avoided": [oom_at]},
    })
    # A private pool (a CUDA graph's, segment_pool_id (1, 0)) is kept as recorded: its 40 MiB
    # segment and 30 MiB block follow the recording under every setting, and only the default
    # pool is simulated. Defaults: 5 MiB then 12 MiB in one 20 MiB segment: 60 MiB reserved,
    # 42 MiB allocated at most. expandable_segments:True: one 20 MiB page instead of the segment,
    # the same 60 MiB. Simulated in the default pool, the 30 MiB would have needed a segment of its
    # own there (30 MiB, not the recorded 40): the self-check would fail.
    t = Trace(0)
    t.segment_alloc(A, 20 * MIB, "large", st)
    t.malloc(A, 5 * MIB, 5 * MIB, st)
    graph = fr.stack("graph_capture", "train", "main")
    t.segment_alloc(C, 40 * MIB, "large", graph, pool_id=(1, 0))
    t.malloc(C, 30 * MIB, 30 * MIB, graph)
    t.free(A)
    t.malloc(A, 12 * MIB, 12 * MIB, st)
    case("sim_private_pool.pickle", t, simulate={
        "": {"reserved_peak": 60 * MIB, "allocated_peak": 42 * MIB, "segment_allocs": 1},
        "expandable_segments:True": {"reserved_peak": 60 * MIB, "allocated_peak": 42 * MIB, "segment_allocs": 1},
    })
    return out


def typetag_pickle(t):
    """Pickle through a stand-in of torch.jit._pickle.restore_type_tag, protocol 2 with BINPUT."""
    mod = types.ModuleType("torch.jit._pickle")

    def restore_type_tag(value, type_str):
        return value

    restore_type_tag.__module__ = "torch.jit._pickle"
    restore_type_tag.__qualname__ = "restore_type_tag"
    mod.restore_type_tag = restore_type_tag
    for name in ("torch", "torch.jit"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torch.jit._pickle"] = mod

    class Tagged:
        def __init__(self, v, ty):
            self.v, self.ty = v, ty

        def __reduce__(self):
            return (restore_type_tag, (self.v, self.ty))

    def tag(v):
        if isinstance(v, dict):
            return Tagged({k: tag(x) for k, x in v.items()}, "Dict[str, Any]")
        if isinstance(v, list):
            return Tagged([tag(x) for x in v], "List[Any]")
        return v

    snap = {"segments": t.dump_segments(), "device_traces": [t.events]}
    return pickle.dumps(tag(snap), protocol=2)


if __name__ == "__main__":
    main()
