//! Compiles pubsubperf.idl with CycloneDDS's `idlc` and our C shim, and
//! links libddsc. Without CycloneDDS (no `dds/dds.h` or no `idlc`), the crate
//! still builds: the binding then reports why it is unavailable.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=pubsubperf.idl");
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rustc-check-cfg=cfg(has_ddsc)");
    println!("cargo:rustc-check-cfg=cfg(no_ddsc)");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    match build(&out) {
        Ok(version) => {
            println!("cargo:rustc-cfg=has_ddsc");
            println!("cargo:rustc-env=PUBSUBPERF_DDSC_VERSION={version}");
        }
        Err(why) => {
            println!("cargo:warning=cyclonedds binding built without CycloneDDS: {why}");
            // A path that never exists: cargo runs this script again at the
            // next build, which finds CycloneDDS once it is installed (its
            // files keep the package's old times, so watching them would not).
            println!(
                "cargo:rerun-if-changed={}",
                out.join("until-found").display()
            );
            println!("cargo:rustc-cfg=no_ddsc");
            println!("cargo:rustc-env=PUBSUBPERF_DDSC_MISSING={why}");
            println!("cargo:rustc-env=PUBSUBPERF_DDSC_VERSION=not installed");
        }
    }
}

fn build(out: &std::path::Path) -> Result<String, String> {
    // Include and link flags: pkg-config's CycloneDDS, else the defaults.
    let mut includes: Vec<PathBuf> = Vec::new();
    let mut version = String::from("unknown");
    let pc = Command::new("pkg-config")
        .args(["--cflags-only-I", "--modversion", "CycloneDDS"])
        .output();
    match pc {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            for tok in text.split_whitespace() {
                if let Some(dir) = tok.strip_prefix("-I") {
                    includes.push(PathBuf::from(dir));
                } else {
                    version = tok.to_string();
                }
            }
            let libs = Command::new("pkg-config")
                .args(["--libs-only-L", "CycloneDDS"])
                .output()
                .map_err(|e| e.to_string())?;
            for tok in String::from_utf8_lossy(&libs.stdout).split_whitespace() {
                if let Some(dir) = tok.strip_prefix("-L") {
                    println!("cargo:rustc-link-search=native={dir}");
                }
            }
        }
        _ => includes.push(PathBuf::from("/usr/include")),
    }
    let header_found = includes.iter().any(|d| d.join("dds/dds.h").is_file())
        || PathBuf::from("/usr/include/dds/dds.h").is_file();
    if !header_found {
        return Err("dds/dds.h not found (Debian: apt install cyclonedds-dev)".into());
    }
    let idl =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("pubsubperf.idl");
    let idlc = Command::new("idlc")
        .arg("-o")
        .arg(out)
        .arg(&idl)
        .output()
        .map_err(|e| format!("idlc not runnable ({e}; Debian: apt install cyclonedds-tools)"))?;
    if !idlc.status.success() {
        return Err(format!(
            "idlc failed: {}",
            String::from_utf8_lossy(&idlc.stderr).trim()
        ));
    }
    let mut cc = cc::Build::new();
    cc.file("src/shim.c")
        .file(out.join("pubsubperf.c"))
        .include(out)
        .define("DDS_NDEBUG", None)
        .opt_level(2)
        .warnings(true);
    for d in &includes {
        cc.include(d);
    }
    // CycloneDDS's shared-memory header includes iceoryx's C binding; a
    // cross build with a sysroot (scripts/cross.sh armhf) takes the board's.
    println!("cargo:rerun-if-env-changed=PUBSUBPERF_SYSROOT");
    let sysroot = env::var("PUBSUBPERF_SYSROOT").unwrap_or_default();
    for d in [
        "/usr/include/iceoryx/v2.0.3",
        "/usr/local/include/iceoryx/v2.0.3",
    ] {
        let d = PathBuf::from(format!("{sysroot}{d}"));
        if d.is_dir() {
            cc.include(d);
        }
    }
    // CycloneDDS is there: a shim that does not compile is a bug, not a
    // missing dependency, so it fails the build.
    cc.compile("pubsubperf_ddsc_shim");
    println!("cargo:rustc-link-lib=ddsc");
    Ok(version)
}
