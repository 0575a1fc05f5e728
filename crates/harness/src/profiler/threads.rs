//! Per-thread counters of this process from the kernel
//! (`/proc/self/task/TID/{comm,stat,status}`): CPU time and context
//! switches of every thread, taken at the attach and at the end of the
//! window; their differences are the busiest threads of the side.

use pubsubperf_core::profile::{TOP_THREADS, ThreadProfile};

/// One thread's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Counters {
    pub tid: u32,
    pub name: String,
    /// utime and stime, clock ticks.
    pub utime: u64,
    pub stime: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
}

/// Every thread of this process now (a thread that ends while it is read
/// is left out).
pub fn snapshot() -> Vec<Counters> {
    thread_ids()
        .into_iter()
        .filter_map(|tid| {
            let p = std::path::Path::new("/proc/self/task").join(tid.to_string());
            let stat = std::fs::read_to_string(p.join("stat")).ok()?;
            let status = std::fs::read_to_string(p.join("status")).ok()?;
            let name = std::fs::read_to_string(p.join("comm")).ok()?;
            parse(tid, name.trim_end(), &stat, &status)
        })
        .collect()
}

/// The ids listed in `/proc/self/task`, read until a listing adds none
/// (at most [`LISTINGS`] times). One listing is not enough: when a thread
/// exits while the kernel lists the directory, the listing resumes by
/// position and can skip a live thread after it.
fn thread_ids() -> std::collections::BTreeSet<u32> {
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..LISTINGS {
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            break;
        };
        let before = ids.len();
        ids.extend(
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()),
        );
        if ids.len() == before && before > 0 {
            break;
        }
    }
    ids
}

/// The most listings of `/proc/self/task` one snapshot reads.
const LISTINGS: usize = 8;

/// A thread's counters from its `stat` and `status` text.
pub fn parse(tid: u32, name: &str, stat: &str, status: &str) -> Option<Counters> {
    // The name in stat is in parentheses and may hold spaces: the fields
    // after it start at the last ')'. utime and stime are fields 14 and 15
    // of the line, the 12th and 13th after the name.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |k: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim_start_matches(':').trim().parse().ok())
    };
    Some(Counters {
        tid,
        name: name.to_string(),
        utime: f.get(11)?.parse().ok()?,
        stime: f.get(12)?.parse().ok()?,
        voluntary_cs: field("voluntary_ctxt_switches")?,
        involuntary_cs: field("nonvoluntary_ctxt_switches")?,
    })
}

/// The busiest threads between `before` and `after` (most CPU time first,
/// then most context switches), at most [`TOP_THREADS`]; `tick_ms` is one
/// clock tick in ms.
pub fn busiest(before: &[Counters], after: &[Counters], tick_ms: f64) -> Vec<ThreadProfile> {
    let mut v: Vec<ThreadProfile> = after
        .iter()
        .map(|a| {
            let b = before.iter().find(|b| b.tid == a.tid);
            let d = |x: fn(&Counters) -> u64| x(a).saturating_sub(b.map_or(0, x));
            ThreadProfile {
                name: a.name.clone(),
                tid: a.tid,
                user_ms: d(|c| c.utime) as f64 * tick_ms,
                system_ms: d(|c| c.stime) as f64 * tick_ms,
                voluntary_cs: d(|c| c.voluntary_cs),
                involuntary_cs: d(|c| c.involuntary_cs),
            }
        })
        .collect();
    let key = |t: &ThreadProfile| (t.user_ms + t.system_ms, t.voluntary_cs + t.involuntary_cs);
    v.sort_by(|x, y| {
        let (cx, sx) = key(x);
        let (cy, sy) = key(y);
        cy.total_cmp(&cx).then(sy.cmp(&sx)).then(x.tid.cmp(&y.tid))
    });
    v.truncate(TOP_THREADS);
    v
}

/// One clock tick (the unit of utime and stime), ms.
pub fn tick_ms() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { 1000.0 / hz as f64 } else { 10.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\trecvUC\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";

    #[test]
    fn stat_fields_after_a_name_with_spaces() {
        let stat =
            "4242 (dq.builtins x) S 1 4242 4242 0 -1 4194560 120 0 0 0 35 12 0 0 20 0 3 0 100 0 0";
        let c = parse(4242, "dq.builtins x", stat, STATUS).unwrap();
        assert_eq!((c.utime, c.stime), (35, 12));
        assert_eq!((c.voluntary_cs, c.involuntary_cs), (120, 7));
        assert!(parse(1, "x", "garbage", STATUS).is_none());
    }

    fn c(tid: u32, name: &str, ticks: u64, cs: u64) -> Counters {
        Counters {
            tid,
            name: name.into(),
            utime: ticks,
            stime: ticks / 2,
            voluntary_cs: cs,
            involuntary_cs: 1,
        }
    }

    #[test]
    fn busiest_first_new_threads_from_zero() {
        let before = [c(1, "main", 100, 10), c(2, "recvUC", 0, 0)];
        let after = [
            c(1, "main", 102, 15),
            c(2, "recvUC", 40, 500),
            c(3, "echo", 10, 3),
            c(4, "idle", 0, 0),
            c(5, "gc", 0, 1),
            c(6, "tev", 0, 2),
        ];
        let t = busiest(&before, &after, 10.0);
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["recvUC", "echo", "main", "tev", "gc"]);
        assert_eq!((t[0].user_ms, t[0].system_ms), (400.0, 200.0));
        assert_eq!((t[0].voluntary_cs, t[0].involuntary_cs), (500, 0)); // existed before, with 1 already
        // Thread 3 started in the window: all of its counters count.
        assert_eq!((t[1].user_ms, t[1].voluntary_cs), (100.0, 3));
        assert_eq!(
            (t[2].user_ms, t[2].voluntary_cs, t[2].involuntary_cs),
            (20.0, 5, 0)
        );
    }

    #[test]
    fn this_process_has_a_thread_with_counters() {
        let s = snapshot();
        let me = s
            .iter()
            .find(|t| t.tid == unsafe { libc::gettid() } as u32)
            .expect("this thread is listed");
        assert!(!me.name.is_empty());
        assert!(tick_ms() > 0.0);
    }

    #[test]
    fn a_live_thread_is_listed_while_the_one_before_it_exits() {
        // The kernel lists a process's threads in creation order; when the
        // thread it is listing exits, the listing resumes by position and
        // skips the next one. Here that next one is the lister itself.
        let trials = 3000;
        let missed: usize = (0..trials)
            .map(|_| {
                let before = std::thread::spawn(|| std::hint::black_box(0));
                let lister = std::thread::spawn(move || {
                    let me = unsafe { libc::gettid() } as u32;
                    let mut misses = 0;
                    while !before.is_finished() {
                        misses += usize::from(!thread_ids().contains(&me));
                    }
                    misses
                });
                lister.join().unwrap()
            })
            .sum();
        assert_eq!(missed, 0, "listings without the lister, in {trials} trials");
    }
}
