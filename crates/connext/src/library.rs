//! Finding and opening RTI's libraries, and the functions of theirs the
//! binding calls ([`Api`]).
//!
//! The libraries are RTI Connector's (`librtiddsconnector.so`, which loads
//! `libnddsc.so` and `libnddscore.so` from its own folder). They are opened
//! once per process, at the first use, from:
//! 1. `PUBSUBPERF_CONNEXT_LIB=DIR`, a folder holding the three (a Connext
//!    Pro installation's libraries with Connector's beside them), else
//! 2. [`INSTALL_DIR`]`/<platform>`, where `scripts/connext.sh` (run by
//!    `scripts/setup.sh --with-connext`) puts the wheel's libraries.
//!
//! No header of RTI's is used: every function below is declared here from
//! RTI's public C API reference (Connector's `RTI_Connector_*`, Connext's
//! `DDS_*`), with opaque pointers for RTI's objects. The only layouts the
//! binding relies on are those the API reference documents as public
//! structs: `DDS_Duration_t`, the options of `RTI_Connector_new`, a
//! data-reader listener, and the leading counts of a matched status.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where `scripts/connext.sh` installs the libraries (one folder per
/// platform of RTI Connector's wheel).
pub const INSTALL_DIR: &str = "/usr/local/lib/pubsubperf/connext";

/// The environment variable naming another folder of the libraries.
pub const LIB_ENV: &str = "PUBSUBPERF_CONNEXT_LIB";

/// The one command that installs the libraries, for error messages.
pub const INSTALL_HINT: &str = "scripts/setup.sh --with-connext (RTI's non-commercial licence; see docs/bindings/connext.md), or PUBSUBPERF_CONNEXT_LIB=DIR";

/// The library the binding opens; it loads the other two.
const CONNECTOR: &str = "librtiddsconnector.so";

/// The folder of RTI Connector's wheel for the platform this binary runs on.
pub fn platform() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("linux-x64"),
        "aarch64" => Some("linux-arm64"),
        "arm" => Some("linux-arm"),
        _ => None,
    }
}

/// The folder the libraries are opened from: [`LIB_ENV`] when set, else
/// the installed folder of this platform.
pub fn lib_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(LIB_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    platform()
        .map(|p| Path::new(INSTALL_DIR).join(p))
        .ok_or_else(|| {
            format!(
                "RTI Connector has no libraries for {} (it ships linux-x64, linux-arm64, linux-arm)",
                std::env::consts::ARCH
            )
        })
}

/// `DDS_Duration_t`: seconds and nanoseconds.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Duration {
    pub sec: i32,
    pub nanosec: u32,
}

impl Duration {
    /// The DDS form of `d` (saturating at i32::MAX seconds).
    pub fn of(d: std::time::Duration) -> Duration {
        Duration {
            sec: d.as_secs().min(i32::MAX as u64) as i32,
            nanosec: d.subsec_nanos(),
        }
    }
}

/// `RTI_Connector_Options`.
#[repr(C)]
pub struct ConnectorOptions {
    /// Connector's own data-available machinery (its `wait`), not used.
    pub enable_on_data_event: c_int,
    pub one_based_sequence_indexing: c_int,
}

/// A data-available callback: the listener's data and the reader.
pub type OnData = unsafe extern "C" fn(*mut c_void, *mut c_void);
/// Any other callback of a reader listener: (data, reader, status).
pub type OnStatus = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void);

/// `DDS_DataReaderListener`: the listener's data, then its callbacks in the
/// API reference's order; the binding sets only `on_data_available`.
#[repr(C)]
pub struct ReaderListener {
    pub listener_data: *mut c_void,
    pub on_requested_deadline_missed: Option<OnStatus>,
    pub on_requested_incompatible_qos: Option<OnStatus>,
    pub on_sample_rejected: Option<OnStatus>,
    pub on_liveliness_changed: Option<OnStatus>,
    pub on_data_available: Option<OnData>,
    pub on_subscription_matched: Option<OnStatus>,
    pub on_sample_lost: Option<OnStatus>,
}

