//! What the checks of a run across hosts need asked of this machine
//! rather than read from files: the kernel clock's discipline
//! (`adjtimex`) and the NIC's offloads and coalescing (`ethtool`).

use crate::{ClockState, Ethtool};

/// The kernel clock's discipline, from `adjtimex` (read only: modes 0).
pub fn clock_state() -> ClockState {
    // SAFETY: a zeroed timex with modes 0 only reads; the kernel fills it.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: t is a valid, writable timex.
    let state = unsafe { libc::adjtimex(&mut t) };
    ClockState {
        synchronised: state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0,
        est_error_us: t.esterror as i64,
    }
}

/// What `ethtool -k NAME` and `ethtool -c NAME` print (standard output
/// and error), or None each when ethtool cannot be run. `name` is this
/// host's own interface, passed as one argument.
pub fn ethtool(name: &str) -> Ethtool {
    let run = |flag: &str| {
        std::process::Command::new("ethtool")
            .args([flag, name])
            .output()
            .ok()
            .map(|o| {
                let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
                t.push_str(&String::from_utf8_lossy(&o.stderr));
                t
            })
    };
    Ethtool {
        features: run("-k"),
        coalesce: run("-c"),
    }
}
