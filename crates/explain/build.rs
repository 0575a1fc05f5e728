//! Compiles the eBPF program (src/bpf/record.bpf.c) with clang into an
//! object the loader embeds (libbpf-cargo; Debian's clang).

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

const SRC: &str = "src/bpf/record.bpf.c";

/// The multiarch include directory holding asm/types.h: the target's,
/// else the build machine's (`HOST`'s architecture).
fn asm_types_dir() -> Option<String> {
    let arch_of = |var: &str| {
        let v = std::env::var(var).unwrap_or_default();
        v.split('-').next().unwrap_or_default().to_string()
    };
    [arch_of("TARGET"), arch_of("HOST")]
        .into_iter()
        .map(|arch| format!("/usr/include/{arch}-linux-gnu"))
        .find(|d| std::path::Path::new(d).join("asm/types.h").exists())
}

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    // The kernel's UAPI headers (linux/bpf.h) include asm/types.h, which
    // Debian keeps under a multiarch directory. The program is compiled for
    // the BPF target, whose integer types every architecture's asm/types.h
    // gives alike: the target's directory if the machine has it, else the
    // build machine's own (a cross build from a sysroot has no other).
    let multiarch = asm_types_dir()
        .map(|d| format!("-I{d}"))
        .expect("asm/types.h under /usr/include/<multiarch> (linux-libc-dev, installed with build-essential)");
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