/// `DDS_DATA_AVAILABLE_STATUS`.
pub const DATA_AVAILABLE_STATUS: u32 = 1 << 10;
/// `DDS_ANY_SAMPLE_STATE` (and view and instance states).
pub const ANY_STATE: u32 = 0xffff;
/// `DDS_LENGTH_UNLIMITED`.
pub const LENGTH_UNLIMITED: i32 = -1;
/// `DDS_RETCODE_OK`.
pub const RETCODE_OK: i32 = 0;
/// `DDS_RETCODE_OUT_OF_RESOURCES`.
pub const RETCODE_OUT_OF_RESOURCES: i32 = 5;
/// `DDS_RETCODE_TIMEOUT`.
pub const RETCODE_TIMEOUT: i32 = 10;
/// `DDS_RETCODE_NO_DATA`.
pub const RETCODE_NO_DATA: i32 = 11;

/// Bytes reserved for one of RTI's sequence structs (`DDS_*Seq`), which
/// the binding never reads but through functions: it is zeroed and then
/// initialised by `DDS_*Seq_initialize` (the struct is 80-some bytes in
/// Connext 6.1; this leaves room).
pub const SEQ_BYTES: usize = 256;

/// Bytes reserved for a `DDS_PublicationMatchedStatus` or
/// `DDS_SubscriptionMatchedStatus`, of which the binding reads the third
/// 32-bit count (`current_count`, after `total_count` and
/// `total_count_change`).
pub const MATCHED_STATUS_WORDS: usize = 32;

/// Declares [`Api`]: one field per function, typed, and its loader.
macro_rules! api {
    ($( $name:ident : fn($($arg:ty),*) $(-> $ret:ty)? ;)+) => {
        /// RTI's functions the binding calls, resolved once per process.
        #[allow(non_snake_case)]
        pub struct Api {
            $( pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?, )+
            /// `DDS_HANDLE_NIL`, the instance handle of an unkeyed write.
            pub HANDLE_NIL: *const c_void,
            /// Kept open for the life of the process.
            _lib: libloading::Library,
        }

        impl Api {
            fn resolve(lib: libloading::Library) -> Result<Api, String> {
                // SAFETY: each symbol is RTI's function of that name, with
                // the signature declared (from RTI's C API reference).
                unsafe {
                    Ok(Api {
                        $( $name: *lib
                            .get(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|e| format!("{} lacks {}: {e}", CONNECTOR, stringify!($name)))?, )+
                        HANDLE_NIL: *lib
                            .get::<*const c_void>(b"DDS_HANDLE_NIL\0")
                            .map_err(|e| format!("{CONNECTOR} lacks DDS_HANDLE_NIL: {e}"))?,
                        _lib: lib,
                    })
                }
            }
        }
    };
}

type P = *mut c_void;
type S = *const c_char;

api! {
    RTI_Connector_new: fn(S, S, *const ConnectorOptions) -> P;
    RTI_Connector_delete: fn(P);
    RTI_Connector_get_datawriter: fn(P, S) -> P;
    RTI_Connector_get_datareader: fn(P, S) -> P;
    RTI_Connector_get_native_instance: fn(P, S, *mut P) -> c_int;
    RTI_Connector_get_last_error_message: fn() -> *mut c_char;
    RTI_Connector_free_string: fn(*mut c_char);
    NDDS_Config_Version_to_string: fn() -> S;
    NDDS_Config_Logger_get_instance: fn() -> P;
    NDDS_Config_Logger_set_output_file: fn(P, *mut libc::FILE) -> u8;
    DDS_DynamicDataWriter_narrow: fn(P) -> P;
    DDS_DynamicDataReader_narrow: fn(P) -> P;
    DDS_DynamicData_set_octet_array: fn(P, S, i32, u32, *const u8) -> i32;
    DDS_DynamicData_get_octet_array: fn(P, *mut u8, *mut u32, S, i32) -> i32;
    DDS_DynamicData_set_ulong: fn(P, S, i32, u32) -> i32;
    DDS_DynamicDataWriter_write: fn(P, P, *const c_void) -> i32;
    DDS_DynamicDataReader_take: fn(P, P, P, i32, u32, u32, u32) -> i32;
    DDS_DynamicDataReader_return_loan: fn(P, P, P) -> i32;
    DDS_DynamicDataSeq_initialize: fn(P) -> u8;
    DDS_DynamicDataSeq_finalize: fn(P) -> u8;
    DDS_DynamicDataSeq_get_length: fn(P) -> i32;
    DDS_DynamicDataSeq_get_reference: fn(P, i32) -> P;
    DDS_SampleInfoSeq_initialize: fn(P) -> u8;
    DDS_SampleInfoSeq_finalize: fn(P) -> u8;
    DDS_ConditionSeq_initialize: fn(P) -> u8;
    DDS_ConditionSeq_finalize: fn(P) -> u8;
    DDS_ConditionSeq_set_maximum: fn(P, i32) -> u8;
    DDS_WaitSet_new: fn() -> P;
    DDS_WaitSet_delete: fn(P) -> i32;
    DDS_WaitSet_attach_condition: fn(P, P) -> i32;
    DDS_WaitSet_detach_condition: fn(P, P) -> i32;
    DDS_WaitSet_wait: fn(P, P, *const Duration) -> i32;
    DDS_DataReader_create_readcondition: fn(P, u32, u32, u32) -> P;
    DDS_DataReader_delete_readcondition: fn(P, P) -> i32;
    DDS_DataReader_set_listener: fn(P, *const ReaderListener, u32) -> i32;
    DDS_DataReader_get_subscription_matched_status: fn(P, *mut i32) -> i32;
    DDS_DataWriter_get_publication_matched_status: fn(P, *mut i32) -> i32;
    DDS_DataWriter_flush: fn(P) -> i32;
}

