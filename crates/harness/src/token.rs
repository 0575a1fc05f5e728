//! The agent's secret: a token file that only its owner can read.
//!
//! An agent listening on a network address accepts a publisher only when
//! the publisher's [`Msg::Hello`](crate::protocol::Msg::Hello) carries the
//! token. The agent creates the file (mode 0600, 256 random bits as hex)
//! the first time it starts; a publisher on the same host and user finds it
//! at the same place, a publisher on another host is given a copy (or
//! starts the agent over SSH, where no token is needed: only the SSH user
//! can talk to an agent on its standard input).
//!
//! Where the file is: `--token-file`, else `$PUBSUBPERF_TOKEN_FILE`, else
//! `$XDG_CONFIG_HOME/pubsubperf/agent.token`, else
//! `$HOME/.config/pubsubperf/agent.token`.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The environment variable naming the token file.
pub const ENV: &str = "PUBSUBPERF_TOKEN_FILE";

/// Why a token file cannot be used; the message names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// No `--token-file`, no environment variable and no home directory.
    #[error("no token file: set --token-file or {ENV} (HOME and XDG_CONFIG_HOME are both unset)")]
    NoPath,
    /// The file is readable or writable by others.
    #[error(
        "token file {path}: mode {mode:04o} lets others read it; run 'chmod 600 {path}'",
        path = .0.display(),
        mode = .1
    )]
    Open(PathBuf, u32),
    /// The file holds no token.
    #[error("token file {}: empty or not one line of text", .0.display())]
    Empty(PathBuf),
    /// Reading or creating the file failed.
    #[error("token file {}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

/// The token file's path: `flag`, else the environment, else the user's
/// configuration directory.
pub fn path(flag: Option<&Path>) -> Result<PathBuf, TokenError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var(ENV) {
        return Ok(PathBuf::from(p));
    }
    let config = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or(TokenError::NoPath)?;
    Ok(config.join("pubsubperf").join("agent.token"))
}

/// Reads the token at `path`; refuses a file others can read.
pub fn load(path: &Path) -> Result<String, TokenError> {
    let io = |e| TokenError::Io(path.to_path_buf(), e);
    let meta = std::fs::metadata(path).map_err(io)?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(TokenError::Open(path.to_path_buf(), mode));
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(TokenError::Empty(path.to_path_buf()));
    }
    Ok(token.to_string())
}

/// The token at `path`, created (mode 0600, its directory 0700) when the
/// file does not exist. Two agents starting at once agree on one token: the
/// file appears whole, by a hard link that fails if it already exists.
pub fn load_or_create(path: &Path) -> Result<String, TokenError> {
    match load(path) {
        Err(TokenError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    let io = |e| TokenError::Io(path.to_path_buf(), e);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    let written = writeln!(f, "{}", random_hex(32)?).and_then(|_| f.sync_all());
    let linked = written.and_then(|_| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    load(path)
}

/// `n` random bytes from the kernel, as lowercase hex.
fn random_hex(n: usize) -> Result<String, TokenError> {
    use std::io::Read;
    let dev = Path::new("/dev/urandom");
    let mut bytes = vec![0u8; n];
    std::fs::File::open(dev)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| TokenError::Io(dev.to_path_buf(), e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares a presented token with the expected one in time that does not
/// depend on where they differ.
pub fn matches(expected: &str, presented: Option<&str>) -> bool {
    let Some(p) = presented else { return false };
    let (a, b) = (expected.as_bytes(), p.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
