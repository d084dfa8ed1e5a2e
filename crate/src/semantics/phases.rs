//! Phases of a run: which events belong to the forward pass, the backward pass, the optimizer
//! step and data loading, from the frames of each event's stack and from the
//! `external_annotations` ranges (record_function) the program recorded.

use super::rules::Phase;
use crate::frames::{self, Kind};
use crate::model::{Annotation, DeviceTrace, Frame, Interner};
use serde::Serialize;

/// A run of consecutive events in one phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PhaseRun {
    pub phase: Phase,
    pub first: u32,
    pub last: u32,
}

/// What a named range is, for grouping and for hiding framework noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RangeGroup {
    /// `ProfilerStep#N`.
    Step,
    /// `Optimizer.step#…`, `Optimizer.zero_grad#…`.
    Optimizer,
    /// DataLoader `__next__`.
    Data,
    /// dynamo / inductor / AOT ranges: many, internal, hidden by default.
    Framework,
    /// A compiled region (`compile_context` of the events).
    Compiled,
    /// The program's own `record_function` ranges.
    User,
}

/// A named range of events: a START/END pair of `external_annotations`, or a run of events with
/// the same `compile_context`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct NamedRange {
    pub name: String,
    pub group: RangeGroup,
    /// First and last event inside the range; None when the range holds no event (or the
    /// events carry no times to place it).
    pub start_event: Option<u32>,
    pub end_event: Option<u32>,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    /// A START without its END: the range runs to the end of the window.
    pub open: bool,
    /// The text `name` comes from, as the snapshot holds it (one allocation however many
    /// ranges and events name it): a compiled region's compile_context, or an annotation's name
    /// when it is longer than shown.
    #[serde(skip)]
    pub whole: Option<std::sync::Arc<str>>,
}

pub struct DevicePhases {
    /// The phase of every event (`Phase as u8`).
    pub of_event: Vec<u8>,
    pub runs: Vec<PhaseRun>,
    pub ranges: Vec<NamedRange>,
}

impl DevicePhases {
    pub fn phase(&self, event: u32) -> Phase {
        self.of_event.get(event as usize).map_or(Phase::Unknown, |&p| Phase::ALL[p as usize])
    }

    /// Index of the run holding `event`.
    pub fn run_of(&self, event: u32) -> Option<usize> {
        let i = self.runs.partition_point(|r| r.last < event);
        (i < self.runs.len() && self.runs[i].first <= event).then_some(i)
    }

    pub fn has(&self, phase: Phase) -> bool {
        self.runs.iter().any(|r| r.phase == phase)
    }
}

const BACKWARD: u8 = 1;
const OPTIMIZER: u8 = 2;
const DATA: u8 = 4;
const ANY_FRAME: u8 = 8;
const FORWARD: u8 = 16;
const SETUP: u8 = 32;
/// An optimizer loading its state (`Optimizer.load_state_dict` and what it calls): set-up,
/// whatever optimizer frames it runs.
const OPTIMIZER_LOADING: u8 = 64;
/// A closure an optimizer calls back (`optimizer.step(closure)`: PyTorch Lightning's automatic
/// optimization runs the training step in one, LBFGS the loss): inside an optimizer's step, what
/// it allocates outside a module's forward (the loss, logged values) is the forward pass's.
const CLOSURE: u8 = 128;

/// Functions of `torch.nn` that build, move or load a module's parameters and buffers.
const MODULE_SETUP: [&str; 16] = [
    "__init__",
    "__new__",
    "reset_parameters",
    "_apply",
    "to",
    "cuda",
    "npu",
    "to_empty",
    "convert",
    "load_state_dict",
    "_load_from_state_dict",
    "half",
    "float",
    "bfloat16",
    "register_buffer",
    "register_parameter",
];

/// Functions that load weights or checkpoints, in any library.
const LOADING: [&str; 6] = ["from_pretrained", "load_checkpoint", "load_state_dict", "load_model", "load_weights", "safe_open"];

