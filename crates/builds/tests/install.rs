//! Installing: `scripts/install.sh` into a prefix, and the Debian package
//! that `scripts/package.sh` builds (scripts/test.sh builds it before these
//! tests) inspected with dpkg-deb and installed with apt into a clean
//! Debian root made by debootstrap, where `pubsubperf bindings` must find
//! every binding's library through the package's declared dependencies.

use pubsubperf_builds::{host_binary, root, target_dir};
use std::path::PathBuf;
use std::process::{Command, Output};

fn ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sh(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    ok(what, out)
}

#[test]
fn install_script_puts_binary_man_pages_and_completions_under_the_prefix() {
    let prefix = tempfile::tempdir().unwrap();
    let printed = sh(
        "scripts/install.sh",
        Command::new(root().join("scripts/install.sh"))
            .arg("--binary")
            .arg(host_binary())
            .arg("--prefix")
            .arg(prefix.path()),
    );
    for file in [
        "bin/pubsubperf",
        "share/man/man1/pubsubperf.1.gz",
        "share/man/man1/pubsubperf-latency.1.gz",
        "share/man/man1/pubsubperf-agent.1.gz",
        "share/bash-completion/completions/pubsubperf",
        "share/zsh/site-functions/_pubsubperf",
        "share/fish/vendor_completions.d/pubsubperf.fish",
    ] {
        let p = prefix.path().join(file);
        assert!(p.is_file(), "{} missing; printed:\n{printed}", p.display());
        assert!(printed.contains(&p.display().to_string()), "{printed}");
    }
    let out = Command::new(prefix.path().join("bin/pubsubperf"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(ok("installed --version", out).starts_with("pubsubperf "));
}

/// The packages of this version for `arch` (Debian's name), as
/// `scripts/package.sh [aarch64|armhf]` names them.
fn packages(arch: &str) -> (PathBuf, PathBuf) {
    let dir = target_dir().join("debian");
    let version = env!("CARGO_PKG_VERSION");
    let deb = dir.join(format!("pubsubperf_{version}-1_{arch}.deb"));
    let dbgsym = dir.join(format!("pubsubperf-dbgsym_{version}-1_{arch}.ddeb"));
    let how = match arch {
        "amd64" => "scripts/package.sh",
        "arm64" => "scripts/package.sh aarch64",
        _ => "scripts/package.sh armhf",
    };
    for p in [&deb, &dbgsym] {
        assert!(
            p.is_file(),
            "{} is missing: build the packages with {how} (scripts/test.sh does)",
            p.display()
        );
    }
    (deb, dbgsym)
}

fn field<'a>(control: &'a str, name: &str) -> &'a str {
    control
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} in:\n{control}"))
}

#[test]
fn amd64_deb_declares_the_libraries_and_carries_man_pages_and_completions() {
    declares_the_libraries_and_carries_man_pages_and_completions("amd64");
}

/// The arm64 package's binary runs here under qemu-user (binfmt_misc).
#[test]
fn arm64_deb_declares_the_libraries_and_carries_man_pages_and_completions() {
    declares_the_libraries_and_carries_man_pages_and_completions("arm64");
}

/// The armhf package, whose dependencies dpkg-shlibdeps reads from the
/// board libraries' packages unpacked in the sysroot.
#[test]
fn armhf_deb_declares_the_libraries_and_carries_man_pages_and_completions() {
    declares_the_libraries_and_carries_man_pages_and_completions("armhf");
}

