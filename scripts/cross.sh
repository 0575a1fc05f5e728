#!/usr/bin/env bash
# Cross-builds pubsubperf for an ARM board from an x86-64 Debian 12 machine
# (run as root): Debian's cross toolchain and the board architecture's
# multiarch packages of the DDS and iceoryx libraries, Rust's target from
# rustup, then a release build. Idempotent: installs only what is missing.
#
#   scripts/cross.sh aarch64 [CARGO ARGS...]   64-bit ARM (arm64): Raspberry Pi 3/4/5 with a 64-bit OS, Jetson, i.MX8, Graviton
#   scripts/cross.sh armhf   [CARGO ARGS...]   32-bit ARMv7 with hardware float: Raspberry Pi OS 32-bit, i.MX6, BeagleBone
#   scripts/cross.sh --print-env aarch64       the environment it builds with (eval-able), no build
#   scripts/cross.sh --prepare aarch64         no build: installs what the build needs (the toolchain,
#                                              the board's libraries, Rust's target), as a build would
#   scripts/cross.sh --emulation aarch64       no build: lets this machine run the target's binaries
#                                              (qemu-user-static registered with binfmt_misc, so that
#                                              a process the binary starts is emulated too)
#
#   scripts/cross.sh armhf --rust-only          only the bindings written in Rust (udp, tcp, uds,
#                                              intra, shm, iceoryx2, zenoh; SQLite compiled in):
#                                              no multiarch library needed
#
# aarch64 takes the board's libraries as multiarch packages (PACKAGE:arm64,
# installed beside the host's). armhf takes them unpacked into a sysroot,
# target/sysroot/armhf, downloaded with a private apt state that knows only
# armhf (apt checks them against Debian's signed index); the machine's dpkg
# database is not touched. Multiarch needs the same version of every
# Multi-Arch: same library (libssl3, linux-libc-dev) on both architectures,
# which breaks whenever one architecture's index on the mirror lags behind
# the other's; a sysroot does not care. Build scripts and pkg-config find
# the sysroot through PUBSUBPERF_SYSROOT and PKG_CONFIG_SYSROOT_DIR, and
# qemu runs the binary with its loader and libraries (QEMU_LD_PREFIX).
#
# The binary lands in target/<rust triple>/release/pubsubperf. Other
# arguments pass through to cargo build.
# PUBSUBPERF_CROSS_NO_INSTALL=1 skips apt-get and rustup (for machines set up by hand).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=build
case "${1:-}" in
  --print-env) mode=print-env; shift ;;
  --emulation) mode=emulation; shift ;;
  --prepare) mode=prepare; shift ;;
esac
case "${1:-}" in
  aarch64 | arm64 | aarch64-unknown-linux-gnu)
    arch=arm64 triple=aarch64-unknown-linux-gnu gnu=aarch64-linux-gnu qemu=qemu-aarch64 ;;
  armhf | armv7 | armv7-unknown-linux-gnueabihf)
    arch=armhf triple=armv7-unknown-linux-gnueabihf gnu=arm-linux-gnueabihf qemu=qemu-arm
    # Through ./target's link (scripts/test.sh's build cache): the same
    # path from every clone, so the flags that name it, and the build, are
    # the cache's.
    sysroot="$(realpath -m target)/sysroot/armhf" ;;
  *)
    echo "cross.sh: TARGET must be aarch64 or armhf (got '${1:-}'); e.g. scripts/cross.sh aarch64" >&2
    exit 2 ;;
esac
shift
rust_only=0
if [ "${1:-}" = "--rust-only" ]; then
  rust_only=1
  shift
  set -- --no-default-features --features rust-only "$@"
fi

# Cargo and the cc crate read these: the linker and C/C++ compilers of the
# target, and pkg-config answering with the target's multiarch libraries
# (our build scripts and libsqlite3-sys ask it).
upper=$(echo "$triple" | tr 'a-z-' 'A-Z_')
cross_env=(
  "CARGO_TARGET_${upper}_LINKER=$gnu-gcc"
  "CC_${triple//-/_}=$gnu-gcc"
  "CXX_${triple//-/_}=$gnu-g++"
  "AR_${triple//-/_}=$gnu-ar"
  "PKG_CONFIG_ALLOW_CROSS=1"
)
if [ -n "${sysroot:-}" ]; then
  libdir="$sysroot/usr/lib/$gnu"
  cross_env+=(
    "PUBSUBPERF_SYSROOT=$sysroot"
    "PKG_CONFIG_SYSROOT_DIR=$sysroot"
    "PKG_CONFIG_LIBDIR=$libdir/pkgconfig:$sysroot/usr/share/pkgconfig"
    "CFLAGS_${triple//-/_}=-isystem $sysroot/usr/include -isystem $sysroot/usr/include/$gnu"
    "CXXFLAGS_${triple//-/_}=-isystem $sysroot/usr/include -isystem $sysroot/usr/include/$gnu"
    "CARGO_TARGET_${upper}_RUSTFLAGS=-L native=$libdir -C link-arg=-Wl,-rpath-link,$libdir -C link-arg=-Wl,-rpath-link,$sysroot/lib/$gnu"
    "QEMU_LD_PREFIX=$sysroot"
  )
else
  cross_env+=("PKG_CONFIG_LIBDIR=/usr/lib/$gnu/pkgconfig:/usr/share/pkgconfig")
fi
if [ $mode = print-env ]; then
  printf 'export %q\n' "${cross_env[@]}"
  echo "export PUBSUBPERF_CROSS_TRIPLE=$triple PUBSUBPERF_CROSS_GNU=$gnu PUBSUBPERF_CROSS_QEMU=$qemu"
  exit 0