/// What one frame says about the phase it runs in.
fn frame_marks(f: &Frame) -> u8 {
    let path = frames::posix_path(&f.filename);
    let (file, name) = (path.as_ref(), f.name.as_str());
    let kind = frames::kind(f);
    let mut m = ANY_FRAME;
    let autograd_entry =
        (file.ends_with("torch/autograd/__init__.py") || file.ends_with("torch/_tensor.py") || file.ends_with("torch/autograd/graph.py"))
            && matches!(name, "backward" | "_engine_run_backward" | "grad");
    // Activation checkpointing recomputes a forward pass inside backward: from the autograd
    // node's unpack hook (`use_reentrant=False`) or `CheckpointFunction.backward` (reentrant).
    // Those frames are backward's, whatever forward frames the recomputation adds under them.
    let recomputation = file.ends_with("torch/utils/checkpoint.py")
        && matches!(name, "backward" | "unpack_hook" | "unpack_hook_with_error_cb" | "recompute_fn");
    if kind == Kind::Autograd
        || autograd_entry
        || recomputation
        || name.contains("torch::autograd::Engine::")
        || name.contains("torch::autograd::python::PythonEngine::")
        || name.contains("AccumulateGrad")
    {
        m |= BACKWARD;
    }
    // torch.optim is the step or zero_grad, but for an optimizer's constructor and its loading
    // of a checkpoint (set-up), its schedulers, and SWA's `update_bn` (a forward pass over the
    // data to recompute batch-norm statistics) and its averaged model's forward.
    let swa_pass = file.ends_with("torch/optim/swa_utils.py") && matches!(name, "update_bn" | "forward");
    let torch_optim = file.contains("torch/optim/") && !file.ends_with("lr_scheduler.py") && !swa_pass;
    // `model.zero_grad()` clears the gradients as `optimizer.zero_grad()` does (Hugging Face's
    // Trainer calls it after each step).
    let module_zero_grad = file.ends_with("torch/nn/modules/module.py") && name == "zero_grad";
    if (torch_optim && name != "__init__") || module_zero_grad {
        m |= OPTIMIZER;
    }
    if torch_optim && name == "load_state_dict" {
        m |= OPTIMIZER_LOADING;
    }
    if file.contains("torch/utils/data/") {
        m |= DATA;
    }
    // torch.optim's convention names it `closure`; Lightning's loop calls it through `__call__`
    // and `_training_step`.
    let lightning_loop = file.contains("lightning/pytorch/loops/optimization/") || file.contains("pytorch_lightning/loops/optimization/");
    if (name == "closure" && !file.contains("torch/")) || (lightning_loop && matches!(name, "closure" | "__call__" | "_training_step")) {
        m |= CLOSURE;
    }
    let python = kind.is_python();
    if python && runs_in_backward(name) {
        m |= BACKWARD;
    }
    if runs_module(f) {
        m |= FORWARD;
    }
    let torch_nn = file.contains("torch/nn/modules/") || file.ends_with("torch/nn/parameter.py") || file.ends_with("torch/nn/init.py");
    // A constructor outside any forward pass: the program building its modules, optimizer or
    // other state (a forward frame outranks it: objects built inside forward are forward's).
    if python && (name == "__init__" || (torch_nn && MODULE_SETUP.contains(&name)) || LOADING.contains(&name)) {
        m |= SETUP;
    }
    m
}

/// A module's forward or its call: a Python `forward` (outside torch's private packages: they
/// name their compiled functions' entry `forward` too, and a function compiled on its own is no
/// module's forward pass; a compiled module's forward still has the module's call frames) or
/// `Module._call_impl`. Category rules with `skip_wrappers` read it too.
pub fn runs_module(f: &Frame) -> bool {
    if !frames::kind(f).is_python() {
        return false;
    }
    let path = frames::posix_path(&f.filename);
    let (file, name) = (path.as_ref(), f.name.as_str());
    let module_call = file.ends_with("torch/nn/modules/module.py") && matches!(name, "_call_impl" | "_wrapped_call_impl" | "__call__");
    (name == "forward" && !file.contains("torch/_")) || module_call
}

/// A hook the autograd engine runs during backward, by its name: FSDP's pre- and post-backward
/// hooks and final callback (`_pre_backward_hook`, `_post_backward_hook`, `pre_backward`,
/// `post_backward`, `_post_backward_final_callback`), a module's full backward hook
/// (`*backward_hook`). On the engine's thread a Python-only stack holds no other frame that
/// names backward. Registering a hook (`_register_pre_backward_hooks`) runs in forward, and so
/// do DeepSpeed ZeRO-3's `_pre_backward_module_hook` / `_post_backward_module_hook` (forward
/// hooks that set backward ones up).
fn runs_in_backward(name: &str) -> bool {
    let bare = name.trim_start_matches('_');
    let bare = bare.strip_prefix("root_").unwrap_or(bare);
    !name.contains("register")
        && !name.ends_with("_module_hook")
        && (bare.starts_with("pre_backward") || bare.starts_with("post_backward") || name.ends_with("backward_hook"))
}

/// Per frame: 1 where it names a forward or backward pass, 2 where it names an optimizer step
/// (`frames::loop_lines` reads what runs inside a line).
pub fn frame_passes(interner: &Interner) -> Vec<u8> {
    interner
        .frames
        .iter()
        .map(|f| {
            let m = frame_marks(f);
            u8::from(m & (FORWARD | BACKWARD) != 0) | (u8::from(m & OPTIMIZER != 0) * 2)
        })
        .collect()
}

/// The phase a stack's combined frame marks name: backward, optimizer and data outrank a forward
/// frame, which outranks set-up; frames that name none of them leave the phase unknown.
fn phase_of_marks(m: u8) -> Option<Phase> {
    match m {
        0 => None,
        m if m & BACKWARD != 0 => Some(Phase::Backward),
        m if m & OPTIMIZER_LOADING != 0 => Some(Phase::Setup),
        m if m & OPTIMIZER != 0 => Some(Phase::Optimizer),
        m if m & DATA != 0 => Some(Phase::Data),
        m if m & FORWARD != 0 => Some(Phase::Forward),
        m if m & SETUP != 0 => Some(Phase::Setup),
        _ => Some(Phase::Unknown),
    }
}

