//! Prerequisites of a test. A test that needs something the machine lacks
//! fails at once with a line naming it and how to get it; it never passes
//! having checked nothing. (A test that cannot run in some environment on
//! purpose is `#[ignore = "why"]` instead.) `scripts/test.sh` installs
//! every prerequisite, so CI runs every test.

use std::path::Path;

/// Fails the test unless it runs as root.
pub fn root(why: &str) {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert!(
        euid == 0,
        "prerequisite missing: root (for {why}); run the tests as root, as scripts/test.sh does"
    );
}

/// Fails the test unless `program` is on the PATH; `package` is the Debian
/// package that has it.
pub fn command(program: &str, package: &str) {
    assert!(
        find_on_path(program).is_some(),
        "prerequisite missing: the command '{program}' (Debian package {package}; scripts/setup.sh installs it)"
    );
}

/// Fails the test unless the shared library `soname` can be found by the
/// dynamic loader (`ldconfig -p`); `package` is the Debian package.
pub fn library(soname: &str, package: &str) {
    // ldconfig lives in /sbin, which a user's PATH may lack.
    let ldconfig = find_on_path("ldconfig").unwrap_or_else(|| "/sbin/ldconfig".into());
    let listed = std::process::Command::new(ldconfig)
        .arg("-p")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(soname))
        .unwrap_or(false);
    assert!(
        listed,
        "prerequisite missing: the library {soname} (Debian package {package}; scripts/setup.sh installs it)"
    );
}

/// The full path of `program` on the PATH, if any.
pub fn find_on_path(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| program.into());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}
