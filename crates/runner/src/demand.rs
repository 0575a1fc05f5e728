//! The demand ramp (`throughput --demand START:STEP:END`), as RTI's
//! Throughput example runs it: for each demand N from START to END by STEP
//! the publisher writes N samples back to back, pauses 10 ms, and again,
//! for `--duration`; then waits `--recovery-time` before the next demand.
//! Each demand is one run of the plan (the harness's `RunSpec::demand`);
//! this module reads the flag's values (`pubsubperf_report::live::ramp`
//! prints the ramp's table).

use crate::plan::UsageError;

/// The most demands one ramp may have (each is a run of `--duration`).
pub const MAX_STEPS: u64 = 1000;

/// The demands of `--demand START:STEP:END`, in order.
pub fn parse_demand(v: &str) -> Result<Vec<u64>, UsageError> {
    let bad = |why: &str| {
        UsageError(format!(
            "--demand '{v}': {why} (expected START:STEP:END samples per burst, like 1000:1000:9000)"
        ))
    };
    let parts: Vec<&str> = v.split(':').map(str::trim).collect();
    let [start, step, end] = parts.as_slice() else {
        return Err(bad("not three numbers"));
    };
    let num = |s: &str, what: &str| -> Result<u64, UsageError> {
        s.parse::<u64>()
            .map_err(|_| bad(&format!("{what} '{s}' is not a whole number")))
    };
    let (start, step, end) = (num(start, "START")?, num(step, "STEP")?, num(end, "END")?);
    if start == 0 {
        return Err(bad("START must be at least 1"));
    }
    if step == 0 {
        return Err(bad("STEP must be at least 1"));
    }
    if end < start {
        return Err(bad(&format!("END {end} is below START {start}")));
    }
    let steps = (end - start) / step + 1;
    if steps > MAX_STEPS {
        return Err(bad(&format!(
            "{steps} demands; at most {MAX_STEPS} (use a larger STEP)"
        )));
    }
    Ok((0..steps).map(|i| start + i * step).collect())
}

/// `--recovery-time`: milliseconds (a bare number), or a time like `1s`.
pub fn parse_recovery(v: &str) -> Result<u64, UsageError> {
    if let Ok(ms) = v.trim().parse::<u64>() {
        return Ok(ms);
    }
    crate::plan::parse_duration("--recovery-time", v).map(|d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demands_from_start_to_end_by_step() {
        assert_eq!(
            parse_demand("1000:1000:9000").unwrap(),
            (1..=9).map(|i| i * 1000).collect::<Vec<_>>()
        );
        assert_eq!(parse_demand("100:100:900").unwrap().len(), 9);
        assert_eq!(parse_demand("5:10:30").unwrap(), vec![5, 15, 25]);
        assert_eq!(parse_demand("7:1:7").unwrap(), vec![7]);
    }

    #[test]
    fn bad_demands_name_the_flag_and_why() {
        for (v, why) in [
            ("1000:1000", "not three numbers"),
            ("a:1:2", "START 'a' is not a whole number"),
            ("1:-1:2", "STEP '-1' is not a whole number"),
            ("0:1:2", "START must be at least 1"),
            ("1:0:2", "STEP must be at least 1"),
            ("9000:1000:1000", "END 1000 is below START 9000"),
            ("1:1:5000", "5000 demands; at most 1000"),
        ] {
            let e = parse_demand(v).unwrap_err().0;
            assert!(e.starts_with(&format!("--demand '{v}': {why}")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn recovery_is_ms_or_a_time() {
        assert_eq!(parse_recovery("250").unwrap(), 250);
        assert_eq!(parse_recovery("2s").unwrap(), 2000);
        assert!(
            parse_recovery("soon")
                .unwrap_err()
                .0
                .starts_with("--recovery-time")
        );
    }
}
