//! The docs cannot drift from the CLI: every `pubsubperf` command in a
//! fenced block of README.md and docs/ is parsed and validated by the binary
//! (`PUBSUBPERF_CHECK_ONLY=1`: a test's plan built, a sweep's cells checked,
//! nothing run), and every relative link resolves to a file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every Markdown page under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("docs/ is readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut v = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut v);
    v.sort();
    v
}

/// The `pubsubperf ...` command lines of a page's fenced code blocks (not
/// of ```text blocks, which show output or placeholders), with the line
/// each starts on. A `$ ` prompt is dropped; a trailing `\` continues the
/// command on the next line.
fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(rest.trim().to_string()),
            };
            continue;
        }
        let Some(lang) = &fence else { continue };
        if !matches!(lang.as_str(), "" | "sh" | "bash" | "console" | "shell") {
            continue;
        }
        let t = t.strip_prefix("$ ").unwrap_or(t);
        if let Some((at, mut cmd)) = pending.take() {
            cmd.push(' ');
            cmd.push_str(t.trim_end_matches('\\').trim());
            if t.ends_with('\\') {
                pending = Some((at, cmd));
            } else {
                out.push((at, cmd));
            }
            continue;
        }
        if t.starts_with("pubsubperf ") || t == "pubsubperf" {
            let cmd = t.trim_end_matches('\\').trim().to_string();
            if t.ends_with('\\') {
                pending = Some((i + 1, cmd));
            } else {
                out.push((i + 1, cmd));
            }
        }
    }
    out
}

/// Splits a command line as a shell would for these simple commands:
/// words, single and double quotes; a `#` comment or a pipe ends it.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '#' | '|' | '>' | '&' | ';') if cur.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_documented_command_parses() {
    let bin = env!("CARGO_BIN_EXE_pubsubperf");
    let mut checked = 0;
    let mut failed = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, cmd) in commands(&text) {
            let args = words(&cmd);
            let out = Command::new(bin)
                .args(&args[1..])
                .current_dir(root())
                .env("PUBSUBPERF_CHECK_ONLY", "1")
                .output()
                .expect("runs pubsubperf");
            checked += 1;
            if !out.status.success() {
                failed.push(format!(
                    "{}:{line}: {cmd}\n    {}",
                    page.strip_prefix(root()).unwrap_or(&page).display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(checked >= 20, "only {checked} commands found in the docs");
    assert!(
        failed.is_empty(),
        "{} of {checked} documented commands are refused:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn links_resolve_and_the_readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines; the manual belongs in docs/"
    );
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, target) in text
            .match_indices("](")
            .map(|(i, _)| &text[i + 2..])
            .filter_map(|rest| rest.split(')').next())
            .enumerate()
        {
            let target = target.split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = page.parent().unwrap().join(target);
            if !path.exists() {
                broken.push(format!("{}: link {i}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn commands_are_found_in_fenced_blocks_only() {
    let text = "pubsubperf no\n```sh\n$ pubsubperf latency \\\n  -b udp\npubsubperf bindings # all\n```\n```text\npubsubperf x\n```\n";
    let c = commands(text);
    assert_eq!(
        c,
        vec![
            (3, "pubsubperf latency -b udp".to_string()),
            (5, "pubsubperf bindings # all".to_string())
        ]
    );
    assert_eq!(
        words("pubsubperf bindings # all"),
        ["pubsubperf", "bindings"]
    );
    assert_eq!(
        words("pubsubperf compare a b --fail-if 'p99>+10%'"),
        ["pubsubperf", "compare", "a", "b", "--fail-if", "p99>+10%"]
    );
}
