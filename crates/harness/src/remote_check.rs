//! What a publisher's setup may ask of the host that serves it, checked on
//! every run it sets up ([`check_setup`]) before anything of the run is
//! built from it: the bindings, and the vendor file ([`crate::qos_dir`]).

use crate::Fault;
use crate::serve::SessionSettings;
use crate::spec::RunSpec;

/// What the session process of `settings` runs on every run a publisher
/// sets up, before anything else: for an agent at HOST:PORT, bindings that
/// work across hosts (one within a host exchanges socket paths or
/// in-process names, not addresses); and the vendor file resolved
/// ([`crate::qos_dir::resolve`]), whose result replaces `--qos-file` in
/// `spec`. Refusals read `refused by the agent:` and name the flag.
pub fn check_setup(spec: &mut RunSpec, settings: &SessionSettings) -> Result<(), Fault> {
    let refuse = |m: String| Fault::Config(format!("refused by the agent: {m}"));
    for (flag, name) in [
        ("--binding", &spec.binding),
        ("--peer-binding", &spec.peer_binding),
    ] {
        if !settings.trusted
            && let Some(i) = crate::registry::info(name)
            && (!i.capabilities.remote || i.capabilities.in_process)
        {
            return Err(refuse(format!(
                "{flag} {name}: it works within one host only; use a binding that reaches other hosts (see 'pubsubperf bindings')"
            )));
        }
    }
    if let Some(asked) = &spec.endpoint.qos_file {
        let file = crate::qos_dir::resolve(asked, settings.qos_dir.as_deref(), settings.trusted)
            .map_err(refuse)?;
        spec.endpoint.qos_file = Some(file);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RunSpec {
        let mut s = RunSpec::for_test("udp", "pp1234x5f3ax0s0");
        s.endpoint.transport = "udp".into();
        s
    }

    fn remote() -> SessionSettings {
        SessionSettings {
            trusted: false,
            ..SessionSettings::local()
        }
    }

    #[test]
    fn an_agent_takes_a_name_from_its_dir_and_no_path() {
        let attack = crate::qos_dir::tests::ATTACK;
        let mut s = spec();
        s.endpoint.qos_file = Some(attack.into());
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(
            e.starts_with("refused by the agent: --qos-file /dev/null,<Tracing>")
                && e.ends_with("put the file in the agent's --qos-dir and pass its name"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cyclone.xml"), "<x/>").unwrap();
        let with_dir = SessionSettings {
            qos_dir: Some(d.path().to_path_buf()),
            ..remote()
        };
        let mut s = spec();
        s.endpoint.qos_file = Some("cyclone.xml".into());
        check_setup(&mut s, &with_dir).unwrap();
        let file = std::fs::canonicalize(d.path().join("cyclone.xml")).unwrap();
        assert_eq!(s.endpoint.qos_file.as_deref(), Some(file.to_str().unwrap()));
        let mut s = spec();
        s.endpoint.qos_file = Some("cyclone.xml".into());
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(e.contains("start it with --qos-dir DIR"), "{e}");
        // The publisher's own subscribers keep its absolute path.
        let mut s = spec();
        s.endpoint.qos_file = Some("/home/me/cyclone.xml".into());
        check_setup(&mut s, &SessionSettings::local()).unwrap();
        assert_eq!(s.endpoint.qos_file.as_deref(), Some("/home/me/cyclone.xml"));
    }

    #[test]
    fn an_agent_refuses_bindings_of_one_host() {
        let mut s = spec();
        s.binding = "intra".into();
        s.peer_binding = "intra".into();
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(
            e.starts_with("refused by the agent: --binding intra: "),
            "{e}"
        );
        check_setup(&mut s, &SessionSettings::local()).unwrap();
    }
}
