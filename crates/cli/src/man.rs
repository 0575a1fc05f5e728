//! `pubsubperf man` and `pubsubperf completions`: the man pages and the
//! shells' completions, generated from the command line's definition.

use crate::cli::{self, CompletionsArgs, ManArgs};
use anyhow::Context;
use std::process::ExitCode;

/// `pubsubperf completions SHELL`.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    cli::completions(a.shell, &mut script);
    print_all(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to standard output; a reader that stopped reading (`|
/// head`) ends the output quietly, as it ends a shell tool's.
fn print_all(text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `pubsubperf man [--dir DIR]`.
pub fn run(a: &ManArgs) -> anyhow::Result<ExitCode> {
    match &a.dir {
        Some(dir) => {
            for page in
                cli::man_pages(dir).with_context(|| format!("man --dir {}", dir.display()))?
            {
                println!("{}", page.display());
            }
        }
        None => {
            let mut page = Vec::new();
            cli::man_page(&mut page)?;
            print_all(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
