fn main() {
    let path = std::env::args().nth(2).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    match snapscope::Loaded::from_bytes(&bytes) {
        Ok(l) => println!(
            "{}",
            serde_json::to_string_pretty(&snapscope::analysis::overview::overview(&l)).unwrap()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
