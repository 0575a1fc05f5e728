//! `--qos-file` on a subscriber's host: which vendor file a session may
//! apply. A publisher's run names its file; the host that serves it opens
//! only what it allows:
//!
//! - an agent reached at HOST:PORT takes a plain file *name* (see
//!   [`is_file_name`]) and opens that file in its own `--qos-dir`, never a
//!   path: anyone who presents its token (or anyone at all with
//!   `--insecure`) would otherwise make it read, and through the vendor's
//!   configuration write, any file of its host;
//! - the subscribers a publisher starts itself ([`SessionSettings::local`])
//!   and an agent over SSH (`agent --stdio`, which runs as the SSH user, who
//!   could run anything there anyway) also take the absolute path the
//!   publisher resolved ([`SessionSettings::trusted`]).
//!
//! Either way the binding checks the path once more before it goes into a
//! configuration string ([`pubsubperf_core::binding::check_vendor_path`]).
//!
//! [`SessionSettings::local`]: crate::serve::SessionSettings::local
//! [`SessionSettings::trusted`]: crate::serve::SessionSettings::trusted

use std::path::Path;

/// The longest file name an agent takes.
pub const MAX_NAME: usize = 128;

/// The grammar of a file name, for messages.
pub const NAME_GRAMMAR: &str = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters, ending in .xml";

/// True for a file name an agent takes from its `--qos-dir`:
/// `[A-Za-z0-9][A-Za-z0-9._-]{0,127}` ending in `.xml`, without `..`
/// (so neither a path nor a hidden file).
pub fn is_file_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_NAME
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && !name.contains("..")
        && name.len() > ".xml".len()
        && name.ends_with(".xml")
}

