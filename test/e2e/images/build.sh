#!/bin/bash
# Build the e2e cluster's images from local binaries (no registry, no pulls, no Docker):
#   localhost/cnperf-e2e/pause:v1  the sandbox image (static pause from build-bins.sh)
#   <agent image>                  cnperf's agent image, named as the Kubernetes platform's default
#                                  (`cnperf version --image`), built by `cnperf image build`
# Agent image contents: /usr/local/bin/cnperf (built from this repo), iperf3, qperf, sockperf,
# iperf (2) from Debian with their shared libraries, busybox-static as /bin/sh and its applets;
# netperf, netserver and uperf from /usr/local/bin as .ci/install-third-party.sh builds them from
# ../shared/third_party (Debian 12 does not package them; the script builds them when missing and
# does nothing when they are there), with their ldd libraries.
# Output: $E2E_IMAGES/{pause,agent}.tar (OCI archives for `ctr images import`; pause by mkoci.py),
#         $E2E_IMAGES/agent.name (the agent image's name) and $E2E_IMAGES/cnperf (the cnperf
#         binary that is in the image, for the tests' host side).
# usage: build.sh      env: CNPERF_E2E_CNPERF_BIN=<prebuilt cnperf> (default: go build ./cmd/cnperf)
#                          CNPERF_E2E_AGENT_IMAGE=<name> (default: the platform's default image)
set -euo pipefail
IMG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$IMG_DIR/../harness/lib.sh"
T0=$(now)
OUT=$E2E_IMAGES
mkdir -p "$OUT"
[ -x "$PAUSE_DIR/pause" ] || { echo "missing $PAUSE_DIR/pause: run test/e2e/harness/build-bins.sh" >&2; exit 1; }
for t in /usr/bin/busybox /usr/bin/iperf3 /usr/bin/qperf /usr/bin/sockperf /usr/bin/iperf; do
  [ -x $t ] || { echo "missing $t (apt-get install busybox-static iperf3 qperf sockperf iperf)" >&2; exit 1; }
done
/usr/bin/busybox --list | grep -x sh >/dev/null || { echo "/usr/bin/busybox must be busybox-static" >&2; exit 1; }

W=$(mktemp -d /tmp/cnperf-e2e-img.XXXXXX)
trap 'rm -rf "$W"' EXIT

# --- pause ---
mkdir -p "$W/pause"
cp "$PAUSE_DIR/pause" "$W/pause/pause"
python3 "$IMG_DIR/mkoci.py" "$W/pause" "$PAUSE_IMAGE" "$W/pause.tar" --entrypoint '["/pause"]' --cmd 'null'

# --- agent: made by `cnperf image build` (the path users take without Docker) ---
CN=$W/cnperf
if [ -n "${CNPERF_E2E_CNPERF_BIN:-}" ]; then
  echo "agent: using prebuilt cnperf $CNPERF_E2E_CNPERF_BIN"
  cp "$CNPERF_E2E_CNPERF_BIN" "$CN"
else
  (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "$CN" ./cmd/cnperf)
fi
# the same binary for the host side of the tests (e2e.env: CNPERF_E2E_CNPERF)
cp "$CN" "$OUT/cnperf.tmp" && mv "$OUT/cnperf.tmp" "$OUT/cnperf"
tools="/usr/bin/iperf3 /usr/bin/qperf /usr/bin/sockperf /usr/bin/iperf"
"$REPO_ROOT/.ci/install-third-party.sh"
for opt in netperf netserver uperf; do
  if [ -x /usr/local/bin/$opt ]; then
    tools="$tools /usr/local/bin/$opt"
  else
    echo "agent: WARNING: no /usr/local/bin/$opt (no ../shared/third_party): the image lacks it" >&2
  fi
done
# each tool goes to /usr/bin with the shared libraries it needs; busybox-static gives /bin/sh
# and its applets; cnperf goes to /usr/local/bin; Cmd is `sleep infinity`
adds=()
for b in $tools; do adds+=(--add "$b:/usr/bin/$(basename "$b")"); done
[ -f /etc/services ] && adds+=(--add /etc/services)
NAME=$(agent_image "$CN")
"$CN" image build --binary "$CN" --tag "$NAME" --base scratch --shell /usr/bin/busybox "${adds[@]}" -o "$W/agent.tar"
echo "$NAME" > "$W/agent.name"
# replace the outputs only when all are built (a cluster being brought up may read them)
for f in pause.tar agent.tar agent.name; do mv -f "$W/$f" "$OUT/$f"; done
printf '[images %.1fs] %s and %s built in %s\n' "$(elapsed "$T0")" "$PAUSE_IMAGE" "$NAME" "$OUT"
