//! Sample sizes as users write them: `64`, `1KiB`, `64KiB`, `1MiB`, `1.5MB`,
//! lists `32,64,1KiB`. Binary suffixes (KiB, MiB, GiB) are powers of 1024,
//! decimal ones (KB, MB, GB) powers of 1000; `K`/`M`/`G` alone are binary
//! (as ddsperf and Perftest users expect).

/// Parses one size. The error says what is wrong and what is accepted.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "bad size '{s}': expected a number like 64, 1KiB or 16MiB"
        ));
    }
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        other => {
            return Err(format!(
                "bad size '{s}': unknown unit '{other}' (use B, KiB, MiB, GiB, KB, MB or GB)"
            ));
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad size '{s}': '{num}' is not a number"))?;
    let v = n * mult;
    if v.fract() != 0.0 {
        return Err(format!("bad size '{s}': not a whole number of bytes"));
    }
    if v < 1.0 || v > (1u64 << 40) as f64 {
        return Err(format!("bad size '{s}': must be between 1 B and 1 TiB"));
    }
    Ok(v as usize)
}

/// Parses a comma-separated list of sizes; at least one.
pub fn parse_size_list(s: &str) -> Result<Vec<usize>, String> {
    let v: Result<Vec<usize>, String> = s
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(parse_size)
        .collect();
    let v = v?;
    if v.is_empty() {
        return Err(format!("bad size list '{s}': no size given"));
    }
    Ok(v)
}

/// Formats a byte count compactly and exactly (`64`, `1KiB`, `1000`, `63001`).
pub fn format_size(n: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (u, name) in UNITS {
        if n >= u && n.is_multiple_of(u) {
            return format!("{}{}", n / u, name);
        }
    }
    n.to_string()
}

/// [`format_size`] with its unit always said (`64 B`, `1KiB`), for prose.
pub fn format_size_with_unit(n: usize) -> String {
    let s = format_size(n);
    if s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{s} B")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_size("64").unwrap(), 64);
        assert_eq!(parse_size("1KiB").unwrap(), 1024);
        assert_eq!(parse_size("1k").unwrap(), 1024);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
        assert_eq!(parse_size("50MB").unwrap(), 50_000_000);
        assert_eq!(parse_size(" 16 B").unwrap(), 16);
    }

    #[test]
    fn rejects_bad() {
        for bad in ["", "abc", "-1", "0", "1.3", "12XB", "1..2KiB", "2TiB"] {
            assert!(parse_size(bad).is_err(), "{bad} accepted");
        }
        let e = parse_size("12XB").unwrap_err();
        assert!(e.contains("unknown unit"), "{e}");
    }

    #[test]
    fn lists() {
        assert_eq!(
            parse_size_list("32,64,1KiB,64KiB,1MiB").unwrap(),
            vec![32, 64, 1024, 65536, 1 << 20]
        );
        assert!(parse_size_list(",").is_err());
        assert!(parse_size_list("32,x").is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(format_size(64), "64");
        assert_eq!(format_size(1024), "1KiB");
        assert_eq!(format_size(63001), "63001");
        assert_eq!(format_size(16 << 20), "16MiB");
    }
}