/// The name a publisher sends an agent at HOST:PORT for the file at `path`
/// (its last component; None when there is none).
pub fn name_of(path: &str) -> Option<String> {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// What a publisher sends an agent at HOST:PORT: the run's `--qos-file`
/// by its name ([`name_of`]), which the agent looks up in its `--qos-dir`.
pub fn by_name(ep: &mut pubsubperf_core::EndpointConfig) {
    if let Some(p) = &ep.qos_file {
        ep.qos_file = Some(name_of(p).unwrap_or_default());
    }
}

/// The file a session applies for a run's `--qos-file` value `asked`: a
/// name resolved in `qos_dir` (canonicalized, still inside it, a regular
/// file), or, when `paths` allows it, the absolute path as given. Anything
/// else is refused with one line naming `--qos-file` and the fix.
pub fn resolve(asked: &str, qos_dir: Option<&Path>, paths: bool) -> Result<String, String> {
    let shown = asked.escape_debug().to_string();
    if !is_file_name(asked) {
        if paths && asked.starts_with('/') {
            return Ok(asked.to_string());
        }
        return Err(if asked.contains('/') {
            format!(
                "--qos-file {shown}: a remote agent takes a file name from its --qos-dir, not a path; put the file in the agent's --qos-dir and pass its name"
            )
        } else {
            format!(
                "--qos-file {shown}: not a file name the agent takes ({NAME_GRAMMAR}); rename the file in the agent's --qos-dir"
            )
        });
    }
    let Some(dir) = qos_dir else {
        return Err(format!(
            "--qos-file {shown}: this agent takes no vendor files; start it with --qos-dir DIR and put {shown} there"
        ));
    };
    let missing = || {
        format!(
            "--qos-file {shown}: no such file in the agent's --qos-dir {}; put it there",
            dir.display()
        )
    };
    let root = std::fs::canonicalize(dir).map_err(|_| missing())?;
    let file = std::fs::canonicalize(root.join(asked)).map_err(|_| missing())?;
    if !file.starts_with(&root) {
        return Err(format!(
            "--qos-file {shown}: it leads out of the agent's --qos-dir {} (a symbolic link); put the file itself there",
            dir.display()
        ));
    }
    if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
        return Err(format!(
            "--qos-file {shown}: not a regular file in the agent's --qos-dir {}",
            dir.display()
        ));
    }
    file.into_os_string().into_string().map_err(|_| missing())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The value that rewrote a file as root through CycloneDDS's
    /// configuration list (issue 50).
    pub(crate) const ATTACK: &str = "/dev/null,<Tracing><OutputFile>/some/file</OutputFile><Category>config</Category></Tracing><Discovery><Tag>x&#10;LINE&#10;y</Tag></Discovery>";

    #[test]
    fn names_follow_the_grammar() {
        for good in ["a.xml", "cyclone-1.xml", "Fast_DDS.profiles.xml", "9.xml"] {
            assert!(is_file_name(good), "{good}");
        }
        let long = format!("{}.xml", "a".repeat(MAX_NAME - 3));
        for bad in [
            "",
            ".xml",
            ".hidden.xml",
            "-x.xml",
            "a",
            "a.XML",
            "a.xml.bak",
            "a..xml",
            "../a.xml",
            "dir/a.xml",
            "/etc/a.xml",
            "a b.xml",
            "a,b.xml",
            "a<b.xml",
            "a\n.xml",
            "é.xml",
            long.as_str(),
            ATTACK,
        ] {
            assert!(!is_file_name(bad), "{bad}");
        }
        assert!(is_file_name(&format!("{}.xml", "a".repeat(MAX_NAME - 4))));
    }

    #[test]
    fn a_name_resolves_in_the_dir_only() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("ok.xml"), "<x/>").unwrap();
        std::fs::create_dir(d.path().join("sub.xml")).unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("out.xml")).unwrap();
        std::os::unix::fs::symlink(d.path().join("ok.xml"), d.path().join("in.xml")).unwrap();
        let dir = Some(d.path());
        let ok = resolve("ok.xml", dir, false).unwrap();
        assert_eq!(
            Path::new(&ok),
            std::fs::canonicalize(d.path().join("ok.xml")).unwrap()
        );
        assert_eq!(resolve("in.xml", dir, false).unwrap(), ok);
        let e = resolve("out.xml", dir, false).unwrap_err();
        assert!(e.contains("leads out of the agent's --qos-dir"), "{e}");
        let e = resolve("sub.xml", dir, false).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = resolve("gone.xml", dir, false).unwrap_err();
        assert!(e.starts_with("--qos-file gone.xml: no such file"), "{e}");
        let e = resolve("ok.xml", None, false).unwrap_err();
        assert!(e.contains("start it with --qos-dir DIR"), "{e}");
    }

    #[test]
    fn paths_are_refused_unless_allowed() {
        let d = tempfile::tempdir().unwrap();
        let e = resolve("/etc/x.xml", Some(d.path()), false).unwrap_err();
        assert_eq!(
            e,
            "--qos-file /etc/x.xml: a remote agent takes a file name from its --qos-dir, not a path; put the file in the agent's --qos-dir and pass its name"
        );
        let e = resolve(ATTACK, Some(d.path()), false).unwrap_err();
        assert!(
            e.starts_with("--qos-file /dev/null,<Tracing>") && !e.contains('\n'),
            "{e}"
        );
        let e = resolve("a\nb", None, false).unwrap_err();
        assert!(e.starts_with("--qos-file a\\nb: not a file name"), "{e}");
        // The publisher's own subscribers and an agent over SSH take the
        // path; the binding checks it before use.
        assert_eq!(resolve("/etc/x.xml", None, true).unwrap(), "/etc/x.xml");
        assert!(resolve("x/../y.xml", None, true).is_err());
    }

    #[test]
    fn the_name_of_a_path_is_its_last_component() {
        assert_eq!(name_of("/a/b/c.xml").as_deref(), Some("c.xml"));
        assert_eq!(name_of("/").as_deref(), None);
        let mut ep = pubsubperf_core::EndpointConfig::for_test("n");
        by_name(&mut ep);
        assert_eq!(ep.qos_file, None);
        ep.qos_file = Some("/home/me/dds/cyclone.xml".into());
        by_name(&mut ep);
        assert_eq!(ep.qos_file.as_deref(), Some("cyclone.xml"));
    }
}
