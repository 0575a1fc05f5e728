//! Reaching remote agents: `ssh://` addresses, the token file, the agent's
//! limits.

use pubsubperf_harness::serve::Limits;
use pubsubperf_harness::ssh::Target;
use pubsubperf_harness::token;
use std::os::unix::fs::PermissionsExt;

fn target(s: &str) -> Result<Target, String> {
    Target::parse(s).expect("an ssh:// address")
}

#[test]
fn ssh_addresses_parse_as_ssh_would_take_them() {
    assert!(Target::parse("198.18.0.2:7400").is_none());
    let t = target("ssh://pi@board1:2222").unwrap();
    assert_eq!(
        (t.user.as_deref(), t.host.as_str(), t.port),
        (Some("pi"), "board1", Some(2222))
    );
    let t = target("ssh://board1").unwrap();
    assert_eq!((t.user, t.host.as_str(), t.port), (None, "board1", None));
    let t = target("ssh://[fd00::2]:22").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("fd00::2", Some(22)));
    assert_eq!(target("ssh://u@h:1").unwrap().display(), "ssh://u@h:1");
    let t = target("ssh://board1?data=eth1&path=/opt/pubsubperf").unwrap();
    assert_eq!(
        (
            t.data_address.as_deref(),
            t.path.as_deref(),
            t.display().as_str()
        ),
        (Some("eth1"), Some("/opt/pubsubperf"), "ssh://board1")
    );
    for bad in [
        "ssh://",
        "ssh://@h",
        "ssh://h:port",
        "ssh://-oProxyCommand=x",
        "ssh://h/x",
        "ssh://[::1",
        "ssh://h?nic=eth0",
    ] {
        let e = target(bad).unwrap_err();
        assert!(e.starts_with(&format!("--connect {bad}: ")), "{e}");
        assert!(e.contains("ssh://[user@]host[:port][?data="), "{e}");
    }
}

#[test]
fn a_token_file_is_made_once_private_and_refused_when_others_can_read_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("dir").join("agent.token");
    let a = token::load_or_create(&p).unwrap();
    let b = token::load_or_create(&p).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 64);
    assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let e = token::load(&p).unwrap_err().to_string();
    assert!(e.contains("chmod 600"), "{e}");
    assert!(token::matches(&a, Some(&a)));
    assert!(!token::matches(&a, Some(&a[1..])));
    assert!(!token::matches(&a, None));
    assert_eq!(
        token::path(Some(&p)).unwrap(),
        p,
        "--token-file comes first"
    );
}

#[test]
fn unlimited_is_the_publishers_own_host_and_the_default_allows_no_rt_or_mlock() {
    let l = Limits::default();
    assert!(!l.rt_priority && !l.mlock && l.max_duration_ns.is_none() && l.max_size.is_none());
    let u = Limits::unlimited();
    assert!(u.rt_priority && u.mlock);
}