/// What a frame is to [`called_by_autograd`]: autograd's `Function` machinery, a function named
/// as a custom Function's backward, or any other Python frame (native frames are skipped).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CustomFunctionRole {
    Native,
    /// `apply` in torch/autograd/function.py: `BackwardCFunction.apply` (the engine's entry) or
    /// `Function.apply` (the forward's).
    Apply,
    /// Another frame of torch/autograd/function.py (`once_differentiable`'s wrapper).
    Machinery,
    /// `backward` or `vjp`: what `BackwardCFunction.apply` calls.
    Backward,
    OtherPython,
}

fn custom_function_role(f: &Frame) -> CustomFunctionRole {
    if !frames::kind(f).is_python() {
        return CustomFunctionRole::Native;
    }
    let path = frames::posix_path(&f.filename);
    if path.ends_with("torch/autograd/function.py") {
        return if f.name == "apply" { CustomFunctionRole::Apply } else { CustomFunctionRole::Machinery };
    }
    if matches!(f.name.as_str(), "backward" | "vjp") {
        CustomFunctionRole::Backward
    } else {
        CustomFunctionRole::OtherPython
    }
}

/// A custom autograd Function's backward (a fused kernel's, a compiled graph's
/// `CompiledFunction`): the engine runs it on its own thread through `BackwardCFunction.apply`,
/// which calls the class's `backward` (or `vjp`), so a Python-only stack holds no frame of
/// `loss.backward()`. The forward comes through `Function.apply` of the same file, which calls
/// `forward` instead. `stack` is innermost first.
fn called_by_autograd(stack: &[u32], roles: &[CustomFunctionRole]) -> bool {
    let mut callee = CustomFunctionRole::Native;
    for &f in stack {
        match roles.get(f as usize).copied().unwrap_or(CustomFunctionRole::Native) {
            CustomFunctionRole::Apply if callee == CustomFunctionRole::Backward => return true,
            CustomFunctionRole::Native | CustomFunctionRole::Machinery => {}
            role => callee = role,
        }
    }
    false
}

/// Where a Python stack can start: the program's entry (a module's body, `runpy`, a thread's
/// `_bootstrap`) or any other function, which native code called on a thread Python did not
/// start. The autograd engine's threads call a backward pass's Python hooks (FSDP's and
/// DeepSpeed's gradient hooks, a module's backward hook, a custom Function's backward): their
/// Python-only stacks start at the hook, with nothing else in them that names backward.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Root {
    Native,
    Entry,
    Other,
}

fn root_of(f: &Frame) -> Root {
    if !frames::kind(f).is_python() {
        return Root::Native;
    }
    let path = frames::posix_path(&f.filename);
    let entry = f.name == "<module>"
        || path.ends_with("runpy.py")
        || path.ends_with("<frozen runpy>")
        || matches!(f.name.as_str(), "_bootstrap" | "_bootstrap_inner");
    if entry {
        Root::Entry
    } else {
        Root::Other
    }
}

/// The outermost Python frame of `stack` (innermost first) and where it starts, from `roots`
/// (each frame's [`root_of`]).
fn outermost_root(stack: &[u32], roots: &[Root]) -> Option<Root> {
    stack.iter().rev().map(|&f| roots.get(f as usize).copied().unwrap_or(Root::Native)).find(|&r| r != Root::Native)
}

/// Whether some stack reaches the program's entry (`roots`: each frame's [`root_of`]): the
/// recording keeps whole Python stacks, so a stack that starts elsewhere, or an event with none,
/// ran on a thread Python did not start.
fn whole_with(interner: &Interner, roots: &[Root]) -> bool {
    interner.stacks.iter().any(|st| outermost_root(st, roots) == Some(Root::Entry))
}

/// [`whole_with`] of the snapshot's frames.
pub fn stacks_are_whole(interner: &Interner) -> bool {
    let roots: Vec<Root> = interner.frames.iter().map(root_of).collect();
    whole_with(interner, &roots)
}

