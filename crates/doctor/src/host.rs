//! The files a check reads, under a root directory: `/` for this machine,
//! a fake tree of `/proc` and `/sys` in the tests.

use std::path::{Path, PathBuf};

/// A machine's `/proc` and `/sys`, read under `root`.
#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
}

impl Host {
    /// This machine.
    pub fn this() -> Host {
        Host::at("/")
    }

    /// The tree under `root` (`root/proc/cpuinfo`, `root/sys/...`).
    pub fn at(root: impl Into<PathBuf>) -> Host {
        Host { root: root.into() }
    }

    fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// A file's text, trimmed; None when it cannot be read.
    pub fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.path(path))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// Whether the path exists.
    pub fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// The names in a directory (empty when it cannot be read).
    pub fn list(&self, path: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(path))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The root itself (for messages).
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A kernel CPU list (`0-3,8,10-11`) as CPU numbers; None when malformed.
pub fn cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if a > b {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse().ok()?),
        }
    }
    Some(v)
}

/// A list of CPUs as the kernel writes it (`0-3,8`).
pub fn cpu_list_text(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_and_write() {
        assert_eq!(cpu_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(cpu_list(""), Some(vec![]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("x"), None);
        assert_eq!(cpu_list_text(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
    }
}
