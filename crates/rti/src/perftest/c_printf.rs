//! C's `snprintf`, for the golden tests: Perftest's own formats printing
//! the figures ours print.

/// C's `snprintf` of one format and its arguments, as a `String`.
#[macro_export]
macro_rules! c {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        let fmt = std::ffi::CString::new($fmt).unwrap();
        let mut buf = vec![0u8; 4096];
        // SAFETY: buf is writable for its length; the format's conversions
        // take exactly the arguments given, each of the type it names. The
        // arguments are the tests' plain figures (casts, safe functions).
        #[allow(clippy::macro_metavars_in_unsafe)]
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr() as *mut std::ffi::c_char,
                buf.len(),
                fmt.as_ptr()
                $(, $arg)*
            )
        };
        assert!(n >= 0 && (n as usize) < buf.len());
        buf.truncate(n as usize);
        String::from_utf8(buf).unwrap()
    }};
}
