//! How the PostgreSQL store is reached, as libpq would: the URL
//! (`postgres://USER@HOST[:PORT]/DB[?sslmode=MODE]`, never with a
//! password in it), the password from `PGPASSWORD` or the password file
//! (`PGPASSFILE`, else `~/.pgpass`, ignored unless only its owner can
//! read it), and TLS as `sslmode` (else `PGSSLMODE`) says.

use crate::error::{ReportError, Result};
use std::path::{Path, PathBuf};

/// libpq's `sslmode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it (libpq's `allow` is taken as this).
    Prefer,
    /// TLS or no connection; the certificate checked only when a root
    /// certificate is at hand (`PGSSLROOTCERT`, `~/.postgresql/root.crt`).
    Require,
    /// TLS with the server's certificate checked against the root
    /// certificates.
    VerifyCa,
    /// As `VerifyCa`, and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given less `sslmode` (what the client parses).
    pub url: String,
    /// The store's name in messages: the URL as given (it has no password).
    pub name: String,
    /// TLS.
    pub ssl: SslMode,
    /// The password found (`PGPASSWORD`, the password file), if any.
    pub password: Option<String>,
    /// Why the password file was not read, when it was not.
    pub passfile_note: Option<String>,
}

/// `url` with any password in it masked (`user:***@`, `password=***`).
fn redact(url: &str) -> String {
    let (head, query) = url
        .split_once('?')
        .map_or((url, None), |(h, q)| (h, Some(q)));
    let (scheme, rest) = head.split_once("://").unwrap_or(("", head));
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, None), |(a, p)| (a, Some(p)));
    let authority = match authority.rsplit_once('@') {
        Some((u, h)) if u.contains(':') => {
            format!("{}:***@{h}", u.split_once(':').map_or(u, |(n, _)| n))
        }
        _ => authority.to_string(),
    };
    let mut out = format!("{scheme}://{authority}");
    if let Some(p) = path {
        out = format!("{out}/{p}");
    }
    if let Some(q) = query {
        let q: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some(("password", _)) => "password=***".to_string(),
                _ => kv.to_string(),
            })
            .collect();
        out = format!("{out}?{}", q.join("&"));
    }
    out
}

fn url_error(url: &str, message: impl Into<String>) -> ReportError {
    ReportError::StoreUrl {
        url: redact(url),
        message: message.into(),
    }
}

/// The user, host, port and database a URL names (decoded), for the
/// password file; `None` where the URL leaves one to the defaults.
struct Parts {
    user: Option<String>,
    host: Option<String>,
    port: Option<String>,
    db: Option<String>,
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits `scheme://[user[:password]@]host[:port][/db][?query]`; refuses a
/// password.
fn split(url: &str) -> Result<(Parts, Vec<(String, String)>)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, db) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if userinfo.is_some_and(|u| u.contains(':')) {
        return Err(url_error(
            url,
            "holds a password, which would show in the process list and the shell's history; \
             drop it from the URL and set PGPASSWORD or put it in ~/.pgpass (mode 0600)",
        ));
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, Some(p)),
        _ => (hostport, None),
    };
    if let Some(p) = port
        && p.parse::<u16>().is_err()
    {
        return Err(url_error(url, format!("port '{p}' is not a port number")));
    }
    let some = |s: &str| (!s.is_empty()).then(|| decode(s));
    let mut params = Vec::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        params.push((decode(k), decode(v)));
    }
    if params.iter().any(|(k, _)| k == "password") {
        return Err(url_error(
            url,
            "holds a password (password=), which would show in the process list and the shell's \
             history; drop it and set PGPASSWORD or put it in ~/.pgpass (mode 0600)",
        ));
    }
    Ok((
        Parts {
            user: userinfo.and_then(some),
            host: some(host.trim_start_matches('[').trim_end_matches(']')),
            port: port.and_then(some),
            db: some(db),
        },
        params,
    ))
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// Reads the target of `url`: its TLS mode and the password from the
/// environment or the password file.
pub fn target(url: &str) -> Result<Target> {
    let (parts, params) = split(url)?;
    let mut ssl = None;
    let mut kept = Vec::new();
    for (k, v) in &params {
        if k == "sslmode" {
            ssl = Some(SslMode::parse(v).ok_or_else(|| {
                url_error(
                    url,
                    format!(
                        "sslmode '{v}': expected disable, allow, prefer, require, verify-ca or verify-full"
                    ),
                )
            })?);
        } else {
            kept.push(format!("{k}={v}"));
        }
    }
    let ssl = match ssl {
        Some(m) => m,
        None => match env("PGSSLMODE") {
            Some(v) => SslMode::parse(&v).ok_or_else(|| {
                url_error(
                    url,
                    format!(
                        "PGSSLMODE '{v}': expected disable, allow, prefer, require, verify-ca or verify-full"
                    ),
                )
            })?,
            None => SslMode::Prefer,
        },
    };
    let base = url.split_once('?').map_or(url, |(b, _)| b);
    let client_url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let user = parts
        .user
        .clone()
        .or_else(|| env("PGUSER"))
        .or_else(|| env("USER"));
    let (password, passfile_note) = match env("PGPASSWORD") {
        Some(p) => (Some(p), None),
        None => {
            let file = env("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")));
            match file {
                Some(f) => {
                    let host = parts.host.clone().unwrap_or_else(|| "localhost".into());
                    // A socket directory is "localhost" to the password file.
                    let host = if host.starts_with('/') {
                        "localhost".into()
                    } else {
                        host
                    };
                    let port = parts.port.clone().unwrap_or_else(|| "5432".into());
                    let user = user.clone().unwrap_or_default();
                    let db = parts.db.clone().unwrap_or_else(|| user.clone());
                    passfile(&f, [&host, &port, &db, &user])
                }
                None => (None, None),
            }
        }
    };
    Ok(Target {
        url: client_url,
        name: url.to_string(),
        ssl,
        password,
        passfile_note,
    })
}

