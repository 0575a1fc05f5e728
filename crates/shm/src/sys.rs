//! Operating-system pieces: named POSIX shared-memory segments, futex waits
//! on words inside them, process liveness, and the sweep of stale segments.

use pubsubperf_core::BindingError;
use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Every segment this binding creates is named
/// `pubsubperf-shm-<creator pid>-<run id>-<what>`, so a later run can tell
/// whose it is and remove it once the creator is gone, and the conformance
/// suite's leftover check (names containing the run id) finds it.
pub const PREFIX: &str = "pubsubperf-shm-";

/// The name (without the leading `/` of `shm_open`) of a segment created by
/// this process.
pub fn segment_name(run_id: &str, what: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = format!(
        "{PREFIX}{}-{}-{}",
        std::process::id(),
        clean(run_id),
        clean(what)
    );
    // NAME_MAX is 255; keep the head (pid and run id), which identify it.
    name.truncate(250);
    name
}

fn c_name(name: &str) -> Result<CString, BindingError> {
    CString::new(format!("/{name}"))
        .map_err(|_| BindingError::Middleware(format!("bad segment name '{name}'")))
}

/// One mapping of a shared-memory segment.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; what is stored in it and how it
// is synchronized is the business of the types laid over it.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Creates segment `name` of `len` bytes (it must not exist) and maps it.
    /// The memory is zero-filled and only backed by pages when touched.
    pub fn create(name: &str, len: usize) -> Result<Mapping, BindingError> {
        let c = c_name(name)?;
        // SAFETY: plain system calls on a valid C string; the descriptor is
        // closed on every path.
        unsafe {
            let fd = libc::shm_open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o600,
            );
            if fd < 0 {
                return Err(BindingError::io(
                    format!("shm_open /dev/shm/{name}"),
                    std::io::Error::last_os_error(),
                ));
            }
            if libc::ftruncate(fd, len as libc::off_t) != 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                libc::shm_unlink(c.as_ptr());
                return Err(BindingError::io(
                    format!("ftruncate /dev/shm/{name} to {len} bytes"),
                    e,
                ));
            }
            let m = Self::map_fd(fd, len, name);
            libc::close(fd);
            if m.is_err() {
                libc::shm_unlink(c.as_ptr());
            }
            m
        }
    }

    /// Maps the existing segment `name`; its length is read from the file.
    pub fn open(name: &str) -> Result<Mapping, BindingError> {
        let c = c_name(name)?;
        // SAFETY: as in `create`.
        unsafe {
            let fd = libc::shm_open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0);
            if fd < 0 {
                return Err(BindingError::io(
                    format!("shm_open /dev/shm/{name}"),
                    std::io::Error::last_os_error(),
                ));
            }
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(BindingError::io(format!("fstat /dev/shm/{name}"), e));
            }
            let m = Self::map_fd(fd, st.st_size as usize, name);
            libc::close(fd);
            m
        }
    }

    unsafe fn map_fd(fd: libc::c_int, len: usize, name: &str) -> Result<Mapping, BindingError> {
        // SAFETY: a fresh shared mapping of a valid descriptor.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(BindingError::io(
                format!("mmap /dev/shm/{name} ({len} bytes)"),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).expect("mmap returned null"),
            len,
        })
    }

    /// Start of the mapping.
    #[inline(always)]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length of the mapping.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty mapping (never: `mmap` refuses those).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map_fd` mapped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Removes the name of a segment (mappings stay valid). A name already gone
/// is not an error: both sides try, whoever comes first removes it.
pub fn unlink(name: &str) {
    if let Ok(c) = c_name(name) {
        // SAFETY: plain system call on a valid C string.
        unsafe { libc::shm_unlink(c.as_ptr()) };
    }
}

/// Blocks while `*word == expected`, at most `timeout`, until a
/// [`futex_wake`] on the same word from any process (the word lives in
/// shared memory, so the futex is not process-private). Spurious returns are
/// possible; callers re-check their condition.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as _, // time_t: 32 or 64 bits by target
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every waiter blocked in [`futex_wait`] on `word`.
#[inline]
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a valid, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// True while process `pid` exists and is not a zombie (a killed child
/// whose parent has not reaped it yet is dead for us).
pub fn alive(pid: u32) -> bool {
    if pid == 0 {
        return true;
    }
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if r != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_none_or(|state| state != 'Z' && state != 'X'),
        Err(_) => true,
    }
}

/// Removes segments of this binding whose creating process is gone (a run
/// killed between creating a segment and its peer mapping it). Returns the
/// names removed.
pub fn sweep_stale() -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return removed;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !alive(pid) {
            unlink(&name);
            removed.push(name);
        }
    }
    removed
}

/// Bytes of the last-level cache (from sysfs, cpu0's highest cache level;
/// 32 MiB when unknown).
pub fn last_level_cache() -> usize {
    let dir = "/sys/devices/system/cpu/cpu0/cache";
    let mut best = 0;
    for i in 0..8 {
        let Ok(s) = std::fs::read_to_string(format!("{dir}/index{i}/size")) else {
            break;
        };
        let s = s.trim();
        let (num, mul) = match s.strip_suffix('K') {
            Some(n) => (n, 1 << 10),
            None => match s.strip_suffix('M') {
                Some(n) => (n, 1 << 20),
                None => (s, 1),
            },
        };
        best = best.max(num.parse::<usize>().unwrap_or(0) * mul);
    }
    if best == 0 { 32 << 20 } else { best }
}

/// Copies a sample into a ring entry; with `stream`, through non-temporal
/// (streaming) stores on x86-64, which write whole lines to memory without
/// reading them first and without filling the caches. The writer streams
/// only into rings too big to stay in the last-level cache (samples of many
/// MiB): there every line goes to memory anyway, and streaming saves the
/// read of each line before it is written (measured 2x faster at 16 MiB).
/// A ring that fits in the cache gets ordinary stores: the reader then
/// copies the sample out of the cache instead of memory (measured 2x
/// faster for both sides at 1 MiB). The caller publishes the entry with a
/// release store, which does not order streaming stores, so a streamed
/// copy ends with `sfence`.
///
/// # Safety
/// `src` and `dst` are valid for `len` bytes and do not overlap.
#[inline]
pub unsafe fn copy_to_ring(src: *const u8, dst: *mut u8, len: usize, stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream && (dst as usize).is_multiple_of(16) {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let blocks = len / 64;
        // SAFETY: within the `len` bytes the caller vouches for; `dst` is
        // 16-byte aligned, as streaming stores need.
        unsafe {
            for i in 0..blocks {
                let s = src.add(i * 64) as *const __m128i;
                let d = dst.add(i * 64) as *mut __m128i;
                let (a, b, c, e) = (
                    _mm_loadu_si128(s),
                    _mm_loadu_si128(s.add(1)),
                    _mm_loadu_si128(s.add(2)),
                    _mm_loadu_si128(s.add(3)),
                );
                _mm_stream_si128(d, a);
                _mm_stream_si128(d.add(1), b);
                _mm_stream_si128(d.add(2), c);
                _mm_stream_si128(d.add(3), e);
            }
            let done = blocks * 64;
            std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
            _mm_sfence();
        }
        return;
    }
    // Elsewhere (ARM) an ordinary copy: `stream` is a hint only.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = stream;
    // SAFETY: as documented.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}
