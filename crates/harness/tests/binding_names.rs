//! No binding is special-cased by name outside the binding table
//! (src/registry.rs) and the binding crates: the CLI and the harness ask
//! the registry for a binding's capabilities (which bindings meet on the
//! wire, which prefers the host's own address, ...) instead of comparing
//! its name with a string literal. Names as data (help texts, defaults,
//! a front end's mapping of its own options) are not comparisons, and
//! tests may name bindings freely.

use pubsubperf_harness::registry;
use std::path::{Path, PathBuf};

/// The sources scanned, from the workspace's root.
const SCANNED: [&str; 5] = [
    "crates/cli/src",
    "crates/frontend/src",
    "crates/rti/src",
    "crates/harness/src",
    "crates/runner/src",
];

/// The one file of those that may compare names: the binding table.
const TABLE: &str = "crates/harness/src/registry.rs";

/// The binding names `line` compares with a string literal (`== "x"`,
/// `"x" !=`, a match arm `"x" =>`, a pattern `"x" | "y"`). A line about a
/// transport compares transports, some of which are named as bindings
/// (`udp`, `shm`).
fn compared<'a>(line: &str, names: &[&'a str]) -> Vec<&'a str> {
    let code = line.split("//").next().unwrap_or("");
    if code.contains("transport") {
        return Vec::new();
    }
    let mut found = Vec::new();
    for name in names {
        let quoted = format!("\"{name}\"");
        for (at, _) in code.match_indices(&quoted) {
            let before = code[..at].trim_end();
            let after = code[at + quoted.len()..].trim_start();
            let compares = ["==", "!=", "|", "matches!("]
                .iter()
                .any(|op| before.ends_with(op))
                || before.contains("matches!(")
                || ["==", "!=", "=>", "|"]
                    .iter()
                    .any(|op| after.starts_with(op));
            if compares && !found.contains(name) {
                found.push(*name);
            }
        }
    }
    found
}

/// The non-test lines of a source file: a file of tests, and a file's
/// inline test module (`#[cfg(test)]` then `mod NAME {`, to the file's
/// end), are left out.
fn code_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == "tests.rs" || path.components().any(|c| c.as_os_str() == "tests") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let tests_from = lines
        .windows(2)
        .position(|w| {
            w[0].starts_with("#[cfg(test)]")
                && w[1].starts_with("mod ")
                && w[1].trim_end().ends_with('{')
        })
        .unwrap_or(lines.len());
    lines[..tests_from]
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for e in entries {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_binding_is_compared_by_name_outside_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in SCANNED {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} sources", files.len());
    let mut hits = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with(TABLE)) {
        let text = std::fs::read_to_string(f).expect("read a source");
        for (n, line) in code_lines(f, &text) {
            for name in compared(&line, registry::ALL) {
                let rel = f.strip_prefix(&root).unwrap_or(f);
                hits.push(format!(
                    "{}:{n}: \"{name}\": {}",
                    rel.display(),
                    line.trim()
                ));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "bindings compared by name; ask the registry for a capability (a fn of the Binding trait) instead:\n{}",
        hits.join("\n")
    );
}

/// The scan finds what it is for, and passes over data and transports.
#[test]
fn the_scan_tells_a_comparison_from_data() {
    let names = ["udp", "cyclonedds", "fastdds", "shm"];
    for (line, want) in [
        ("if self.binding == \"cyclonedds\" {", &["cyclonedds"][..]),
        ("  && peer != \"fastdds\"", &["fastdds"]),
        ("\"cyclonedds\" => 1,", &["cyclonedds"]),
        (
            "if !matches!(m.as_str(), \"udp\" | \"shm\") {",
            &["udp", "shm"],
        ),
        ("    | \"fastdds\" => true,", &["fastdds"]),
        ("let b = \"udp\";", &[]),
        ("help = \"cyclonedds, fastdds\",", &[]),
        ("if ep.transport == \"shm\" {", &[]),
        ("// x == \"udp\"", &[]),
    ] {
        assert_eq!(compared(line, &names), want, "{line}");
    }
    let text = "#[cfg(test)]\nmod fixture;\na\n#[cfg(test)]\nmod tests {\nb == \"udp\"\n}\n";
    let lines: Vec<usize> = code_lines(Path::new("src/a.rs"), text)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(lines, [1, 2, 3]);
    assert!(code_lines(Path::new("src/plan/tests.rs"), "x == \"udp\"").is_empty());
}