/// The phase each stack's frames name (None for an empty stack).
pub fn stack_phases(interner: &Interner) -> Vec<Option<Phase>> {
    let marks: Vec<u8> = interner.frames.iter().map(frame_marks).collect();
    let roles: Vec<CustomFunctionRole> = interner.frames.iter().map(custom_function_role).collect();
    let applies = |st: &[u32]| st.iter().any(|&f| roles.get(f as usize) == Some(&CustomFunctionRole::Apply));
    let roots: Vec<Root> = interner.frames.iter().map(root_of).collect();
    let outermost = |st: &[u32]| outermost_root(st, &roots);
    let stack_marks: Vec<u8> = interner
        .stacks
        .iter()
        .map(|st| {
            let m = st.iter().fold(0u8, |m, &f| m | marks.get(f as usize).copied().unwrap_or(0));
            if m & BACKWARD == 0 && applies(st) && called_by_autograd(st, &roles) {
                m | BACKWARD
            } else {
                m
            }
        })
        .collect();
    // A Python stack that does not start at the program's entry was called from native code, on a
    // thread Python did not start: in a program with a backward pass, the autograd engine's. Only
    // where some stack reaches the entry are the stacks whole enough to tell.
    let whole_stacks = whole_with(interner, &roots);
    let has_backward = stack_marks.iter().any(|m| m & BACKWARD != 0);
    interner
        .stacks
        .iter()
        .zip(stack_marks)
        .map(|(st, mut m)| {
            // Frames that name another phase keep it (an RPC worker's forward, a data thread).
            if m & !ANY_FRAME == 0 && whole_stacks && has_backward && outermost(st) == Some(Root::Other) {
                m |= BACKWARD;
            }
            if m & OPTIMIZER != 0 && m & (FORWARD | BACKWARD | CLOSURE) != 0 {
                m &= innermost_of_optimizer_and_passes(st, &marks);
                if m & CLOSURE != 0 {
                    m |= FORWARD;
                }
            }
            // An optimizer stepped from a gradient hook (a post-accumulate-grad hook: the
            // optimizer fused into the backward pass) runs on autograd's thread, amid the
            // backward pass's frameless events: it is that pass's work. As the optimizer's phase
            // it split the pass, and the frameless events after it took the optimizer's phase.
            if m & (OPTIMIZER | OPTIMIZER_LOADING | FORWARD | BACKWARD) == OPTIMIZER
                && whole_stacks
                && has_backward
                && outermost(st) == Some(Root::Other)
            {
                m |= BACKWARD;
            }
            phase_of_marks(m)
        })
        .collect()
}

/// Which marks to keep when a stack has an optimizer's frames and a forward or backward pass's
/// (or a closure's): the innermost of them ran the allocation. `optimizer.step(closure)` runs the
/// closure's forward and backward passes inside the step (PyTorch Lightning's automatic
/// optimization, LBFGS), and an optimizer stepped from a gradient hook runs inside backward. A
/// forward pass inside backward (checkpointing's recomputation) stays backward's: only the
/// optimizer's mark is weighed here.
fn innermost_of_optimizer_and_passes(stack: &[u32], marks: &[u8]) -> u8 {
    let passes = FORWARD | BACKWARD | CLOSURE;
    let innermost = stack.iter().map(|&f| marks.get(f as usize).copied().unwrap_or(0)).find(|m| m & (OPTIMIZER | passes) != 0);
    match innermost {
        Some(m) if m & OPTIMIZER != 0 && m & passes == 0 => !passes,
        _ => !OPTIMIZER,
    }
}

/// Phases and named ranges of one device's trace.
/// `whole_stacks`: [`stacks_are_whole`] of the snapshot.
pub fn device_phases(
    trace: Option<&DeviceTrace>,
    device: i64,
    annotations: &[Annotation],
    by_stack: &[Option<Phase>],
    whole_stacks: bool,
) -> DevicePhases {
    let Some(trace) = trace else {
        return DevicePhases { of_event: Vec::new(), runs: Vec::new(), ranges: Vec::new() };
    };
    let mut ranges = annotation_ranges_of(trace, annotations, device);
    ranges.extend(compiled_ranges(trace));
    ranges.sort_by_key(|r| (r.start_event.unwrap_or(u32::MAX), r.start_us));

    // One byte an event, filled in place (a `Vec<Option<Phase>>` beside the result, and an 8-byte
    // time per event, made the phases the largest transient of `analyze --mode peak`).
    let mut of_event: Vec<u8> = trace
        .events
        .iter()
        .map(|e| e.stack().and_then(|s| by_stack.get(s as usize).copied().flatten()).map_or(NO_PHASE, |p| p as u8))
        .collect();
    for r in &ranges {
        let phase = match r.group {
            RangeGroup::Optimizer => Phase::Optimizer,
            RangeGroup::Data => Phase::Data,
            _ => continue,
        };
        if let (Some(a), Some(b)) = (r.start_event, r.end_event) {
            // A pass's own frames outrank the range: `optimizer.step(closure)` runs the
            // closure's forward and backward passes inside the step's range.
            for k in &mut of_event[a as usize..=b as usize] {
                if *k != Phase::Backward as u8 && *k != Phase::Forward as u8 {
                    *k = phase as u8;
                }
            }
        }
    }
    if whole_stacks {
        unseeded_backward(&mut of_event, trace);
    }
    fill_gaps(&mut of_event);
    let mut runs = runs_of(&of_event);
    if loss_is_forward(&mut of_event, &runs) {
        runs = runs_of(&of_event);
    }
    DevicePhases { of_event, runs, ranges }
}

/// Code that runs between a model's forward pass and the backward pass right after it (the loss
/// computed in the script: `F.cross_entropy(logits.float(), y)`) builds the graph backward walks:
/// it is forward's. Only an unknown run with a forward run just before it and a backward run just
/// after counts: code before a forward pass (a batch made for the next step after a validation
/// pass) stays what it is. Returns whether any event changed.
fn loss_is_forward(of_event: &mut [u8], runs: &[PhaseRun]) -> bool {
    let mut changed = false;
    for w in runs.windows(3) {
        if w[0].phase == Phase::Forward && w[1].phase == Phase::Unknown && w[2].phase == Phase::Backward {
            of_event[w[1].first as usize..=w[1].last as usize].fill(Phase::Forward as u8);
            changed = true;
        }
    }
    changed
}

