//! The option reference of docs/options.md, written from the table.

use super::{Grammar, Kind, OPTIONS, TestOption};
use std::fmt::Write;

/// The lines between these two in docs/options.md are [`markdown`]'s.
pub const BEGIN: &str = "<!-- the option table's reference: begin -->";
pub const END: &str = "<!-- the option table's reference: end -->";

/// Every option, by kind: its names and value, its default and help.
pub fn markdown() -> String {
    let mut out = String::new();
    for kind in Kind::ALL {
        let _ = writeln!(out, "\n### {}\n", kind.title());
        for o in OPTIONS.iter().filter(|o| o.kind == kind) {
            let _ = writeln!(out, "{}", entry(o));
        }
    }
    out
}

/// `- `-s`, `--size SIZES` (default `64`): help.`
fn entry(o: &TestOption) -> String {
    let mut names: Vec<String> = o.short.map(|c| format!("`-{c}`")).into_iter().collect();
    let value = match o.grammar {
        Grammar::Flag => String::new(),
        Grammar::Switch => " [true|false]".into(),
        Grammar::Choice(_, choices) => {
            let names: Vec<&str> = choices.names().iter().map(|(n, _)| *n).collect();
            format!(" {}", names.join("|"))
        }
        Grammar::Value(n) | Grammar::Path(n) | Grammar::Repeated(n) => format!(" {n}"),
    };
    names.push(format!("`--{}{value}`", o.name));
    names.extend(o.aliases.iter().map(|a| format!("`--{a}`")));
    let default = o
        .default
        .map(|d| format!(" (default `{d}`)"))
        .unwrap_or_default();
    let details = if o.details.is_empty() {
        String::new()
    } else {
        format!(" {}.", o.details)
    };
    format!("- {}{default}: {}.{details}", names.join(", "), o.help)
}
