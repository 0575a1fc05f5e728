//! Sending rates as users write them: `100`, `2.5k`, `1M` samples per
//! second (`k` and `M` are powers of 1000, as rates are counted), or `max`
//! for no limit (as fast as the binding accepts). The command line's
//! `--rate` list and a sweep file's `rate` axis both read rates here.

/// A rate in samples per second; 0 stands for `max` (no limit), as in a
/// run's `config.rate`.
pub type Rate = f64;

/// Parses one rate: a positive number with an optional `k` (×1000) or `M`
/// (×10⁶) suffix, or `max` (returned as 0). The error says what is wrong
/// and what is accepted.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    if t == "max" {
        return Ok(0.0);
    }
    let (num, mult) = match t.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => match t.strip_suffix('M') {
            Some(n) => (n, 1e6),
            None => (t, 1.0),
        },
    };
    // Digits and one point only: no sign, exponent, `inf` or `nan`.
    let plain = !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit() || c == '.')
        && num.matches('.').count() <= 1;
    let n: f64 = match num.parse() {
        Ok(n) if plain => n,
        _ => {
            return Err(format!(
                "'{t}' is not a rate (give samples per second like 100, 2.5k or 1M, or max for no limit)"
            ));
        }
    };
    let v = n * mult;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!(
            "'{t}' must be a positive number of samples per second (or max for no limit)"
        ));
    }
    Ok(v)
}

/// Parses a comma-separated list of rates, each given once (so each is one
/// run): `1,10,100,1k,10k,max`. An empty item, a bad rate or a rate given
/// twice (`1k,1000`) is refused.
pub fn parse_rate_list(s: &str) -> Result<Vec<Rate>, String> {
    let mut out: Vec<Rate> = Vec::new();
    for item in s.split(',') {
        if item.trim().is_empty() {
            return Err(format!(
                "'{s}' has an empty item (give rates separated by commas, like 1,10,100,1k,max)"
            ));
        }
        let r = parse_rate(item)?;
        if out.contains(&r) {
            return Err(format!(
                "{} is given twice in '{s}' (give each rate once)",
                format_rate(r)
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// A rate as the tables print it: `max`, `100/s`, `1k/s`, `2.5M/s`.
pub fn format_rate(r: Rate) -> String {
    if r <= 0.0 {
        return "max".into();
    }
    // A suffix where it keeps the figure exact to one decimal.
    let (v, unit) = if r >= 1e6 && r % 1e5 == 0.0 {
        (r / 1e6, "M")
    } else if r >= 1e3 && r % 100.0 == 0.0 {
        (r / 1e3, "k")
    } else {
        (r, "")
    };
    format!("{v}{unit}/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rates() {
        assert_eq!(parse_rate("100").unwrap(), 100.0);
        assert_eq!(parse_rate("1k").unwrap(), 1000.0);
        assert_eq!(parse_rate("2.5k").unwrap(), 2500.0);
        assert_eq!(parse_rate("1M").unwrap(), 1e6);
        assert_eq!(parse_rate("0.5").unwrap(), 0.5);
        assert_eq!(parse_rate(" 10 ").unwrap(), 10.0);
        assert_eq!(parse_rate("max").unwrap(), 0.0);
    }

    #[test]
    fn refuses_bad_rates() {
        for bad in ["", "x", "-5", "1e3", "inf", "NaN", "1K", "1m", "1..2", "k"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("is not a rate"), "{bad}: {e}");
        }
        for zero in ["0", "0k", "0.0"] {
            let e = parse_rate(zero).unwrap_err();
            assert!(e.contains("must be a positive number"), "{zero}: {e}");
        }
    }

    #[test]
    fn lists() {
        assert_eq!(
            parse_rate_list("1,10,100,1k,10k,max").unwrap(),
            vec![1.0, 10.0, 100.0, 1e3, 1e4, 0.0]
        );
        assert_eq!(
            parse_rate_list("1,,2").unwrap_err(),
            "'1,,2' has an empty item (give rates separated by commas, like 1,10,100,1k,max)"
        );
        assert_eq!(
            parse_rate_list("1k,1000").unwrap_err(),
            "1k/s is given twice in '1k,1000' (give each rate once)"
        );
        assert_eq!(
            parse_rate_list("max,10,max").unwrap_err(),
            "max is given twice in 'max,10,max' (give each rate once)"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(format_rate(0.0), "max");
        assert_eq!(format_rate(100.0), "100/s");
        assert_eq!(format_rate(1000.0), "1k/s");
        assert_eq!(format_rate(2500.0), "2.5k/s");
        assert_eq!(format_rate(1e6), "1M/s");
        assert_eq!(format_rate(1234.0), "1234/s");
        assert_eq!(format_rate(1200.0), "1.2k/s");
        assert_eq!(format_rate(0.5), "0.5/s");
    }
}