/// A phase not known yet, while [`device_phases`] fills them in.
const NO_PHASE: u8 = u8::MAX;

/// The ranges `annotations` mark on this device's events. The events' times, made monotone (a
/// missing or earlier time takes the latest seen) so ranges can be placed by binary search, are
/// built only when the device has annotations, and dropped before the phases are.
fn annotation_ranges_of(trace: &DeviceTrace, annotations: &[Annotation], device: i64) -> Vec<NamedRange> {
    if !annotations.iter().any(|a| a.device.is_none_or(|d| d == device)) {
        return Vec::new();
    }
    let mut times = Vec::with_capacity(trace.events.len());
    let mut latest = i64::MIN;
    let mut timed = false;
    for e in trace.events.iter() {
        if let Some(t) = e.time_us() {
            latest = latest.max(t);
            timed = true;
        }
        times.push(latest);
    }
    annotation_ranges(annotations, device, &times, timed)
}

/// Events without frames (backward on autograd's own thread carries none, frees often none)
/// take the phase of the last event before them that has one. Leading ones (the recording began
/// among them) take what the program's other frameless events before the same phase take (a
/// recording begun inside a backward pass: frameless events before Adam's step are backward's
/// everywhere else), or failing any, the phase of the first event after them.
fn fill_gaps(phases: &mut [u8]) {
    let Some(first) = phases.iter().position(|&p| p != NO_PHASE) else {
        phases.fill(Phase::Unknown as u8);
        return;
    };
    let mut current = phases[first];
    if first > 0 {
        current = like_leading_gap(&phases[first..]).unwrap_or(current);
    }
    for p in phases {
        if *p == NO_PHASE {
            *p = current;
        } else {
            current = *p;
        }
    }
}

/// Where the recording keeps whole Python stacks, an allocation without one ran on a thread
/// Python did not start: in a program with a forward pass and an optimizer, the autograd
/// engine's. A gap of
/// frameless events holding one, right after a forward or unknown event, is a backward pass whose
/// start named no backward frame: one given its output's gradient instead of a seed (a pipeline
/// stage's `run_backward` with the gradient received from the next stage) allocates nothing on
/// the main thread. Without this the pass took the phase of the forward or the receive before it.
fn unseeded_backward(phases: &mut [u8], trace: &DeviceTrace) {
    let forward = Phase::Forward as u8;
    // A program that trains: an optimizer's frames somewhere. Work that an inference program
    // runs on threads of its own (TorchScript's `fork` on the inter-op pool) has no stack either.
    if !phases.contains(&forward) || !phases.contains(&(Phase::Optimizer as u8)) {
        return;
    }
    let mut before = NO_PHASE;
    let mut i = 0;
    while i < phases.len() {
        if phases[i] != NO_PHASE {
            before = phases[i];
            i += 1;
            continue;
        }
        let end = phases[i..].iter().position(|&p| p != NO_PHASE).map_or(phases.len(), |n| i + n);
        let allocates = (i..end).any(|e| trace.events[e].action() == crate::model::Action::Alloc);
        if allocates && (before == forward || before == Phase::Unknown as u8) {
            phases[i..end].fill(Phase::Backward as u8);
        }
        i = end;
    }
}

/// The phase most of the gaps of frameless events in `phases` (which starts with a known phase)
/// that end where that known phase resumes take (the phase before each); ties keep that phase.
fn like_leading_gap(phases: &[u8]) -> Option<u8> {
    let next = phases[0];
    let mut votes = [0usize; Phase::ALL.len()];
    let (mut before, mut in_gap) = (next, false);
    for &p in phases {
        match (p == NO_PHASE, in_gap) {
            (true, _) => in_gap = true,
            (false, true) => {
                if p == next {
                    votes[before as usize] += 1;
                }
                (before, in_gap) = (p, false);
            }
            (false, false) => before = p,
        }
    }
    let most = *votes.iter().max()?;
    (most > votes[next as usize]).then(|| votes.iter().position(|&v| v == most).expect("a maximum") as u8)
}

fn runs_of(of_event: &[u8]) -> Vec<PhaseRun> {
    let mut runs: Vec<PhaseRun> = Vec::new();
    for (i, &p) in of_event.iter().enumerate() {
        let phase = Phase::ALL[p as usize];
        match runs.last_mut() {
            Some(r) if r.phase == phase => r.last = i as u32,
            _ => runs.push(PhaseRun { phase, first: i as u32, last: i as u32 }),
        }
    }
    runs
}

pub fn range_group(name: &str) -> RangeGroup {
    const FRAMEWORK: [&str; 9] = [
        "dynamo",
        "inductor",
        "aot_",
        "AOTDispatcher",
        "CompiledFunction",
        "Torch-Compiled Region",
        "compile_fx",
        "TorchDynamo",
        "cudagraph",
    ];
    if name.starts_with("ProfilerStep#") {
        RangeGroup::Step
    } else if name.starts_with("Optimizer.") {
        RangeGroup::Optimizer
    } else if name.contains("DataLoader") {
        RangeGroup::Data
    } else if name.starts_with("## ") || FRAMEWORK.iter().any(|f| name.contains(f)) {
        RangeGroup::Framework
    } else {
        RangeGroup::User
    }
}

