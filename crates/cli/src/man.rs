//! `pubsubperf man` and `pubsubperf completions`: the man pages and the
//! shells' completions, generated from the command line's definition.

use crate::cli::{self, CompletionsArgs, ManArgs};
use anyhow::Context;
use std::process::ExitCode;

/// `pubsubperf completions SHELL`.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    cli::completions(a.shell, &mut std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
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
        None => cli::man_page(&mut std::io::stdout().lock())?,
    }
    Ok(ExitCode::SUCCESS)
}