/// The package's control fields and files, its binary without debug info
/// (which is in the -dbgsym package) and runnable.
fn declares_the_libraries_and_carries_man_pages_and_completions(arch: &str) {
    let (deb, dbgsym) = packages(arch);
    let control = sh("dpkg-deb -f", Command::new("dpkg-deb").arg("-f").arg(&deb));
    assert_eq!(field(&control, "Package"), "pubsubperf");
    assert_eq!(field(&control, "Architecture"), arch);
    let depends = field(&control, "Depends");
    for lib in [
        "libddsc0debian",
        "libfastrtps2.9",
        "libiceoryx-binding-c2",
        "libsqlite3-0",
        "libc6",
    ] {
        assert!(depends.contains(lib), "Depends lacks {lib}: {depends}");
    }
    let files = sh("dpkg-deb -c", Command::new("dpkg-deb").arg("-c").arg(&deb));
    for f in [
        "./usr/bin/pubsubperf",
        "./usr/share/man/man1/pubsubperf.1.gz",
        "./usr/share/man/man1/pubsubperf-throughput.1.gz",
        "./usr/share/bash-completion/completions/pubsubperf",
        "./usr/share/zsh/vendor-completions/_pubsubperf",
        "./usr/share/fish/vendor_completions.d/pubsubperf.fish",
        "./usr/share/doc/pubsubperf/examples/sweeps/quick.toml",
        "./usr/share/doc/pubsubperf/docs/install.md",
    ] {
        assert!(files.contains(f), "{} lacks {f}:\n{files}", deb.display());
    }
    // The debug info is in the -dbgsym package, by build id; the installed
    // binary has none.
    let debug = sh(
        "dpkg-deb -c dbgsym",
        Command::new("dpkg-deb").arg("-c").arg(&dbgsym),
    );
    assert!(debug.contains("./usr/lib/debug/.build-id/"), "{debug}");
    let dir = tempfile::tempdir().unwrap();
    sh(
        "dpkg-deb -x",
        Command::new("dpkg-deb").arg("-x").arg(&deb).arg(dir.path()),
    );
    let sections = sh(
        "readelf -S",
        Command::new("readelf")
            .arg("-SW")
            .arg(dir.path().join("usr/bin/pubsubperf")),
    );
    assert!(
        !sections.contains(".debug_info"),
        "the packaged binary has debug info"
    );
}

/// debootstrap's minimal Debian 12 in a fresh directory, the package
/// installed by apt there as a user would (which fetches the declared
/// dependencies, and the recommended iceoryx for iox-roudi, from the
/// archive), and `pubsubperf bindings` run inside it. /proc and
/// /dev/shm are mounted in a mount namespace of the test's own, so they go
/// with it; the directory is removed at the end.
#[test]
fn deb_installs_into_a_clean_debian_root_and_runs() {
    let (deb, _) = packages("amd64");
    for (tool, package) in [("debootstrap", "debootstrap"), ("unshare", "util-linux")] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "prerequisite missing: {tool} (Debian package {package})"
        );
    }
    let work = tempfile::Builder::new()
        .prefix("debroot")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let chroot = work.path().join("root");
    sh(
        "debootstrap (needs deb.debian.org)",
        Command::new("debootstrap")
            .args(["--variant=minbase", "bookworm"])
            .arg(&chroot)
            .arg("http://deb.debian.org/debian"),
    );
    std::fs::copy("/etc/resolv.conf", chroot.join("etc/resolv.conf")).unwrap();
    std::fs::copy(&deb, chroot.join("tmp/pubsubperf.deb")).unwrap();
    let inside = "set -e; mount -t proc proc /proc; mount -t tmpfs tmpfs /dev/shm; \
        export DEBIAN_FRONTEND=noninteractive; \
        apt-get -o APT::Sandbox::User=root update -qq; \
        apt-get -o APT::Sandbox::User=root install -y -qq /tmp/pubsubperf.deb >/dev/null; \
        pubsubperf bindings --json";
    let listed = sh(
        "apt-get install of the package in the clean root, then pubsubperf bindings",
        Command::new("unshare")
            .args(["--mount", "--fork", "chroot"])
            .arg(&chroot)
            .args(["sh", "-c", inside]),
    );
    pubsubperf_testkit::listing::assert_available(
        &listed,
        &[
            "udp",
            "shm",
            "cyclonedds",
            "fastdds",
            "iceoryx",
            "iceoryx2",
            "zenoh",
        ],
        "the clean root",
    );
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(
        !mounts.contains(&chroot.display().to_string()),
        "a mount of the clean root outlived its namespace"
    );
}