/// START/END pairs of one device (annotations without a device apply to every device), matched
/// by name innermost first.
fn annotation_ranges(annotations: &[Annotation], device: i64, times: &[i64], timed: bool) -> Vec<NamedRange> {
    type Whole = Option<std::sync::Arc<str>>;
    let mut open: Vec<Option<(String, Whole, Option<i64>)>> = Vec::new();
    let mut out = Vec::new();
    let place = |(name, whole, start): (String, Whole, Option<i64>), end: Option<i64>, is_open: bool| {
        let first = start.filter(|_| timed).map(|t| times.partition_point(|&x| x < t) as u32);
        let last = match end {
            _ if !timed => None,
            Some(t) => times.partition_point(|&x| x <= t).checked_sub(1).map(|i| i as u32),
            None => times.len().checked_sub(1).map(|i| i as u32),
        };
        let (start_event, end_event) = match (first, last) {
            (Some(a), Some(b)) if a <= b && (a as usize) < times.len() => (Some(a), Some(b)),
            _ => (None, None),
        };
        NamedRange { group: range_group(&name), name, start_event, end_event, start_us: start, end_us: end, open: is_open, whole }
    };
    // The open STARTs in order, and for each name the positions of its open ones (innermost
    // last): an END finds its START at once, however many never close (no quadratic scan).
    let mut by_name: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for a in annotations.iter().filter(|a| a.device.is_none_or(|d| d == device)) {
        match a.stage.as_str() {
            "START" => {
                by_name.entry(a.name.as_str()).or_default().push(open.len());
                open.push(Some((a.name.clone(), a.whole_name.as_ref().map(|w| w.text().clone()), a.time_us)));
            }
            "END" => {
                if let Some(k) = by_name.get_mut(a.name.as_str()).and_then(Vec::pop) {
                    out.push(place(open[k].take().expect("an open START"), a.time_us, false));
                }
            }
            _ => {}
        }
    }
    for started in open.into_iter().flatten() {
        out.push(place(started, None, true));
    }
    out
}

