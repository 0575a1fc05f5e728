use super::*;

const CHAIN: &str = r#"
binding = "udp"
duration = "2s"
warmup = "0s"

[topics.a]
size = 64
rate = "1k"
deadline = "1500ns"
too_late = "1900ns"

[topics.b]
size = "1KiB"

[nodes.src]
publish = ["a"]
cpu = 0

[nodes.mid]
relay = [{ from = "a", to = "b" }]

[nodes.sink]
subscribe = ["b"]
"#;

fn err(text: &str) -> String {
    parse(text, "t").unwrap_err()
}

#[test]
fn a_chain_numbers_its_streams_readers_and_one_path() {
    let t = parse(CHAIN, "chain").unwrap();
    assert_eq!(t.name, "chain");
    assert_eq!(t.binding.as_deref(), Some("udp"));
    assert_eq!(t.duration, Duration::from_secs(2));
    assert_eq!(t.warmup, Duration::ZERO);
    assert_eq!(t.topics[1].size, 1024);
    assert_eq!(t.topics[0].rate, Some(1000.0));
    assert_eq!(t.topics[0].deadline, Some(Duration::from_nanos(1500)));
    // Nodes sorted by name: mid, sink, src.
    let names: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["mid", "sink", "src"]);
    assert_eq!(t.streams.len(), 2);
    assert_eq!(t.readers.len(), 2);
    assert_eq!(t.paths.len(), 1);
    assert_eq!(t.path_name(&t.paths[0]), "src -a-> mid -b-> sink");
    let source = t
        .streams
        .iter()
        .position(|s| s.kind == StreamKind::Source)
        .unwrap();
    assert_eq!(t.receptions_per_sample(source), 2);
    assert_eq!(t.nodes[2].cpu, Some(0));
}

#[test]
fn fan_out_and_fan_in_give_a_path_per_source_and_sink() {
    let t = parse(
        r#"
[topics.x]
size = 64
rate = 10
[topics.y]
size = 64
rate = 10
[topics.z]
size = 64
[nodes.p1]
publish = ["x"]
[nodes.p2]
publish = ["y"]
[nodes.merge]
relay = [{ from = "x", to = "z" }, { from = "y", to = "z" }]
subscribe = ["x"]
[nodes.s1]
subscribe = ["z"]
[nodes.s2]
subscribe = ["z"]
"#,
        "t",
    )
    .unwrap();
    let mut names: Vec<String> = t.paths.iter().map(|p| t.path_name(p)).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "p1 -x-> merge",
            "p1 -x-> merge -z-> s1",
            "p1 -x-> merge -z-> s2",
            "p2 -y-> merge -z-> s1",
            "p2 -y-> merge -z-> s2",
        ]
    );
    assert_eq!(t.fan(), (2, 2));
    let p1 = t
        .streams
        .iter()
        .position(|s| s.node == 1 && s.kind == StreamKind::Source);
    // merge (x) + s1 + s2.
    assert_eq!(t.receptions_per_sample(p1.unwrap()), 3);
}

#[test]
fn a_cycle_is_refused_naming_its_nodes() {
    let e = err(r#"
[topics.a]
size = 64
rate = 1
[topics.b]
size = 64
[nodes.s]
publish = ["a"]
[nodes.r1]
relay = [{ from = "a", to = "b" }]
[nodes.r2]
relay = [{ from = "b", to = "a" }]
subscribe = ["b"]
"#);
    assert!(e.contains("cycle"), "{e}");
    assert!(e.starts_with("nodes:"), "{e}");
}

#[test]
fn bad_files_get_one_line_naming_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"b\"]\n",
            "nodes.s.publish: no topic 'b'",
        ),
        (
            "[topics.a]\nsize = 8\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.size = 8",
        ),
        (
            "[topics.a]\nsize = 64\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.rate: missing",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\nspeed = 2\n[nodes.s]\npublish = [\"a\"]\n",
            "unknown field `speed`",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\n",
            "topics.a: no node subscribes",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\npriority = 100\n",
            "nodes.s.priority = 100",
        ),
        (
            "[topics.a]\nsize = 64\nrate = \"max\"\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.rate = max",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\ndeadline = \"2ms\"\ntoo_late = \"1ms\"\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.too_late",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\nhost = \"a b\"\n",
            "nodes.s.host",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\n",
            "nodes.s: does nothing",
        ),
        ("duration = \"soon\"\n", "duration = 'soon'"),
        (
            "[topics.a]\nsize = 64\nrate = 1\nhistory = \"last\"\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.history",
        ),
        (
            "[topics.a]\nsize = 64\nrate = 1\ndurability = \"forever\"\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
            "topics.a.durability",
        ),
        (
            "[topics.\"a/b\"]\nsize = 64\n[nodes.s]\nsubscribe = [\"a/b\"]\n",
            "topics.a/b",
        ),
    ];
    for (text, want) in cases {
        let e = err(text);
        assert!(e.contains(want), "{text:?}: got {e:?}, want {want:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
}

#[test]
fn every_file_in_topologies_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            read(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 3, "{n} files in {}", dir.display());
}
