#!/usr/bin/env bash
# Installs RTI Connext DDS's native libraries for the `connext` binding, from
# the wheel of RTI Connector for Python on the Python package registry
# (rticonnextdds-connector, Connext 6.1.2). Opt in: nothing of RTI's is
# downloaded otherwise (scripts/setup.sh --with-connext calls this;
# scripts/test.sh does, so that the suite tests every binding).
#
#   scripts/connext.sh [DIR]    DIR defaults to /usr/local/lib/pubsubperf/connext
#
# DIR gets one folder per platform of the wheel (linux-x64, linux-arm64,
# linux-arm), each with librtiddsconnector.so, libnddsc.so and
# libnddscore.so, and LICENSE.txt saying which licence applies. The binding
# looks there, or in PUBSUBPERF_CONNEXT_LIB=DIR (a folder holding the three
# libraries, for example a Connext Pro installation's plus Connector's).
set -euo pipefail

dir="${1:-/usr/local/lib/pubsubperf/connext}"
version=1.2.4
# The wheel's SHA-256 as the registry served it (2024-10-22 release).
sha256=ea27a09a8d7c999b0fd084e8d89417b27229d8a5caedbfdb91fa951cefb9cab5
platforms=(linux-x64 linux-arm64 linux-arm)
libs=(librtiddsconnector.so libnddsc.so libnddscore.so)

licence() {
  cat <<EOF
RTI Connext DDS libraries (Connext 6.1.2, from RTI Connector for Python
$version, rticonnextdds-connector on the Python package registry).

They are RTI's, not pubsubperf's, and are licensed by RTI under the RTI
Software License for Non-Commercial Use (#4040), which RTI publishes with
RTI Connector: https://github.com/rticommunity/rticonnextdds-connector-py
(LICENSE.pdf). A user who holds an RTI Connext Professional licence is
covered by that licence instead. Commercial use needs a licence from RTI
(https://www.rti.com).
EOF
}

installed() {
  for p in "${platforms[@]}"; do
    for l in "${libs[@]}"; do
      [ -s "$dir/$p/$l" ] || return 1
    done
  done
  grep -qx "version $version" "$dir/VERSION" 2>/dev/null
}

if installed; then
  exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "connext: installing python3-pip (to download RTI Connector's wheel)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "connext: downloading rticonnextdds-connector $version (RTI Connext 6.1.2 libraries)" >&2
python3 -m pip download -q --no-deps --only-binary=:all: \
  "rticonnextdds-connector==$version" -d "$tmp" >&2
wheel=("$tmp"/rticonnextdds_connector-"$version"-*.whl)
got=$(sha256sum "${wheel[0]}" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "connext: the wheel's SHA-256 is $got, expected $sha256; not installed" >&2
  exit 1
fi
python3 - "${wheel[0]}" "$tmp/x" "${platforms[@]}" <<'PY'
import sys, zipfile
wheel, out, platforms = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        parts = name.split("/")
        if len(parts) == 4 and parts[1] == "lib" and parts[2] in platforms and parts[3].endswith(".so"):
            z.extract(name, out)
PY
mkdir -p "$dir"
for p in "${platforms[@]}"; do
  rm -rf "${dir:?}/$p"
  mkdir -p "$dir/$p"
  for l in "${libs[@]}"; do
    install -m 0644 "$tmp/x/rticonnextdds-connector/lib/$p/$l" "$dir/$p/$l"
  done
done
licence >"$dir/LICENSE.txt"
echo "version $version" >"$dir/VERSION"
echo "connext: installed in $dir" >&2
licence | sed 's/^/connext: /' >&2