/// Runs of consecutive events with the same non-empty `compile_context`.
fn compiled_ranges(trace: &DeviceTrace) -> Vec<NamedRange> {
    let mut out: Vec<NamedRange> = Vec::new();
    let mut last_ctx: Option<&str> = None;
    for (i, e) in trace.events.iter().enumerate() {
        let whole = trace.extra(e).and_then(|x| x.compile_context.as_ref());
        let ctx = whole.map(|c| &**c);
        match (ctx, out.last_mut()) {
            (Some(c), Some(r)) if last_ctx == Some(c) && r.end_event == Some(i as u32 - 1) => {
                r.end_event = Some(i as u32);
                r.end_us = e.time_us().or(r.end_us);
            }
            (Some(c), _) => out.push(NamedRange {
                name: c.to_string(),
                group: RangeGroup::Compiled,
                start_event: Some(i as u32),
                end_event: Some(i as u32),
                start_us: e.time_us(),
                end_us: e.time_us(),
                open: false,
                whole: whole.cloned(),
            }),
            _ => {}
        }
        last_ctx = ctx;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_take_the_phase_before_them() {
        let (f, b, o, none) = (Phase::Forward as u8, Phase::Backward as u8, Phase::Optimizer as u8, NO_PHASE);
        let names = |of: &[u8]| -> Vec<&str> { of.iter().map(|&p| Phase::ALL[p as usize].name()).collect() };
        let mut of = [none, f, f, b, none, none, f, none, o];
        fill_gaps(&mut of);
        // The leading gap: the one other gap before a forward pass follows backward.
        assert_eq!(names(&of), ["backward", "forward", "forward", "backward", "backward", "backward", "forward", "forward", "optimizer"]);
        let runs = runs_of(&of);
        assert_eq!(runs.len(), 5);
        assert_eq!((runs[2].first, runs[2].last), (3, 5));
        // A recording begun inside a backward pass: frameless events before Adam's step are
        // backward's elsewhere, so they are there too.
        let mut of = [none, none, o, f, b, none, o, f, b, none, o];
        fill_gaps(&mut of);
        assert_eq!(&names(&of)[..3], ["backward", "backward", "optimizer"]);
        // No other gap before the same phase (or as many of each kind): the phase after it.
        for mut of in [[none, f, f, o, none, b, b], [none, f, b, none, f, none, f]] {
            fill_gaps(&mut of);
            assert_eq!(names(&of)[0], "forward");
        }
        let mut of = [none, none];
        fill_gaps(&mut of);
        assert_eq!(names(&of), ["unknown", "unknown"]);
    }

    #[test]
    fn the_innermost_of_an_optimizer_and_a_pass_decides() {
        let f = |file: &str, name: &str| Frame { filename: file.into(), line: 1, name: name.into(), fx: None, whole: None };
        let step = [
            f("/x/site-packages/torch/optim/adam.py", "step"),
            f("/x/site-packages/torch/optim/optimizer.py", "wrapper"),
            f("/w/run.py", "main"),
        ];
        let model =
            [f("/w/model.py", "forward"), f("/x/site-packages/torch/nn/modules/module.py", "_call_impl"), f("/w/lit.py", "training_step")];
        let seed = [f("/x/site-packages/torch/autograd/__init__.py", "backward"), f("/x/site-packages/torch/_tensor.py", "backward")];
        let engine = [f("??", "torch::autograd::Engine::evaluate_function(...)"), f("??", "torch::autograd::Engine::thread_main(...)")];
        let init = f("/x/site-packages/torch/optim/adam.py", "_init_group");
        let recompute = [f("/x/site-packages/torch/utils/checkpoint.py", "unpack_hook")];
        let stacks: [Vec<Frame>; 5] = [
            // A closure's forward and backward inside optimizer.step (Lightning, LBFGS).
            [&model[..], &step[..]].concat(),
            [&seed[..], &step[..]].concat(),
            // An optimizer stepped from a gradient hook, inside backward (C++ frames recorded).
            [std::slice::from_ref(&init), &step[..2], &engine[..]].concat(),
            // Checkpointing's recomputation inside a closure's backward stays backward.
            [&model[..2], &recompute[..], &step[..]].concat(),
            // The step's own work.
            [std::slice::from_ref(&init), &step[..]].concat(),
        ];
        let mut interner = Interner::default();
        for st in &stacks {
            let ids: Vec<u32> = st.iter().map(|x| interner.frame(x.clone())).collect();
            interner.stack(&ids);
        }
        let want = [Phase::Forward, Phase::Backward, Phase::Optimizer, Phase::Backward, Phase::Optimizer];
        assert_eq!(stack_phases(&interner), want.map(Some));
    }

    #[test]
    fn code_between_forward_and_backward_is_forward() {
        let names = |of: &[u8]| of.iter().map(|&p| Phase::ALL[p as usize].name()).collect::<Vec<_>>().join(" ");
        let relabel = |phases: &[Phase]| {
            let mut of: Vec<u8> = phases.iter().map(|&p| p as u8).collect();
            let runs = runs_of(&of);
            loss_is_forward(&mut of, &runs);
            names(&of)
        };
        use Phase::{Backward as B, Forward as F, Optimizer as O, Unknown as U};
        // The loss in the script, between a forward pass and its backward.
        assert_eq!(relabel(&[U, F, U, U, B, U, O]), "unknown forward forward forward backward unknown optimizer");
        // Code before a forward pass (the next batch, after a validation pass) stays unknown; so
        // does code with no backward after it (inference) or another phase between.
        assert_eq!(relabel(&[F, U, F, U, B]), "forward unknown forward forward backward");
        assert_eq!(relabel(&[F, U, F, U]), "forward unknown forward unknown");
        assert_eq!(relabel(&[F, U, O, B]), "forward unknown optimizer backward");
    }

    #[test]
    fn ranges_pair_by_name_and_map_times_to_events() {
        let ann = |name: &str, stage: &str, t: i64| Annotation {
            device: Some(0),
            time_us: Some(t),
            name: name.into(),
            stage: stage.into(),
            whole_name: None,
        };
        let anns = [
            ann("ProfilerStep#1", "START", 10),
            ann("Optimizer.step#Adam.step", "START", 25),
            ann("Optimizer.step#Adam.step", "END", 35),
            ann("ProfilerStep#1", "END", 40),
            ann("Other", "START", 45),
        ];
        let times = [5, 10, 20, 30, 40, 50];
        let r = annotation_ranges(&anns, 0, &times, true);
        let got: Vec<(&str, Option<u32>, Option<u32>, bool)> =
            r.iter().map(|r| (r.name.as_str(), r.start_event, r.end_event, r.open)).collect();
        assert_eq!(
            got,
            [
                ("Optimizer.step#Adam.step", Some(3), Some(3), false),
                ("ProfilerStep#1", Some(1), Some(4), false),
                ("Other", Some(5), Some(5), true)
            ]
        );
        assert_eq!(r[0].group, RangeGroup::Optimizer);
        assert!(annotation_ranges(&anns, 1, &times, true).is_empty(), "another device's ranges are not this device's");
    }

    #[test]
    fn frames_name_their_phase_on_any_platform() {
        let f = |file: &str, name: &str| Frame { filename: file.into(), line: 1, name: name.into(), fx: None, whole: None };
        let phase = |fs: &[Frame]| phase_of_marks(fs.iter().fold(0, |m, x| m | frame_marks(x)));
        let engine = f("D:\\venv\\Lib\\site-packages\\torch\\autograd\\__init__.py", "backward");
        assert_eq!(phase(&[engine]), Some(Phase::Backward), "a Windows path names backward too");
        let call = f("/x/site-packages/torch/nn/modules/module.py", "_call_impl");
        let init = f("/work/model.py", "__init__");
        assert_eq!(phase(&[init.clone(), call.clone()]), Some(Phase::Forward), "an object built inside forward is forward's");
        assert_eq!(phase(std::slice::from_ref(&init)), Some(Phase::Setup));
        let ctor = f("/x/site-packages/torch/optim/adam.py", "__init__");
        assert_eq!(phase(&[ctor]), Some(Phase::Setup), "an optimizer's constructor is set-up, not a step");
        let optim = "/x/site-packages/torch/optim/optimizer.py";
        let loading = [f(optim, "_process_value_according_to_param_policy"), f(optim, "_cast"), f(optim, "load_state_dict")];
        assert_eq!(phase(&loading), Some(Phase::Setup), "an optimizer loading its state is set-up, not a step");
        let swa = "/x/site-packages/torch/optim/swa_utils.py";
        assert_eq!(phase(&[f(swa, "update_parameters")]), Some(Phase::Optimizer), "averaging the weights is part of the step");
        assert_eq!(phase(&[f(swa, "update_bn")]), Some(Phase::Unknown), "update_bn moves batches, no step");
        let bn_forward = [f("/work/model.py", "forward"), call.clone(), f(swa, "forward"), call.clone(), f(swa, "update_bn")];
        assert_eq!(phase(&bn_forward), Some(Phase::Forward), "update_bn's pass over the data is forward");
        assert_eq!(phase(&[f("/work/run.py", "main")]), Some(Phase::Unknown), "a script's own line names no phase");
        let compiled = f("/x/site-packages/torch/_functorch/aot_autograd.py", "forward");
        assert_eq!(phase(std::slice::from_ref(&compiled)), Some(Phase::Unknown), "a compiled function's entry is no module's forward");
        assert_eq!(phase(&[compiled, call]), Some(Phase::Forward), "a compiled module's forward keeps its module call");
    }

    #[test]
    fn a_custom_functions_backward_is_backward_and_its_forward_is_not() {
        let f = |file: &str, name: &str| Frame { filename: file.into(), line: 1, name: name.into(), fx: None, whole: None };
        let function = "/x/site-packages/torch/autograd/function.py";
        // Innermost first, as a snapshot lists them: a fused kernel's backward on autograd's
        // thread (no frame of loss.backward()), through once_differentiable's wrapper.
        let backward = [
            f("/x/site-packages/flash_attn/flash_attn_interface.py", "_flash_attn_backward"),
            f("/x/site-packages/flash_attn/flash_attn_interface.py", "backward"),
            f(function, "wrapper"),
            f(function, "apply"),
        ];
        let forward = [
            f("/x/site-packages/flash_attn/flash_attn_interface.py", "_flash_attn_forward"),
            f("/x/site-packages/flash_attn/flash_attn_interface.py", "forward"),
            f(function, "apply"),
            f("/work/model.py", "forward"),
            f("/x/site-packages/torch/nn/modules/module.py", "_call_impl"),
            f("/work/run.py", "main"),
        ];
        // A trainer's own method named backward that calls a Function's forward is not one.
        let trainer = [f("/work/fn.py", "forward"), f(function, "apply"), f("/work/loss.py", "compute"), f("/work/trainer.py", "backward")];
        let mut interner = Interner::default();
        let ids: Vec<Vec<u32>> =
            [&backward[..], &forward[..], &trainer[..]].iter().map(|st| st.iter().map(|x| interner.frame(x.clone())).collect()).collect();
        for st in &ids {
            interner.stack(st);
        }
        assert_eq!(stack_phases(&interner), [Some(Phase::Backward), Some(Phase::Forward), Some(Phase::Forward)]);
    }

    #[test]
    fn unpaired_annotations_pair_in_linear_time() {
        // 100,000 STARTs that never close and 100,000 ENDs of other names: a scan of the open
        // ones per END would take minutes.
        let mut anns: Vec<Annotation> = (0..100_000)
            .map(|k| Annotation { device: Some(0), time_us: Some(k), name: format!("s{k}"), stage: "START".into(), whole_name: None })
            .collect();
        anns.extend((0..100_000).map(|k| Annotation {
            device: Some(0),
            time_us: Some(k),
            name: format!("e{k}"),
            stage: "END".into(),
            whole_name: None,
        }));
        anns.push(Annotation { device: Some(0), time_us: Some(5), name: "s7".into(), stage: "END".into(), whole_name: None });
        let t0 = std::time::Instant::now();
        let r = annotation_ranges(&anns, 0, &[0, 10, 20], true);
        assert!(t0.elapsed().as_secs_f64() < 5.0, "{:?}", t0.elapsed());
        assert_eq!(r.len(), 100_000);
        assert_eq!(r.iter().filter(|x| !x.open).count(), 1, "the one END that has its START");
    }

    #[test]
    fn framework_ranges_are_grouped() {
        assert_eq!(range_group("## Call CompiledFxGraph abc ##"), RangeGroup::Framework);
        assert_eq!(range_group("TorchDynamo Cache Lookup"), RangeGroup::Framework);
        assert_eq!(range_group("my_block"), RangeGroup::User);
        assert_eq!(range_group("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), RangeGroup::Data);
    }
}
