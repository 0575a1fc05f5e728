#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine (root): installs what is
# missing, builds, checks formatting and lints, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --all --check
cargo clippy --release --workspace --all-targets --locked -- -D warnings
cargo test --release --workspace --locked
