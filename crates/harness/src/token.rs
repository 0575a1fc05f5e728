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
//! A token written by hand must hold at least [`MIN_BITS`] bits
//! ([`bits`]): the agent proves itself first ([`crate::auth`]), so one
//! captured challenge lets anyone test guesses offline, as fast as they can
//! compute HMACs; only a token of that size makes this pointless.
//! `pubsubperf agent --new-token` writes a fresh one ([`create_new`]).
//!
//! Where the file is: `--token-file`, else `$PUBSUBPERF_TOKEN_FILE`, else
//! `$XDG_CONFIG_HOME/pubsubperf/agent.token`, else
//! `$HOME/.config/pubsubperf/agent.token`.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
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
    /// The token is too short to resist guessing ([`bits`]).
    #[error(
        "token file {path}: the token has {bits} bits, at least {MIN_BITS} are needed; make one with 'pubsubperf agent --new-token --token-file {path}' (after removing this one)",
        path = .0.display(),
        bits = .1
    )]
    Weak(PathBuf, u32),
    /// `--new-token` would replace a token publishers may hold.
    #[error(
        "token file {path} exists; to replace its token, remove it ('rm {path}') and run 'pubsubperf agent --new-token' again, then give publishers the new copy",
        path = .0.display()
    )]
    Exists(PathBuf),
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

/// Tokens with fewer bits than this are refused ([`bits`]).
pub const MIN_BITS: u32 = 128;

/// Bits of a token created here (32 random bytes).
pub const NEW_BITS: u32 = 256;

/// What a token can hold at most, by its length and alphabet: 4 bits a
/// character when it is all hex digits; otherwise log2 of the characters
/// its classes hold (10 digits, 26 lowercase, 26 uppercase, 33 other
/// characters), rounded down. A token of words holds far less than this
/// count says: make one with `--new-token`.
pub fn bits(token: &str) -> u32 {
    let n = token.chars().count() as f64;
    if token.chars().all(|c| c.is_ascii_hexdigit()) {
        return (4.0 * n) as u32;
    }
    let has = |class: fn(&char) -> bool| token.chars().any(|c| class(&c));
    let alphabet = [
        (has(char::is_ascii_digit), 10),
        (has(char::is_ascii_lowercase), 26),
        (has(char::is_ascii_uppercase), 26),
        (has(|c| !c.is_ascii_alphanumeric()), 33),
    ]
    .iter()
    .filter(|(present, _)| *present)
    .map(|(_, size)| size)
    .sum::<u32>();
    (n * f64::from(alphabet).log2()) as u32
}

/// [`load`] for the agent that checks proofs with it: a token of fewer
/// than [`MIN_BITS`] bits is refused, with the fix.
pub fn load_strong(path: &Path) -> Result<String, TokenError> {
    let token = load(path)?;
    match bits(&token) {
        b if b < MIN_BITS => Err(TokenError::Weak(path.to_path_buf(), b)),
        _ => Ok(token),
    }
}

/// The agent's token at `path` ([`load_strong`]), created ([`create_new`])
/// when the file does not exist. Two agents starting at once agree on one
/// token.
pub fn load_or_create(path: &Path) -> Result<String, TokenError> {
    match load_strong(path) {
        Err(TokenError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    match create_new(path) {
        Ok(_) | Err(TokenError::Exists(_)) => load_strong(path),
        Err(e) => Err(e),
    }
}

/// Writes a fresh token of [`NEW_BITS`] bits to `path` (mode 0600, its
/// directory created 0700) and returns it; refuses a `path` that exists.
/// The file appears whole: written to a private temporary file of a random
/// name (created exclusively, never through a symlink) beside it, then
/// hard-linked to `path`, which fails if anything (a symlink too) is there.
pub fn create_new(path: &Path) -> Result<String, TokenError> {
    let io = |e| TokenError::Io(path.to_path_buf(), e);
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => Path::new("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    let token = random_hex(NEW_BITS as usize / 8)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".agent-token.")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(io)?;
    writeln!(tmp, "{token}")
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(io)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(token),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(TokenError::Exists(path.to_path_buf()))
        }
        Err(e) => Err(io(e.error)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_count_hex_at_four_and_other_text_by_its_alphabet() {
        assert_eq!(bits("abc"), 12);
        assert_eq!(bits(&"0f".repeat(16)), 128);
        assert_eq!(bits(&"a".repeat(32)), 128, "a is a hex digit");
        // 26 lowercase letters: 4.70 bits each.
        assert_eq!(bits("password"), 37);
        // Digits, both cases and others: 95 characters, 6.57 bits each.
        assert_eq!(bits("Pa55-word"), 59);
        assert_eq!(bits(&"Zz9_".repeat(4)), 105);
        assert_eq!(bits(&"Zz9_".repeat(5)), 131);
    }

    #[test]
    fn a_weak_token_is_refused_with_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("agent.token");
        std::fs::write(&p, "abc\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = load_or_create(&p).unwrap_err().to_string();
        assert!(
            e.contains("the token has 12 bits, at least 128 are needed")
                && e.contains("pubsubperf agent --new-token"),
            "{e}"
        );
        // A publisher still reads it (the agent is the one that refuses).
        assert_eq!(load(&p).unwrap(), "abc");
    }

    #[test]
    fn a_new_token_is_private_whole_and_never_replaces_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("new").join("agent.token");
        let t = create_new(&p).unwrap();
        assert_eq!(bits(&t), NEW_BITS);
        assert_eq!(load_strong(&p).unwrap(), t);
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let e = create_new(&p).unwrap_err().to_string();
        assert!(
            e.contains("exists") && e.contains(&format!("rm {}", p.display())),
            "{e}"
        );
        assert_eq!(load(&p).unwrap(), t, "the token was replaced");
        // A symlink planted at the token's path is not followed.
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = d.path().join("linked.token");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(matches!(create_new(&link), Err(TokenError::Exists(_))));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // Nothing but the token is left beside it.
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
