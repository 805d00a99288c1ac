#!/usr/bin/env bash
# Installs the Debian packages cnperf's tests use: the load generators the drivers run for
# real, network tooling for the namespace lab, and what the e2e cluster and report tests need.
set -euo pipefail
pkgs=(iperf3 qperf sockperf iperf iproute2 nftables iptables conntrack ethtool util-linux
      containerd runc containernetworking-plugins busybox-static openssl python3 python3-venv gcc make
      chromium prometheus prometheus-node-exporter prometheus-pushgateway bpftool)
# CNI=cilium (make e2e CNI=cilium): the agent compiles its datapath with clang at run time
# (Debian 12's clang 14) and uses ipset; not needed by CI's default run
if [ "${CNI:-}" = cilium ]; then pkgs+=(clang llvm ipset); fi
# Calico, which CI's CNI comparison brings up (.ci/run, CI_CNIS): felix programs ipsets with
# ipset; its build (test/e2e/harness/build-bins.sh: Go, python3, tar) takes its api/ module from
# ../shared/third_party (the module proxy's zip lacks it), checked here: a machine without it
# fails now rather than an hour later
calico=0
case " ${CI_CNIS:-calico:vxlan} " in *" calico:"*) calico=1; pkgs+=(ipset) ;; esac
if [ $calico = 1 ]; then
  api=$(. "$(dirname "$0")/../test/e2e/harness/lib.sh" && echo "$CALICO_API_TARBALL")
  [ -f "$api" ] ||
    { echo "install-deps: $api is missing: CI's CNI comparison builds Calico with it (its api/ module)" >&2; exit 1; }
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# netperf and uperf: built from ../shared/third_party (not packaged by Debian 12)
"$(dirname "$0")/install-third-party.sh"
# Apache Otava (PyPI) in a venv: the change point test compares cnperf trend with it
"$(dirname "$0")/install-otava.sh" >/dev/null
