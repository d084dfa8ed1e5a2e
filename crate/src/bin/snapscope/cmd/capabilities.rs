use crate::emit::Out;
use snapscope::engine::{Engine, ANALYSES};
use snapscope::Result;

pub fn run(typescript: bool, out: Out) -> Result<()> {
    if typescript {
        print!("{}", crate::schemas::typescript());
        return Ok(());
    }
    let templates = Engine::catalogue();
    let formats = ["pickle protocol 0-5", "gzip", "json", "TorchScript type-tagged pickle", "SnapshotDB (.db)"];
    let body = serde_json::json!({"engine_version": snapscope::VERSION, "templates": templates, "analyses": ANALYSES, "formats": formats, "answer_schemas": crate::schemas::capabilities()});
    out.answer(body, |_| {
        for t in &templates {
            say!("{} ({}): {}", t.name, t.category, t.description);
            for p in &t.params {
                let required = if p.required { " (required)" } else { "" };
                say!("    --params {}: {:?}{required} default {} — {}", p.name, p.ty, p.default, p.description);
            }
        }
    });
    Ok(())
}