/// The password of the first line of the password file at `path` that
/// matches `[host, port, database, user]` (each field `*` or equal), or
/// why the file was not read. libpq's format: `host:port:db:user:password`,
/// `\` escaping `:` and `\`, `#` starting a comment line; the file is
/// ignored when its group or others may read it.
fn passfile(path: &Path, want: [&String; 4]) -> (Option<String>, Option<String>) {
    use std::os::unix::fs::MetadataExt;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return (None, None),
    };
    if !meta.is_file() {
        return (None, None);
    }
    if meta.mode() & 0o077 != 0 {
        return (
            None,
            Some(format!(
                "{} was not read: others than its owner may read it (chmod 0600 it, as libpq asks)",
                path.display()
            )),
        );
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return (None, None);
    };
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let fields = fields(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return (Some(fields[4].clone()), None);
        }
    }
    (None, None)
}

/// A password file line's fields: split at unescaped `:`, the last one
/// (the password) taking the rest of the line.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' if out.len() < 4 => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_refused() {
        for url in [
            "postgres://bob:secret@db.lab/results",
            "postgresql://bob@db.lab/results?password=secret",
        ] {
            let e = target(url).expect_err(url);
            assert!(e.is_usage(), "{e}");
            let m = e.to_string();
            assert!(m.contains("PGPASSWORD") && m.contains(".pgpass"), "{m}");
            assert!(!m.contains("secret"), "the password is not repeated: {m}");
            assert!(!m.contains('\n'), "{m}");
        }
    }

    #[test]
    fn urls_split_as_libpq_reads_them() {
        let (p, q) = split("postgres://bo%40b@[::1]:5433/res?sslmode=require").unwrap();
        assert_eq!(p.user.as_deref(), Some("bo@b"));
        assert_eq!(p.host.as_deref(), Some("::1"));
        assert_eq!(p.port.as_deref(), Some("5433"));
        assert_eq!(p.db.as_deref(), Some("res"));
        assert_eq!(q, [("sslmode".to_string(), "require".to_string())]);
        let (p, _) = split("postgresql://%2Ftmp%2Fs/res").unwrap();
        assert_eq!(p.host.as_deref(), Some("/tmp/s"));
        assert_eq!(p.user, None);
        assert!(target("postgres://u@h/d?sslmode=sometimes").is_err());
    }

    #[test]
    fn the_password_file_is_read_as_libpq_reads_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:*:*:*:no\ndb.lab:5432:res:bob:pa\\:ss:word\n*:*:*:*:fallback\n",
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let s = |v: &str| v.to_string();
        let want = [&s("db.lab"), &s("5432"), &s("res"), &s("bob")];
        assert_eq!(passfile(&f, want).0.as_deref(), Some("pa:ss:word"));
        let want = [&s("x"), &s("1"), &s("y"), &s("z")];
        assert_eq!(passfile(&f, want).0.as_deref(), Some("fallback"));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (p, note) = passfile(&f, want);
        assert_eq!(p, None);
        assert!(note.unwrap().contains("chmod 0600"));
    }
}
