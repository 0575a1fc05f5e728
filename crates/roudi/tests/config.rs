//! Our RouDi config text, without a daemon: the largest chunk read back,
//! the total size of our pools, and the parser's tolerance of comments.

use pubsubperf_roudi::{HEADROOM, config_toml, default_pools, max_payload_of_config, owner_of};

#[test]
fn config_round_trips_largest_payload() {
    let pools = default_pools();
    let toml = config_toml(&pools);
    assert_eq!(
        max_payload_of_config(&toml),
        Some(256 * 1024 * 1024 + HEADROOM)
    );
    assert!(toml.contains("[[segment.mempool]]"));
}

#[test]
fn pools_stay_near_1_3_gib() {
    let total: usize = default_pools()
        .iter()
        .map(|p| (p.size + 64) * p.count as usize)
        .sum();
    assert!(total < 1400 * 1024 * 1024, "{total}");
}

#[test]
fn parses_comments_and_spaces() {
    let t = "[[segment.mempool]]\n size= 128 # small\ncount = 3\nsize =4096\n";
    assert_eq!(max_payload_of_config(t), Some(4096));
    assert_eq!(max_payload_of_config("[general]\nversion = 1\n"), None);
}

#[test]
fn our_config_names_its_owner_and_others_have_none() {
    let p = std::path::PathBuf::from(format!(
        "{}config-test-{}.toml",
        pubsubperf_roudi::CONFIG_PREFIX,
        std::process::id()
    ));
    std::fs::write(&p, config_toml(&default_pools())).expect("write config");
    let owner = owner_of(&p);
    std::fs::remove_file(&p).expect("remove config");
    assert_eq!(owner, Some(std::process::id() as i32));
    // The same text elsewhere is not one of ours.
    let d = std::env::temp_dir().join(format!("roudi-other-{}.toml", std::process::id()));
    std::fs::write(&d, config_toml(&default_pools())).expect("write");
    let other = owner_of(&d);
    std::fs::remove_file(&d).expect("remove");
    assert_eq!(other, None);
}
