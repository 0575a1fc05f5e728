#!/usr/bin/env bash
# Installs a built pubsubperf with its man pages and shell completions,
# which the binary generates from its own command-line definition.
#
#   scripts/install.sh                         target/release/pubsubperf into /usr/local
#   scripts/install.sh --prefix DIR            into DIR (DIR/bin, DIR/share/man/man1, ...)
#   scripts/install.sh --binary PATH           install that binary (e.g. a cross-built one,
#                                              which must be runnable here: see cross.sh --emulation)
#   scripts/install.sh --no-binary             only the man pages and completions (package.sh)
#
# Files: PREFIX/bin/pubsubperf, PREFIX/share/man/man1/pubsubperf*.1.gz (one
# page per command), PREFIX/share/bash-completion/completions/pubsubperf,
# PREFIX/share/zsh/site-functions/_pubsubperf,
# PREFIX/share/fish/vendor_completions.d/pubsubperf.fish. Prints each file.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
bin=target/release/pubsubperf
copy_binary=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?"install.sh: --prefix needs a directory"}; shift 2 ;;
    --binary) bin=${2:?"install.sh: --binary needs a path"}; shift 2 ;;
    --no-binary) copy_binary=0; shift ;;
    *) echo "install.sh: unknown argument '$1' (see the comment at the top of scripts/install.sh)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$bin" ]; then
  echo "install.sh: no binary at $bin: build it first (cargo build --release -p pubsubperf) or name it with --binary" >&2
  exit 2
fi

man="$prefix/share/man/man1"
bash_dir="$prefix/share/bash-completion/completions"
zsh_dir="$prefix/share/zsh/site-functions"
fish_dir="$prefix/share/fish/vendor_completions.d"
mkdir -p "$man" "$bash_dir" "$zsh_dir" "$fish_dir"
if [ $copy_binary = 1 ]; then
  install -D -m 755 "$bin" "$prefix/bin/pubsubperf"
  echo "$prefix/bin/pubsubperf"
fi
rm -f "$man"/pubsubperf*.1 "$man"/pubsubperf*.1.gz
"$bin" man --dir "$man" >/dev/null
gzip -9n "$man"/pubsubperf*.1
ls -1 "$man"/pubsubperf*.1.gz
"$bin" completions bash >"$bash_dir/pubsubperf"
"$bin" completions zsh >"$zsh_dir/_pubsubperf"
"$bin" completions fish >"$fish_dir/pubsubperf.fish"
chmod 644 "$man"/pubsubperf*.1.gz "$bash_dir/pubsubperf" "$zsh_dir/_pubsubperf" "$fish_dir/pubsubperf.fish"
printf '%s\n' "$bash_dir/pubsubperf" "$zsh_dir/_pubsubperf" "$fish_dir/pubsubperf.fish"
