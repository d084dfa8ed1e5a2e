use crate::emit::Out;
use crate::skills;
use snapscope::Result;

#[derive(clap::Args)]
pub struct Args {
    #[arg(value_parser = ["list", "install"])]
    action: String,
    #[arg(long, default_value = "project", value_parser = ["project", "user"])]
    scope: String,
    #[arg(long, default_value = "all", value_parser = ["claude", "codex", "agents", "all"])]
    host: String,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    match a.action.as_str() {
        "install" => skills::install(&a.scope, &a.host, out),
        _ => skills::list(&a.scope, out),
    }
}
