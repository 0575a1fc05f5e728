//! The cores this process may use, read once, and a thread's scheduling
//! state saved and put back around a run.
//!
//! Planning must never read the cores from a thread a run has pinned: a
//! thread pinned to core 0 sees one core (`available_parallelism` counts
//! the calling thread's mask), so a second run planned from it would plan
//! no pinning and start its subscriber on core 0 too. [`cpus`] reads the
//! affinity of the process's main thread (its thread id is the process id)
//! the first time it is asked, which the binary does before anything runs;
//! [`ThreadState`] puts a run's thread back as it was.

use std::sync::OnceLock;

/// The cores this process may run on, in ascending order: the main
/// thread's affinity when first asked (else the online CPUs).
pub fn cpus() -> &'static [usize] {
    static CPUS: OnceLock<Vec<usize>> = OnceLock::new();
    CPUS.get_or_init(|| {
        // SAFETY: getpid has no preconditions.
        let main = unsafe { libc::getpid() };
        affinity_of(main)
            .filter(|c| !c.is_empty())
            .or_else(online)
            .unwrap_or_else(|| vec![0])
    })
}

/// How many cores this process may run on ([`cpus`]).
pub fn cores() -> usize {
    cpus().len()
}

/// The cores a `--cpu` style list may name, as text: `0-1`, `2,3`.
pub fn cpus_text() -> String {
    pubsubperf_doctor::cpu_list_text(cpus())
}

/// The affinity of thread `tid` (0: the calling thread).
pub fn affinity_of(tid: libc::pid_t) -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`, a list like `0-3`).
pub(crate) fn online() -> Option<Vec<usize>> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    pubsubperf_doctor::cpu_list(&s)
}

/// The calling thread's affinity, policy and priority, put back when
/// dropped: a run pins and prioritises the thread it measures on, and the
/// next run must start from the same state as the first.
pub struct ThreadState {
    affinity: libc::cpu_set_t,
    had_affinity: bool,
    policy: i32,
    param: libc::sched_param,
    /// Not Send: the state is put back on the thread that saved it.
    _here: std::marker::PhantomData<*const ()>,
}

impl ThreadState {
    /// Saves the calling thread's state.
    pub fn save() -> ThreadState {
        // SAFETY: plain data filled by the kernel; calls on our own thread.
        unsafe {
            let mut affinity: libc::cpu_set_t = std::mem::zeroed();
            let had_affinity =
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut affinity)
                    == 0;
            let mut policy = libc::SCHED_OTHER;
            let mut param: libc::sched_param = std::mem::zeroed();
            if libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) != 0 {
                policy = libc::SCHED_OTHER;
                param = std::mem::zeroed();
            }
            ThreadState {
                affinity,
                had_affinity,
                policy,
                param,
                _here: std::marker::PhantomData,
            }
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        // SAFETY: the values were read by `save` on this same thread (a
        // ThreadState is not Send).
        unsafe {
            libc::pthread_setschedparam(libc::pthread_self(), self.policy, &self.param);
            if self.had_affinity {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.affinity);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_alike() {
        use pubsubperf_doctor::{cpu_list, cpu_list_text};
        assert_eq!(cpu_list("0-2,4"), Some(vec![0, 1, 2, 4]));
        assert_eq!(cpu_list("3"), Some(vec![3]));
        assert_eq!(cpu_list("2-1"), None);
        assert_eq!(cpu_list_text(&[0, 1, 2, 4]), "0-2,4");
        assert_eq!(cpu_list_text(&[2, 3]), "2-3");
        assert_eq!(cpu_list_text(&[1]), "1");
    }

    /// The cores planned from are the process's, not those of a thread
    /// that a run has pinned (the defect: later runs planned no pinning).
    #[test]
    fn a_pinned_thread_does_not_shrink_the_cores() {
        let before = cpus().to_vec();
        let seen = std::thread::spawn(|| {
            crate::sys::pin_to_cpu(cpus()[0]).expect("pin");
            (cores(), affinity_of(0).expect("affinity"))
        })
        .join()
        .expect("thread");
        assert_eq!(seen.0, before.len());
        assert_eq!(seen.1, vec![before[0]]);
    }

    /// A saved thread comes back to its mask and policy.
    #[test]
    fn thread_state_puts_back_the_mask() {
        std::thread::spawn(|| {
            let mask = affinity_of(0).expect("affinity");
            {
                let _state = ThreadState::save();
                crate::sys::pin_to_cpu(mask[0]).expect("pin");
                assert_eq!(affinity_of(0).expect("affinity"), vec![mask[0]]);
            }
            assert_eq!(affinity_of(0).expect("affinity"), mask);
        })
        .join()
        .expect("thread");
    }
}
