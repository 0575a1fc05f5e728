//! Wall-clock time stamps for results (RFC 3339, UTC), without a date crate,
//! and durations as a reader writes them.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Now as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_now() -> String {
    rfc3339(now_secs())
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Parses a duration as users write it: `10` (seconds), `10s`, `500ms`,
/// `250us`, `2m`, `1.5s`, `1h`; at most a year. The error quotes the text
/// and says what is accepted (the caller names the flag or key).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}': expected a time like 10s, 500ms or 2m"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "ns" => n / 1e9,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "'{s}': unknown unit '{unit}' (use ns, us, ms, s, m or h)"
            ));
        }
    };
    if !secs.is_finite() || !(0.0..=366.0 * 86400.0).contains(&secs) {
        return Err(format!("'{s}': out of range"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Milliseconds as `10 s`, `1.5 s` or `100 ms`.
pub fn format_millis(ms: u64) -> String {
    match ms {
        ms if ms >= 1000 && ms % 100 == 0 => format!("{} s", ms as f64 / 1000.0),
        ms => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_305_600), "2026-11-22T00:00:00Z");
    }

    #[test]
    fn milliseconds_read_as_written() {
        assert_eq!(super::format_millis(10_000), "10 s");
        assert_eq!(super::format_millis(1_500), "1.5 s");
        assert_eq!(super::format_millis(100), "100 ms");
        assert_eq!(super::format_millis(1_234), "1234 ms");
    }
}
