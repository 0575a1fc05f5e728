//! Shell completions and man pages, generated from the command line's
//! definition (clap_complete, clap_mangen), so they cannot drift from it.
//! `scripts/package.sh` and `scripts/setup.sh` install what these write.

use super::Cli;
use clap::{Args, CommandFactory};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write pubsubperf.1 and one page per command (pubsubperf-latency.1,
    /// ...) into this directory instead of printing pubsubperf.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Writes the completion script of `shell` to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), "pubsubperf", out);
}

/// Writes the main man page (pubsubperf.1) to `out`.
pub fn man_page(out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(Cli::command()).render(out)
}

/// Writes pubsubperf.1 and pubsubperf-COMMAND.1 for every command into
/// `dir` (created if missing); returns the files written.
pub fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut cmd = Cli::command();
    cmd.build();
    let mut written = Vec::new();
    write_pages(&cmd, dir, &mut written)?;
    Ok(written)
}

/// One page for `cmd` (named by its path of commands, joined by '-') and
/// one for each of its visible subcommands, recursively.
fn write_pages(cmd: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let path = dir.join(format!(
        "{}.1",
        cmd.get_display_name().unwrap_or(cmd.get_name())
    ));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    // Through a private temporary file: a link planted at a page's name
    // is replaced, never followed.
    pubsubperf_report::write_atomic(&path, &page)?;
    written.push(path);
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        write_pages(sub, dir, written)?;
    }
    Ok(())
}