// SAFETY: function pointers and the address of a constant; RTI's
// functions are thread-safe where the binding calls them from several
// threads (entities of one participant).
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// RTI's functions, or why they cannot be had (with [`INSTALL_HINT`]).
pub fn api() -> Result<&'static Api, String> {
    API.get_or_init(open).as_ref().map_err(Clone::clone)
}

fn open() -> Result<Api, String> {
    let dir = lib_dir()?;
    let path = dir.join(CONNECTOR);
    if !path.is_file() {
        return Err(format!(
            "RTI Connext's libraries are not installed ({} not found); install them with {INSTALL_HINT}",
            path.display()
        ));
    }
    // SAFETY: opening RTI's library runs its initialisers, which have no
    // preconditions.
    let lib = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let api = Api::resolve(lib)?;
    api.log_to_stderr();
    Ok(api)
}

impl Api {
    /// Connext prints its log on stdout, where pubsubperf's results go:
    /// send it to stderr.
    fn log_to_stderr(&self) {
        // SAFETY: fd 2 stays open for the process's life; the FILE is
        // handed to Connext's logger for good.
        unsafe {
            let err = libc::fdopen(2, c"w".as_ptr());
            let logger = (self.NDDS_Config_Logger_get_instance)();
            if !err.is_null() && !logger.is_null() {
                (self.NDDS_Config_Logger_set_output_file)(logger, err);
            }
        }
    }

    /// Connext's version: `Connext 6.1.2.21` from its build string
    /// (`NDDSCORE_BUILD_6.1.2.21_...`).
    pub fn version(&self) -> String {
        // SAFETY: returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr((self.NDDS_Config_Version_to_string)()) };
        parse_version(&s.to_string_lossy())
    }

    /// Connector's last error, or `fallback` when it has none.
    pub fn last_error(&self, fallback: &str) -> String {
        // SAFETY: Connector returns a string of its own or NULL; freed with
        // its function.
        unsafe {
            let p = (self.RTI_Connector_get_last_error_message)();
            if p.is_null() {
                return fallback.to_string();
            }
            let msg = CStr::from_ptr(p).to_string_lossy().trim().to_string();
            (self.RTI_Connector_free_string)(p);
            if msg.is_empty() {
                fallback.to_string()
            } else {
                msg
            }
        }
    }
}

/// `Connext A.B.C.D` from RTI's build string, or the string's first line.
pub fn parse_version(build: &str) -> String {
    let first = build.lines().next().unwrap_or_default();
    let number = first
        .split('_')
        .find(|p| p.split('.').count() >= 3 && p.split('.').all(|n| n.parse::<u32>().is_ok()));
    match number {
        Some(n) => format!("Connext {n}"),
        None => format!("Connext ({})", first.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_build_string() {
        assert_eq!(
            parse_version(
                "NDDSCORE_BUILD_6.1.2.21_20241009T000000Z_RTI_REL\nNDDSC_BUILD_6.1.2.21_20241009T000000Z_RTI_REL\n"
            ),
            "Connext 6.1.2.21"
        );
        assert_eq!(parse_version("odd"), "Connext (odd)");
    }

    #[test]
    fn durations_saturate() {
        let d = Duration::of(std::time::Duration::from_millis(1500));
        assert_eq!((d.sec, d.nanosec), (1, 500_000_000));
        assert_eq!(Duration::of(std::time::Duration::MAX).sec, i32::MAX);
    }
}