fi

# The board's libraries (scripts/apt-packages-cross.txt) with everything
# they depend on, libc included, unpacked into $sysroot; each package also
# unpacked with its control files under $sysroot/.pkgs/NAME, where
# dpkg-shlibdeps finds their shlibs and symbols (scripts/package.sh).
# Done again only when the package list changes.
make_sysroot() {
  local pkgs=() p state deb
  while read -r p; do
    p="${p%%#*}"; p="${p//[[:space:]]/}"
    [ -n "$p" ] && pkgs+=("$p")
  done < scripts/apt-packages-cross.txt
  pkgs+=(libc6 libstdc++6 libgcc-s1)
  if [ "$(cat "$sysroot/.complete" 2>/dev/null)" = "${pkgs[*]}" ]; then
    return
  fi
  echo "cross.sh: unpacking the $arch sysroot ($sysroot): ${pkgs[*]}" >&2
  state="$sysroot.apt"
  rm -rf "$sysroot" "$state"
  mkdir -p "$sysroot" "$state/lists/partial" "$state/archives/partial"
  : > "$state/status"
  local apt=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
    -o "Dir::State=$state" -o "Dir::State::Lists=$state/lists"
    -o "Dir::State::status=$state/status" -o "Dir::Cache=$state"
    -o "Dir::Cache::archives=$state/archives" -o Debug::NoLocking=1)
  if ! apt-get "${apt[@]}" update -qq 2>"$state/update.err"; then
    echo "cross.sh: warning: some $arch package indexes did not download; the sysroot's packages come from the others:" >&2
    grep '^E:' "$state/update.err" | head -n 3 >&2 || true
  fi
  apt-get "${apt[@]}" install --download-only -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  # The C library's development files come from the cross toolchain
  # (libc6-dev-armhf-cross); the board's own would shadow them with linker
  # scripts that name the board's absolute paths.
  local toolchain=" libc6-dev libc-dev-bin linux-libc-dev libcrypt-dev libnsl-dev libtirpc-dev rpcsvc-proto "
  for deb in "$state"/archives/*.deb; do
    [[ "$toolchain" == *" $(dpkg-deb -f "$deb" Package) "* ]] && continue
    dpkg-deb -x "$deb" "$sysroot"
    mkdir -p "$sysroot/.pkgs"
    dpkg-deb -R "$deb" "$sysroot/.pkgs/$(dpkg-deb -f "$deb" Package)"
  done
  rm -rf "$state"
  echo "${pkgs[*]}" > "$sysroot/.complete"
}

if [ $mode = emulation ]; then
  # The kernel hands the target's ELF files to qemu.
  export DEBIAN_FRONTEND=noninteractive
  # Mounted before qemu-user-static is installed, whose set-up registers
  # its handlers there.
  if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  want=()
  # The target's loader and libc: multiarch libc6:ARCH, or the sysroot
  # (QEMU_LD_PREFIX, from --print-env).
  emulated=(qemu-user-static binfmt-support)
  if [ -n "${sysroot:-}" ]; then make_sysroot; else emulated+=("libc6:$arch"); fi
  for p in "${emulated[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || want+=("$p")
  done
  if [ ${#want[@]} -gt 0 ]; then
    if [ -z "${sysroot:-}" ] && ! grep -qx "$arch" <<<"$(dpkg --print-foreign-architectures)"; then
      dpkg --add-architecture "$arch"
      apt-get update -qq
    fi
    apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
  fi
  [ -e "/proc/sys/fs/binfmt_misc/$qemu" ] || update-binfmts --enable "$qemu"
  if [ "$(head -n 1 "/proc/sys/fs/binfmt_misc/$qemu" 2>/dev/null)" != enabled ]; then
    echo "cross.sh: could not register $qemu with binfmt_misc (update-binfmts --enable $qemu)" >&2
    exit 1
  fi
  echo "cross.sh: $arch binaries run here under $qemu (user-mode emulation)" >&2
  exit 0
fi

if [ "${PUBSUBPERF_CROSS_NO_INSTALL:-}" != 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # The board's libraries, one per line in apt-packages-cross.txt, each
  # installed as PACKAGE:ARCH beside the host's own.
  want=()
  dpkg -s "crossbuild-essential-$arch" >/dev/null 2>&1 || want+=("crossbuild-essential-$arch")
  while [ $rust_only = 0 ] && [ -z "${sysroot:-}" ] && read -r p; do
    p="${p%%#*}"; p="${p//[[:space:]]/}"
    [ -z "$p" ] && continue
    dpkg -s "$p:$arch" >/dev/null 2>&1 || want+=("$p:$arch")
  done < scripts/apt-packages-cross.txt
  if [ ${#want[@]} -gt 0 ]; then
    echo "cross.sh: installing ${want[*]}" >&2
    if [ -z "${sysroot:-}" ]; then
      grep -qx "$arch" <<<"$(dpkg --print-foreign-architectures)" || dpkg --add-architecture "$arch"
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
  fi
  if [ $rust_only = 0 ] && [ -n "${sysroot:-}" ]; then make_sysroot; fi
  grep -qx "$triple" <<<"$(rustup target list --installed)" || rustup target add "$triple" >&2
fi
if [ $mode = prepare ]; then
  exit 0
fi

echo "cross.sh: cargo build --release --target $triple $*" >&2
env "${cross_env[@]}" cargo build --release --locked --target "$triple" -p pubsubperf "$@"
echo "target/$triple/release/pubsubperf"
