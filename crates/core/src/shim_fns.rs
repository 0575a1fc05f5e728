//! [`shim_fns!`](crate::shim_fns): the C functions of a binding's shim,
//! declared once for both kinds of build.

/// Declares a binding's C shim functions, each with the value it returns in
/// a build without the middleware: with the cfg flag set (by the binding's
/// build script, when it found the library) an `extern "C"` block, without
/// it functions of the same signatures that return those values, so the
/// crate builds and links without the library. The binding refuses to open
/// in that build, so none of them is called.
///
/// ```ignore
/// pubsubperf_core::shim_fns! {
///     cfg(has_lib), pub(crate),
///     fn shim_version() -> *const c_char = c"not installed".as_ptr();
///     fn shim_close(h: *mut c_void) = ();
/// }
/// ```
#[macro_export]
macro_rules! shim_fns {
    (
        cfg($cfg:meta), $vis:vis,
        $(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $missing:expr;)*
    ) => {
        #[cfg($cfg)]
        unsafe extern "C" {
            $($vis fn $name($($arg: $ty),*) $(-> $ret)?;)*
        }
        #[cfg(not($cfg))]
        #[allow(clippy::missing_safety_doc, clippy::too_many_arguments, unused_variables)]
        mod missing {
            use super::*;
            $(pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? { $missing })*
        }
        #[cfg(not($cfg))]
        $vis use missing::*;
    };
}
