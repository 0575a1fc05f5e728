//! Wall-clock time stamps (RFC 3339, UTC) and `--since` values, without a
//! date crate.

use crate::error::{ReportError, Result};

pub use pubsubperf_core::time::{now_secs, rfc3339, rfc3339_now};

/// Parses `--since`: an RFC 3339 UTC time or date (`2026-11-21`,
/// `2026-11-21T10:00:00Z`), or an age (`30m`, `12h`, `7d`, `2w`) counted
/// back from `now` (seconds since the epoch). Returns the RFC 3339 lower
/// bound that stored times (same format) are compared with as text.
pub fn parse_since(s: &str, now: u64) -> Result<String> {
    let t = s.trim();
    let bad = |m: &str| ReportError::Filter {
        flag: "--since",
        value: s.to_string(),
        message: m.to_string(),
    };
    if let Some(unit) = t.chars().last().filter(|c| c.is_ascii_alphabetic())
        && t[..t.len() - 1].chars().all(|c| c.is_ascii_digit())
        && t.len() > 1
    {
        let n: u64 = t[..t.len() - 1]
            .parse()
            .map_err(|_| bad("expected a number before the unit"))?;
        let secs = match unit {
            's' => n,
            'm' => n * 60,
            'h' => n * 3600,
            'd' => n * 86_400,
            'w' => n * 7 * 86_400,
            _ => return Err(bad("unknown unit (use s, m, h, d or w, e.g. 7d)")),
        };
        return Ok(rfc3339(now.saturating_sub(secs)));
    }
    let b = t.as_bytes();
    let date_ok = b.len() >= 10
        && b[4] == b'-'
        && b[7] == b'-'
        && t[..4].chars().all(|c| c.is_ascii_digit())
        && t[5..7].chars().all(|c| c.is_ascii_digit())
        && t[8..10].chars().all(|c| c.is_ascii_digit());
    if !date_ok {
        return Err(bad(
            "expected a date (2026-11-21), a UTC time (2026-11-21T10:00:00Z) or an age (12h, 7d)",
        ));
    }
    if b.len() == 10 {
        return Ok(format!("{t}T00:00:00Z"));
    }
    if b.len() == 20 && b[10] == b'T' && b[19] == b'Z' {
        return Ok(t.to_string());
    }
    Err(bad("times must be UTC in the form 2026-11-21T10:00:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_305_600), "2026-11-22T00:00:00Z");
    }

    #[test]
    fn since_values() {
        let now = 1_795_305_600;
        assert_eq!(parse_since("1d", now).unwrap(), "2026-11-21T00:00:00Z");
        assert_eq!(parse_since("2h", now).unwrap(), "2026-11-21T22:00:00Z");
        assert_eq!(
            parse_since("2026-11-01", now).unwrap(),
            "2026-11-01T00:00:00Z"
        );
        assert_eq!(
            parse_since("2026-11-01T10:00:00Z", now).unwrap(),
            "2026-11-01T10:00:00Z"
        );
        for bad in ["yesterday", "3y", "2026-11-01 10:00", "x1d"] {
            let e = parse_since(bad, now).unwrap_err().to_string();
            assert!(e.starts_with("--since"), "{e}");
        }
    }
}
