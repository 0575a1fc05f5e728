//! The cores the checks are asked about, against the cores the machine
//! has online (`/sys/devices/system/cpu/online` under the host's root): a
//! core it does not have would pass every per-core check vacuously (no
//! interrupt, no sibling on a core that does not exist).

use crate::host::{Host, cpu_list, cpu_list_text};

/// Cores asked about that the machine does not have online.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoresNotOnline {
    /// The cores asked about that are not online, ascending.
    pub missing: Vec<usize>,
    /// The cores online.
    pub online: Vec<usize>,
}

impl std::fmt::Display for CoresNotOnline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (noun, verb) = if self.missing.len() == 1 {
            ("core", "is")
        } else {
            ("cores", "are")
        };
        write!(
            f,
            "{noun} {} {verb} not online on this machine (the cores online: {})",
            cpu_list_text(&self.missing),
            cpu_list_text(&self.online)
        )
    }
}

impl std::error::Error for CoresNotOnline {}

/// Checks that every core of `cores` is online on `host`. When the host
/// does not say which cores are online (a tree without the file), nothing
/// is refused.
pub fn check_cores(host: &Host, cores: &[usize]) -> Result<(), CoresNotOnline> {
    let Some(online) = host
        .read("/sys/devices/system/cpu/online")
        .and_then(|t| cpu_list(&t))
    else {
        return Ok(());
    };
    let mut missing: Vec<usize> = cores
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(CoresNotOnline { missing, online })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_with_online(text: Option<&str>) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        if let Some(t) = text {
            let p = dir.path().join("sys/devices/system/cpu");
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("online"), t).unwrap();
        }
        let host = Host::at(dir.path());
        (dir, host)
    }

    #[test]
    fn cores_not_online_are_refused_with_those_that_are() {
        let (_d, host) = host_with_online(Some("0-1\n"));
        assert_eq!(check_cores(&host, &[0, 1]), Ok(()));
        let e = check_cores(&host, &[3, 2]).unwrap_err();
        assert_eq!(e.missing, [2, 3]);
        assert_eq!(
            e.to_string(),
            "cores 2-3 are not online on this machine (the cores online: 0-1)"
        );
        let e = check_cores(&host, &[1, 1, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "core 4 is not online on this machine (the cores online: 0-1)"
        );
        // Online cores need not start at 0 nor be contiguous.
        let (_d, host) = host_with_online(Some("2-3,6\n"));
        assert_eq!(check_cores(&host, &[6, 2]), Ok(()));
        assert_eq!(check_cores(&host, &[0, 2]).unwrap_err().missing, [0]);
    }

    #[test]
    fn a_host_that_does_not_say_refuses_nothing() {
        let (_d, host) = host_with_online(None);
        assert_eq!(check_cores(&host, &[7, 9]), Ok(()));
    }
}
