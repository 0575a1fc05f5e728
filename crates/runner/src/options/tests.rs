use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// The request's fields and their values, from its `{:#?}`.
fn fields(r: &TestRequest) -> BTreeMap<String, String> {
    let text = format!("{r:#?}");
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines().skip(1) {
        let top = line.strip_prefix("    ").filter(|l| !l.starts_with(' '));
        match top.and_then(|l| l.split_once(": ")) {
            Some((name, value)) => {
                out.insert(name.to_string(), value.to_string());
                current = Some(name.to_string());
            }
            None => {
                if let Some(c) = &current {
                    out.get_mut(c).unwrap().push_str(line.trim());
                }
            }
        }
    }
    out
}

/// A value of `o`'s grammar that is not its default and that its setter
/// takes.
fn sample(o: &TestOption) -> Option<&'static str> {
    match o.grammar {
        Grammar::Flag => None,
        Grammar::Switch => Some("false"),
        Grammar::Choice(_, c) => c
            .names()
            .into_iter()
            .map(|(n, _)| n)
            .find(|n| Some(*n) != o.default),
        Grammar::Value(_) | Grammar::Path(_) | Grammar::Repeated(_) => {
            ["7", "3s"].into_iter().find(|v| {
                Some(*v) != o.default && o.apply(&mut TestRequest::default(), Some(v)).is_ok()
            })
        }
    }
}

/// Each option sets a field of its own, and every field but the planner's
/// own (`loopback_only`) is an option's: an option declared anywhere but
/// the table has no field to set, and a field no option sets fails here.
#[test]
fn every_field_of_a_request_is_one_options() {
    let blank = fields(&TestRequest::default());
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    for o in OPTIONS {
        let mut r = TestRequest::default();
        o.apply(&mut r, sample(o))
            .unwrap_or_else(|e| panic!("--{}: {e}", o.name));
        let changed: Vec<String> = fields(&r)
            .into_iter()
            .filter(|(k, v)| blank.get(k) != Some(v))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(changed.len(), 1, "--{} set {changed:?}", o.name);
        if let Some(other) = owner.insert(changed[0].clone(), o.name) {
            panic!("--{} and --{other} both set {}", o.name, changed[0]);
        }
    }
    let unowned: Vec<&String> = blank.keys().filter(|k| !owner.contains_key(*k)).collect();
    assert_eq!(unowned, ["loopback_only"]);
}

/// A request's defaults are the table's: setting each default again
/// changes nothing.
#[test]
fn the_requests_defaults_are_the_tables() {
    let d = TestRequest::default();
    for o in OPTIONS.iter().filter(|o| o.default.is_some()) {
        let mut r = d.clone();
        o.apply(&mut r, o.default).unwrap();
        assert_eq!(format!("{r:?}"), format!("{d:?}"), "--{}", o.name);
    }
    assert_eq!(d.binding, "udp");
    assert_eq!(d.size, "64");
}

/// Names, aliases and letters are each one option's; what an option
/// conflicts with or needs is an option.
#[test]
fn names_are_one_options_each() {
    let mut names = BTreeSet::new();
    let mut letters = BTreeSet::new();
    for o in OPTIONS {
        for n in std::iter::once(&o.name).chain(o.aliases) {
            assert!(names.insert(*n), "--{n} twice");
        }
        if let Some(c) = o.short {
            assert!(letters.insert(c), "-{c} twice");
        }
        for other in o.conflicts.iter().chain(&o.requires) {
            assert!(find(other).is_some(), "--{}: no option --{other}", o.name);
        }
        assert!(
            !o.help.ends_with('.'),
            "--{}: help ends without a period",
            o.name
        );
    }
}

/// A choice's setter takes each of its values, and refuses another naming
/// them.
#[test]
fn choices_are_what_their_setters_take() {
    for o in OPTIONS {
        let Grammar::Choice(_, c) = o.grammar else {
            continue;
        };
        for (n, _) in c.names() {
            o.apply(&mut TestRequest::default(), Some(n)).unwrap();
        }
        let e = o
            .apply(&mut TestRequest::default(), Some("nonsense"))
            .unwrap_err();
        assert!(
            e.0.starts_with(&format!("--{} 'nonsense': expected one of", o.name)),
            "{e}"
        );
    }
}

/// The DDS QoS options are the flags bindings map or refuse.
#[test]
fn the_qos_options_are_the_bindings_qos_flags() {
    let table: BTreeSet<String> = OPTIONS
        .iter()
        .filter(|o| o.kind == Kind::Qos)
        .map(|o| format!("--{}", o.name))
        .collect();
    let core: BTreeSet<String> = pubsubperf_core::binding::QOS_FLAGS
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert_eq!(table, core);
}

/// A bad value's error names the option and why.
#[test]
fn a_bad_value_names_the_option() {
    let mut r = TestRequest::default();
    let e = find("count").unwrap().apply(&mut r, Some("x")).unwrap_err();
    assert_eq!(e.0, "--count 'x': invalid digit found in string");
    let e = find("multicast-ttl")
        .unwrap()
        .apply(&mut r, Some("300"))
        .unwrap_err();
    assert_eq!(
        e.0,
        "--multicast-ttl '300': number too large to fit in target type"
    );
    let e = find("reliable")
        .unwrap()
        .apply(&mut r, Some("yes"))
        .unwrap_err();
    assert_eq!(e.0, "--reliable 'yes': takes no value");
    let e = find("size").unwrap().apply(&mut r, None).unwrap_err();
    assert_eq!(e.0, "--size: needs a value");
    assert!(find("nic").is_some_and(|o| o.name == "data-address"));
}

/// docs/options.md's reference is the table's.
#[test]
fn the_docs_reference_is_the_tables() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/options.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = doc.split_once(reference::BEGIN).expect("the begin marker");
    let (_, tail) = rest.split_once(reference::END).expect("the end marker");
    let want = format!(
        "{head}{}\n{}\n{}{tail}",
        reference::BEGIN,
        reference::markdown(),
        reference::END
    );
    if doc != want {
        if std::env::var_os("PUBSUBPERF_WRITE_DOCS").is_some() {
            std::fs::write(&path, &want).unwrap();
        } else {
            panic!(
                "docs/options.md's reference is not the option table's: rewrite it with \
                 PUBSUBPERF_WRITE_DOCS=1 cargo test -p pubsubperf-runner the_docs_reference"
            );
        }
    }
}
