//! Reading the tracers' summaries: `perf trace -s` (one table per thread)
//! and `strace -c` (one table for the process).

use pubsubperf_core::profile::{SyscallCount, merge_syscalls};

/// `perf trace -s`'s summary, every thread's table added up by system call.
/// A row: `name calls errors total_ms min_ms avg_ms max_ms stddev%`.
pub fn perf_trace(text: &str) -> Vec<SyscallCount> {
    let mut out = Vec::new();
    let rows = text.lines().filter_map(|l| {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() < 8 || !is_name(t[0]) {
            return None;
        }
        Some(SyscallCount {
            name: t[0].to_string(),
            calls: t[1].parse().ok()?,
            errors: t[2].parse().ok()?,
            time_us: t[3].parse::<f64>().ok()? * 1000.0,
        })
    });
    merge_syscalls(&mut out, rows);
    out
}

/// `strace -c`'s summary. A row: `% seconds usecs/call calls [errors]
/// name` (the errors column is blank when there were none).
pub fn strace(text: &str) -> Vec<SyscallCount> {
    let mut out = Vec::new();
    let rows = text.lines().filter_map(|l| {
        let t: Vec<&str> = l.split_whitespace().collect();
        if !(t.len() == 5 || t.len() == 6) {
            return None;
        }
        let name = t[t.len() - 1];
        if !is_name(name) || name == "total" {
            return None;
        }
        t[0].parse::<f64>().ok()?;
        Some(SyscallCount {
            name: name.to_string(),
            calls: t[3].parse().ok()?,
            errors: if t.len() == 6 { t[4].parse().ok()? } else { 0 },
            time_us: t[1].parse::<f64>().ok()? * 1e6,
        })
    });
    merge_syscalls(&mut out, rows);
    out
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && s.as_bytes()[0].is_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_trace_threads_add_up() {
        let text = "
 Summary of events:

 pubsubperf (100), 12 events, 60.0%

   syscall            calls  errors  total       min       avg       max       stddev
                                     (msec)    (msec)    (msec)    (msec)        (%)
   --------------- --------  ------ -------- --------- --------- ---------     ------
   sendto                 4      0     0.200     0.040     0.050     0.060      5.00%
   futex                  2      1     3.000     1.000     1.500     2.000     33.33%

 pubsubperf (101), 8 events, 40.0%

   syscall            calls  errors  total       min       avg       max       stddev
                                     (msec)    (msec)    (msec)    (msec)        (%)
   --------------- --------  ------ -------- --------- --------- ---------     ------
   futex                  4      0     1.000     0.100     0.250     0.400     10.00%
";
        let t = perf_trace(text);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].name.as_str(), t[0].calls, t[0].errors),
            ("futex", 6, 1)
        );
        assert!((t[0].time_us - 4000.0).abs() < 1e-6);
        assert_eq!((t[1].name.as_str(), t[1].calls), ("sendto", 4));
        assert!((t[1].time_us - 200.0).abs() < 1e-6);
    }

    #[test]
    fn strace_rows_with_and_without_errors() {
        let text = "% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 70.00    0.000700           7       100           sendto
 30.00    0.000300           3       100        40 recvfrom
------ ----------- ----------- --------- --------- ----------------
100.00    0.001000           5       200        40 total
";
        let t = strace(text);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].name.as_str(), t[0].calls, t[0].errors),
            ("recvfrom", 100, 40)
        );
        assert_eq!((t[1].name.as_str(), t[1].errors), ("sendto", 0));
        assert!((t[1].time_us - 700.0).abs() < 1e-6);
    }

    #[test]
    fn nothing_parses_from_an_empty_summary() {
        assert!(perf_trace("\n Summary of events:\n").is_empty());
        assert!(strace("").is_empty());
    }
}
