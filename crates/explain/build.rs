//! Compiles the eBPF program (src/bpf/record.bpf.c) with clang into an
//! object the loader embeds (libbpf-cargo; Debian's clang).

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

const SRC: &str = "src/bpf/record.bpf.c";

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    // The kernel's UAPI headers (linux/bpf.h) include asm/types.h, which
    // Debian keeps under the target's multiarch directory.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets the target arch");
    let multiarch = format!("-I/usr/include/{arch}-linux-gnu");
    SkeletonBuilder::new()
        .source(SRC)
        .clang_args([multiarch.as_str()])
        .obj(out.join("record.bpf.o"))
        .build()
        .unwrap_or_else(|e| {
            panic!("compiling {SRC} (needs clang: scripts/setup.sh installs it): {e:#}")
        });
    println!("cargo:rerun-if-changed={SRC}");
}
