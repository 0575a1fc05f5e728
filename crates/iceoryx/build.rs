//! Compiles our C shim over iceoryx's C binding and links it. Without the
//! binding's headers the crate still builds and reports why it is unavailable.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rustc-check-cfg=cfg(has_iceoryx)");
    // A cross build for a board whose libraries are unpacked into a
    // sysroot (scripts/cross.sh armhf) looks there first.
    println!("cargo:rerun-if-env-changed=PUBSUBPERF_SYSROOT");
    let sysroot = std::env::var("PUBSUBPERF_SYSROOT").unwrap_or_default();
    let Some(inc) = [
        "/usr/include/iceoryx/v2.0.3",
        "/usr/local/include/iceoryx/v2.0.3",
    ]
    .iter()
    .map(|d| PathBuf::from(format!("{sysroot}{d}")))
    .find(|d| d.join("iceoryx_binding_c/runtime.h").is_file()) else {
        println!(
            "cargo:warning=iceoryx binding built without iceoryx: iceoryx_binding_c headers not found"
        );
        // A path that never exists: cargo runs this script again at the next
        // build, which finds iceoryx once it is installed (its files keep
        // the package's old times, so watching them would not).
        let out = std::env::var("OUT_DIR").expect("OUT_DIR");
        println!("cargo:rerun-if-changed={out}/until-found");
        println!(
            "cargo:rustc-env=PUBSUBPERF_ICEORYX_MISSING=iceoryx C binding 2.0.3 not found at build time (Debian: apt install libiceoryx-binding-c-dev)"
        );
        return;
    };
    cc::Build::new()
        .file("src/shim.c")
        .include(&inc)
        .opt_level(2)
        .warnings(true)
        .compile("pubsubperf_iceoryx_shim");
    println!("cargo:rustc-link-lib=iceoryx_binding_c");
    println!("cargo:rustc-cfg=has_iceoryx");
    println!("cargo:rustc-env=PUBSUBPERF_ICEORYX_MISSING=");
}
