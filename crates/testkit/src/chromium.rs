//! Headless Chromium for the tests that look at a report as a browser
//! draws it (Debian's `chromium`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The browser on PATH, if any.
pub fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The browser, or the test fails naming the package.
pub fn require() -> PathBuf {
    chromium().expect(
        "prerequisite missing: chromium, for the browser part (Debian package chromium; scripts/setup.sh installs it)",
    )
}

/// A headless Chromium run. Its profile, home and output files are in a
/// temporary directory of its own (a pipe would fill and stall it), removed
/// after it; every process naming that directory (the browser, its
/// renderers, its crash handler) is killed when this is dropped, so a
/// failing or hanging test leaves no browser behind.
pub struct Chromium {
    child: Child,
    dir: tempfile::TempDir,
}

impl Chromium {
    /// At most this long for one page.
    pub const LIMIT: Duration = Duration::from_secs(120);

    pub fn start(exe: &Path, args: &[String]) -> Chromium {
        let dir = tempfile::tempdir().unwrap();
        let at = |n: &str| dir.path().join(n);
        let file = |n: &str| std::fs::File::create(at(n)).unwrap();
        let child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", at("profile").display()))
            .args(args)
            .env("HOME", at("home"))
            .env("XDG_CONFIG_HOME", at("config"))
            .env("XDG_CACHE_HOME", at("cache"))
            .stdin(Stdio::null())
            .stdout(file("stdout"))
            .stderr(file("stderr"))
            .spawn()
            .expect("chromium starts");
        Chromium { child, dir }
    }

    /// Waits for the browser to end (it is killed after [`Self::LIMIT`]);
    /// its stdout and stderr.
    pub fn output(mut self) -> (String, String) {
        let start = Instant::now();
        while self.child.try_wait().expect("wait").is_none() && start.elapsed() < Self::LIMIT {
            std::thread::sleep(Duration::from_millis(100));
        }
        let read = |n: &str| std::fs::read_to_string(self.dir.path().join(n)).unwrap_or_default();
        (read("stdout"), read("stderr"))
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mine = self.dir.path().to_string_lossy().into_owned();
        for _ in 0..100 {
            let left = crate::process::naming(&mine);
            if left.is_empty() {
                break;
            }
            left.into_iter().for_each(crate::process::kill9);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The page at `url` as Chromium parsed it (`--dump-dom`).
pub fn rendered_dom(exe: &Path, url: &str) -> String {
    let (dom, err) = Chromium::start(exe, &["--dump-dom".into(), url.into()]).output();
    assert!(dom.contains("</html>"), "chromium rendered nothing: {err}");
    dom
}
