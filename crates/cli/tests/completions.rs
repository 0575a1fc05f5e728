//! Shell completions and man pages are generated from the command line's
//! definition for every command: `pubsubperf --help` lists the commands,
//! and each must appear in the bash, zsh and fish scripts and have its own
//! man page.

use std::process::Command;

fn pubsubperf(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(args)
        .output()
        .expect("runs pubsubperf");
    assert!(
        out.status.success(),
        "pubsubperf {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The commands of `pubsubperf --help` ("Commands:" section), without `help`.
fn commands() -> Vec<String> {
    let help = pubsubperf(&["--help"]);
    let listed: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    assert!(
        listed.len() >= 10 && listed.iter().any(|c| c == "latency"),
        "--help lists the commands: {listed:?}"
    );
    listed
}

#[test]
fn completions_name_every_command() {
    let commands = commands();
    for shell in ["bash", "zsh", "fish"] {
        let script = pubsubperf(&["completions", shell]);
        for c in &commands {
            assert!(
                script.contains(c.as_str()),
                "{shell} completion lacks the command {c}"
            );
        }
    }
    // Options too: a test's flags complete after `latency`.
    let bash = pubsubperf(&["completions", "bash"]);
    assert!(bash.contains("--binding") && bash.contains("--find-max"));
}

#[test]
fn bad_shell_is_refused_with_the_choices() {
    let out = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn a_man_page_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let listed = pubsubperf(&["man", "--dir", dir.path().to_str().unwrap()]);
    let main = std::fs::read_to_string(dir.path().join("pubsubperf.1")).expect("pubsubperf.1");
    assert!(
        main.starts_with(".ie") || main.contains(".TH pubsubperf"),
        "roff: {}",
        &main[..main.len().min(200)]
    );
    for c in commands() {
        let page = dir.path().join(format!("pubsubperf-{c}.1"));
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(text.contains(".TH"), "{} is a man page", page.display());
        assert!(
            listed.contains(&page.display().to_string()),
            "listed: {listed}"
        );
        // roff writes a command's hyphens as `\-` (throughput-example).
        assert!(
            main.replace("\\-", "-").contains(&c),
            "pubsubperf.1 names {c}"
        );
    }
    // Without --dir: pubsubperf.1 on stdout, the same page.
    assert_eq!(pubsubperf(&["man"]), main);
}

/// A reader that stops early (`pubsubperf completions bash | head -1`)
/// ends the output quietly: exit 0, nothing on standard error (a script
/// larger than the pipe's buffer once ended in a panic).
#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    use std::process::Stdio;
    for args in [&["completions", "bash"][..], &["man"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs pubsubperf");
        // Closing our end before it writes: every write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("waits");
        assert!(out.status.success(), "{args:?}: {:?}", out.status);
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}
