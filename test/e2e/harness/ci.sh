#!/bin/bash
# CI entrypoint for the e2e cluster tests (called from .ci/run): installs the Debian packages
# the harness needs, checks the machine, then runs the equivalent of `make e2e`.
# Needs root, Go >= 1.24 on PATH (or /usr/local/go/bin), network access to the Go module proxy
# and Debian's archive. Cold (empty Go build cache): ~15-20 min on 2 cores, mostly building
# Kubernetes; warm (binaries cached in /var/cache/cnperf-e2e): ~2 min. See docs/e2e.md.
# usage: ci.sh [go test args...]     env: as e2e.sh (NODES, NET_MODE, ...), E2E_SKIP_APT=1
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$(date +%s)
export PATH=$PATH:/usr/local/go/bin
PKGS="containerd runc containernetworking-plugins iptables conntrack iproute2 util-linux openssl curl python3 busybox-static iperf3 qperf sockperf iperf bpftool"
[ "${CNI:-}" != cilium ] || PKGS="$PKGS clang llvm ipset"   # the agent compiles its datapath at run time
[ "${CNI:-}" != calico ] || PKGS="$PKGS ipset"              # felix programs ipsets with it
[ "${KUBE_PROXY_MODE:-}" != nftables ] || PKGS="$PKGS nftables" # kube-proxy's nftables mode runs nft

if [ "${E2E_SKIP_APT:-0}" != 1 ]; then
  missing=""
  for p in $PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "==> apt-get install$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || { echo "apt-get update failed" >&2; exit 1; }
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $PKGS >/dev/null || { echo "apt-get install failed" >&2; exit 1; }
  fi
  echo "==> apt packages present ($(( $(date +%s) - T0 )) s)"
fi

# machine checks: fail early with a clear message
fail=0
[ "$(id -u)" = 0 ] || { echo "ci.sh: must run as root" >&2; fail=1; }
command -v go >/dev/null || { echo "ci.sh: no go on PATH" >&2; fail=1; }
ip netns add cnpe2e-probe 2>/dev/null && ip netns del cnpe2e-probe || { echo "ci.sh: cannot create network namespaces" >&2; fail=1; }
[ -d /sys/fs/cgroup/cpu ] || [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "ci.sh: no usable cgroup hierarchy" >&2; fail=1; }
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || { echo "ci.sh: no overlayfs" >&2; fail=1; }
[ $fail = 0 ] || exit 1
echo "==> $(go version), kernel $(uname -r), cgroup $(stat -fc %T /sys/fs/cgroup), $(nproc) cores"

# CI's time (75 minutes cold, issue 32): TestProgrammingKubeProxy measures kube-proxy as it is and
# slowed, not in its other mode (nftables on CI's iptables cluster: 89 s more; by hand it runs)
export CNPERF_E2E_KUBE_PROXY_OTHER_MODE=${CNPERF_E2E_KUBE_PROXY_OTHER_MODE:-0}
"$HARNESS/e2e.sh" "$@"
rc=$?
echo "==> ci.sh total $(( $(date +%s) - T0 )) s (exit $rc)"
exit $rc
