//! Compiles the C++ shim over Fast DDS 2.9 (which has no C API) and links
//! Fast DDS and Fast CDR (Debian: libfastrtps-dev, libfastcdr-dev).

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file("shim/shim.cpp")
        .warnings(true)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        // armhf: GCC notes that an ABI changed in GCC 7.1 for vectors of
        // 64-bit values passed by value; nothing here crosses that boundary
        // with an older compiler.
        .flag_if_supported("-Wno-psabi")
        .compile("pubsubperf_fastdds_shim");
    println!("cargo:rustc-link-lib=fastrtps");
    println!("cargo:rustc-link-lib=fastcdr");
}
