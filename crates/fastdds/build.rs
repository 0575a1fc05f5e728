//! Compiles the C++ shim over Fast DDS 2.9 (which has no C API) and links
//! Fast DDS and Fast CDR (Debian: libfastrtps-dev, libfastcdr-dev). Without
//! their headers the crate still builds: the binding then reports why it is
//! unavailable.

use std::path::PathBuf;

/// Headers the shim needs, one of each library.
const HEADERS: [&str; 2] = ["fastcdr/Cdr.h", "fastdds/dds/domain/DomainParticipant.hpp"];

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rustc-check-cfg=cfg(has_fastdds)");
    // A cross build for a board whose libraries are unpacked into a sysroot
    // (scripts/cross.sh armhf) looks there.
    println!("cargo:rerun-if-env-changed=PUBSUBPERF_SYSROOT");
    let sysroot = std::env::var("PUBSUBPERF_SYSROOT").unwrap_or_default();
    let found = ["/usr/include", "/usr/local/include"]
        .iter()
        .map(|d| PathBuf::from(format!("{sysroot}{d}")))
        .any(|d| HEADERS.iter().all(|h| d.join(h).is_file()));
    if !found {
        println!(
            "cargo:warning=fastdds binding built without Fast DDS: {} not found",
            HEADERS.join(" or ")
        );
        // A path that never exists: cargo runs this script again at the next
        // build, which finds Fast DDS once it is installed (its files keep
        // the package's old times, so watching them would not).
        let out = std::env::var("OUT_DIR").expect("OUT_DIR");
        println!("cargo:rerun-if-changed={out}/until-found");
        println!(
            "cargo:rustc-env=PUBSUBPERF_FASTDDS_MISSING=Fast DDS 2.9 headers not found at build time (Debian: apt install libfastrtps-dev libfastcdr-dev)"
        );
        return;
    }
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
    println!("cargo:rustc-cfg=has_fastdds");
    println!("cargo:rustc-env=PUBSUBPERF_FASTDDS_MISSING=");
}
