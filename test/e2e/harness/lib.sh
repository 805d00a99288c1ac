# shellcheck shell=bash disable=SC2034
# Common settings of the cnperf e2e harness. Sourced by every script here; defines no
# side effects beyond variables and functions.
#
# Everything the harness writes lives OUTSIDE the repository:
#   $E2E_CACHE   (/var/cache/cnperf-e2e)  built binaries, keyed by version + build flags; images
#   $E2E_HOME    (/var/lib/cnperf-e2e)    lock file; $E2E_STATE below it
#   $E2E_STATE   (/var/lib/cnperf-e2e/state) one running cluster: pids, logs, pki, kubeconfigs,
#                containerd roots, etcd data. Removed by down.sh.
HARNESS=${HARNESS:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
REPO_ROOT=${REPO_ROOT:-$(cd "$HARNESS/../../.." && pwd)}

K8S_VERSION=${K8S_VERSION:-1.34.4}
ETCD_VERSION=${ETCD_VERSION:-3.6.4}
COREDNS_VERSION=${COREDNS_VERSION:-1.12.4}

E2E_CACHE=${CNPERF_E2E_CACHE:-/var/cache/cnperf-e2e}
E2E_HOME=${CNPERF_E2E_HOME:-/var/lib/cnperf-e2e}
E2E_STATE=${CNPERF_E2E_STATE:-$E2E_HOME/state}
E2E_IMAGES=${CNPERF_E2E_IMAGES:-$E2E_CACHE/images}

# Build flags. They are part of the cache key: changing any of them (or the Go version)
# gives a new cache directory and a rebuild. Keep them fixed across CI runs, otherwise the
# Go build cache is invalidated too (a full 10+ min rebuild).
BUILD_ENV="CGO_ENABLED=0 GOFLAGS=-buildvcs=false"
BUILD_FLAGS="-trimpath"
BUILD_LDFLAGS="-s -w"
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo unknown)
FLAGS_HASH=$(printf '%s|%s|%s|%s|stamp-v1' "$BUILD_ENV" "$BUILD_FLAGS" "$BUILD_LDFLAGS" "$GO_VERSION" |
  sha256sum | cut -c1-12)

K8S_DIR=${K8S_DIR:-$E2E_CACHE/k8s-v$K8S_VERSION-$FLAGS_HASH}
ETCD_DIR=${ETCD_DIR:-$E2E_CACHE/etcd-v$ETCD_VERSION-$FLAGS_HASH}
COREDNS_DIR=${COREDNS_DIR:-$E2E_CACHE/coredns-v$COREDNS_VERSION-$FLAGS_HASH}
PAUSE_HASH=$(cat "$HARNESS/pause/main.go" "$HARNESS/pause/go.mod" 2>/dev/null | sha256sum | cut -c1-8)
PAUSE_DIR=${PAUSE_DIR:-$E2E_CACHE/pause-$PAUSE_HASH-$FLAGS_HASH}
K8S_BINS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"

# Real CNIs (CNI=flannel): flanneld from a copy of its main package (without the tencentvpc and
# udp backends: one of their dependencies is not served by the module proxy) and the flannel
# CNI meta-plugin from containernetworking/plugins (its last release with plugins/meta/flannel;
# github.com/flannel-io/cni-plugin is not served by the proxy).
FLANNEL_VERSION=${FLANNEL_VERSION:-0.28.10}
FLANNEL_CNI_VERSION=${FLANNEL_CNI_VERSION:-0.9.1}
FLANNEL_DIR=${FLANNEL_DIR:-$E2E_CACHE/flannel-v$FLANNEL_VERSION-cni-v$FLANNEL_CNI_VERSION-$FLAGS_HASH}
FLANNEL_BINS="flanneld flannel"
# Calico (CNI=calico): the release-v3.28 branch (v3.28.4 + 11), the one version of
# github.com/projectcalico/calico the module proxy serves; its zip lacks the nested api/ module
# its go.mod replaces with ./api, which ../shared/third_party holds. CALICO_VERSION is stamped
# into the binaries as calico's Makefiles do (git describe), so ClusterInformation says it.
CALICO_COMMIT=a0db560f0520
CALICO_VERSION=v3.28.4-11-g$CALICO_COMMIT
CALICO_MODULE_VERSION=v1.11.0-cni-plugin.0.20250813170300-$CALICO_COMMIT
CALICO_API_TARBALL=${CALICO_API_TARBALL:-$REPO_ROOT/../shared/third_party/calico-api-$CALICO_COMMIT.tar.gz}
CALICO_DIR=${CALICO_DIR:-$E2E_CACHE/calico-$CALICO_VERSION-$FLAGS_HASH}
CALICO_BINS="calico-node calico"
# Cilium (CNI=cilium): the agent and the CNI plugin of v1.15.19 (newer lines need modules the
# proxy does not serve), CGO_ENABLED=0, from a writable copy of the module (its go.mod and
# go.sum: the exact versions Cilium builds with); the datapath sources (bpf/), which the agent
# compiles with clang at run time, are copied from the same module zip into the cache directory.
CILIUM_VERSION=${CILIUM_VERSION:-1.15.19}
# (-p1: built with build-bins.sh's one patch, for kernels without loadable modules)
CILIUM_DIR=${CILIUM_DIR:-$E2E_CACHE/cilium-v$CILIUM_VERSION-p1-$FLAGS_HASH}
CILIUM_BINS="cilium-agent cilium-cni"

# Multus (MULTUS=1, with any CNI): the thin multus plugin of Multus v4.2.2 and the whereabouts
# IPAM plugin v0.9.2, both from writable copies of their module zips (their vendor/ holds only
# modules.txt, so they build with -mod=mod from their own go.mod and go.sum), with the
# NetworkAttachmentDefinition CRD (from multus's deployments/multus-daemonset.yml) and
# whereabouts' CRDs (doc/crds) beside them. multus.sh builds, installs and removes them.
MULTUS=${MULTUS:-0}
case $MULTUS in 0|1) ;; *) echo "MULTUS must be 0 or 1, not '$MULTUS'" >&2; exit 1 ;; esac
# KubeVirt (KUBEVIRT=1, with any CNI): kubevirt.sh builds it (KUBEVIRT_SRC: its source at
# v1.0.1; about 50 min cold, cached after) and installs it in QEMU software emulation after the
# cluster is up; down.sh removes it first. The e2e test TestKubeVirtVMs needs it (skips without).
KUBEVIRT=${KUBEVIRT:-0}
case $KUBEVIRT in 0|1) ;; *) echo "KUBEVIRT must be 0 or 1, not '$KUBEVIRT'" >&2; exit 1 ;; esac
MULTUS_VERSION=${MULTUS_VERSION:-4.2.2}
WHEREABOUTS_VERSION=${WHEREABOUTS_VERSION:-0.9.2}
MULTUS_DIR=${MULTUS_DIR:-$E2E_CACHE/multus-v$MULTUS_VERSION-whereabouts-v$WHEREABOUTS_VERSION-$FLAGS_HASH}
MULTUS_BINS="multus whereabouts"

# Cluster shape
NODES=${NODES:-2}
case $NODES in [2-9]) ;; *) echo "NODES must be 2..9, not '$NODES'" >&2; exit 1 ;; esac
NET_MODE=${NET_MODE:-routed}
case $NET_MODE in
  routed|hostgw|host-gw) NET_MODE=routed ;;
  vxlan) ;;
  *) echo "NET_MODE must be routed (alias hostgw) or vxlan, not '$NET_MODE'" >&2; exit 1 ;;
esac
# CNI: bridge (default: the CNI bridge plugin, with NET_MODE routed|vxlan made by the harness),
# flannel (flanneld --kube-subnet-mgr per node + the flannel CNI plugin; CNI_MODE, alias
# FLANNEL_MODE, vxlan (default) or host-gw) or calico (calico-node -felix per node + the calico
# CNI plugin and calico-ipam; CNI_MODE vxlan). For a real CNI, NET_MODE is derived from its mode
# (vxlan -> vxlan, host-gw -> routed) so tests that only care about encapsulation keep working.
CNI=${CNI:-bridge}
case $CNI in
  bridge) CNI_MODE=$NET_MODE ;;
  flannel)
    CNI_MODE=${CNI_MODE:-${FLANNEL_MODE:-vxlan}}
    case $CNI_MODE in
      vxlan) NET_MODE=vxlan ;;
      host-gw|hostgw|routed) CNI_MODE=host-gw NET_MODE=routed ;;
      *) echo "CNI_MODE (FLANNEL_MODE) must be vxlan or host-gw for CNI=flannel, not '$CNI_MODE'" >&2; exit 1 ;;
    esac ;;
  calico)
    CNI_MODE=${CNI_MODE:-vxlan}
    [ "$CNI_MODE" = vxlan ] || { echo "CNI_MODE must be vxlan for CNI=calico (no BIRD: no BGP routing; the kernel has no IPIP), not '$CNI_MODE'" >&2; exit 1; }
    NET_MODE=vxlan ;;
  cilium)
    CNI_MODE=${CNI_MODE:-vxlan}
    case $CNI_MODE in
      vxlan) NET_MODE=vxlan ;;
      native|routed) CNI_MODE=native NET_MODE=routed ;;
      *) echo "CNI_MODE must be vxlan or native for CNI=cilium, not '$CNI_MODE'" >&2; exit 1 ;;
    esac ;;
  *) echo "CNI must be bridge, flannel, calico or cilium, not '$CNI'" >&2; exit 1 ;;
esac
# IP_FAMILY: ipv4 (default), ipv6 (single-stack IPv6: the API server, the nodes' addresses, pods,
# Services, CoreDNS and kube-proxy are IPv6 only) or dual (IPv4 first, IPv6 second: the nodes'
# underlay, pods, Services and kube-proxy get both families). Only CNI=bridge and CNI=calico do
# IPv6 here.
IP_FAMILY=${IP_FAMILY:-ipv4}
# KUBE_PROXY_MODE: kube-proxy's mode, iptables (default) or nftables (kube-proxy's nftables
# mode, GA in 1.33; it needs the nft command: Debian's nftables package). cnperf programming
# compares the two (docs/programming.md).
KUBE_PROXY_MODE=${KUBE_PROXY_MODE:-iptables}
case $KUBE_PROXY_MODE in
  iptables|nftables) ;;
  *) echo "KUBE_PROXY_MODE must be iptables or nftables, not '$KUBE_PROXY_MODE'" >&2; exit 1 ;;
esac
case $IP_FAMILY in
  ipv4|ipv6|dual) ;;
  *) echo "IP_FAMILY must be ipv4, ipv6 or dual, not '$IP_FAMILY'" >&2; exit 1 ;;
esac
case $IP_FAMILY/$CNI in
  dual/bridge|dual/calico|ipv6/bridge|ipv6/calico|ipv4/*) ;;
  *) echo "IP_FAMILY=$IP_FAMILY works with CNI=bridge or CNI=calico, not CNI=$CNI" >&2; exit 1 ;;
esac
# (MULTUS=1's networks and its host side are IPv4 and were never tried on an IPv6-only cluster)
[ "$IP_FAMILY/$MULTUS" != ipv6/1 ] || { echo "MULTUS=1 is not built for IP_FAMILY=ipv6 (its networks are IPv4); use IP_FAMILY=dual or ipv4" >&2; exit 1; }
# which families the cluster has: HAS_V4=1 for ipv4 and dual, HAS_V6=1 for ipv6 and dual
HAS_V4=1; HAS_V6=0
case $IP_FAMILY in ipv6) HAS_V4=0 HAS_V6=1 ;; dual) HAS_V6=1 ;; esac
# zones: 3+ nodes -> two zones by default; 2 nodes -> one zone unless ZONES=2
case ${ZONES:-} in ""|[1-9]) ;; *) echo "ZONES must be a small number, not '$ZONES'" >&2; exit 1 ;; esac
if [ -z "${ZONES:-}" ]; then
  if [ "$NODES" -ge 3 ]; then ZONES=2; else ZONES=1; fi
fi

# Names and addresses. All private to this machine; nothing is routed out of it.
NAME_PREFIX=cnpe2e               # netns cnpe2e-node1, bridge cnpe2e0, veth cnpe2e-v1
BR=${NAME_PREFIX}0
APISERVER_IP=10.123.0.1
UNDERLAY_CIDR=10.123.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SVC_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_IP=10.96.0.10
# IP_FAMILY=ipv6|dual: unique local IPv6 addresses (fd00::/8), private to this machine, that mirror
# the IPv4 ones (10.123.0.0/24 -> fd00:10:123::/64, 10.244.N.0/24 -> fd00:10:244:N::/64,
# 10.96.0.0/16 -> fd00:10:96::/112)
APISERVER_IP6=fd00:10:123::1
UNDERLAY_CIDR6=fd00:10:123::/64
CLUSTER_CIDR6=fd00:10:244::/56
SVC_CIDR6=fd00:10:96::/112
KUBERNETES_SVC_IP6=fd00:10:96::1
DNS_IP6=fd00:10:96::a
# The cluster's primary family's addresses: what the control plane binds and advertises, the
# kubernetes and kube-dns Services' ClusterIPs. APISERVER_HOST is the API server's address as a
# URL takes it (an IPv6 one in brackets).
if [ "$IP_FAMILY" = ipv6 ]; then
  APISERVER_ADDR=$APISERVER_IP6 APISERVER_HOST="[$APISERVER_IP6]"
  KUBERNETES_SVC_ADDR=$KUBERNETES_SVC_IP6 DNS_ADDR=$DNS_IP6
else
  APISERVER_ADDR=$APISERVER_IP APISERVER_HOST=$APISERVER_IP
  KUBERNETES_SVC_ADDR=$KUBERNETES_SVC_IP DNS_ADDR=$DNS_IP
fi
# what the root netns (the API server's) must never send by its default route: the Service and
# pod CIDRs get "unreachable" routes there (up.sh; the per-node pod routes are more specific)
GUARD_CIDRS="$SVC_CIDR $CLUSTER_CIDR"
GUARD_CIDRS6="$SVC_CIDR6 $CLUSTER_CIDR6"
CNI_BIN=${CNI_BIN:-/usr/lib/cni}
CGROUP_NAME=cnperf-e2e           # /sys/fs/cgroup/<ctrl>/cnperf-e2e/nodeN
RUN_DIR=/run/cnperf-e2e          # runc roots
MNT_DIR=$RUN_DIR/mnt             # node mount namespaces, one file per node (bind-mounted nsfs)
# Host paths that CNIs (and libcni) hardcode: in every node's mount namespace each one is a
# bind mount of the node's own directory $E2E_STATE/nodeN/host/<path with / as _>, so nodes do
# not share them and nothing lands on the host. /var/run is /run on Debian. /run/containerd
# holds containerd 1.6's shim sockets (/run/containerd/s/<hash>, hardcoded): a shim killed by
# down.sh left its socket on the host before.
# /var/lib/kubelet/device-plugins: every kubelet serves its device-plugin registration socket at
# the hardcoded /var/lib/kubelet/device-plugins/kubelet.sock (its --root-dir does not move it), and
# device plugins (KubeVirt's virt-handler: devices.kubevirt.io/kvm, tun, vhost-net) register there:
# shared, only the kubelet that bound it last would get them.
NODE_PRIVATE_DIRS="/var/lib/cni /run/flannel /run/containerd /var/lib/kubelet/device-plugins"
# Cilium's state dir and API socket (/var/run/cilium/cilium.sock, hardcoded in its CNI plugin)
if [ "$CNI" = cilium ]; then NODE_PRIVATE_DIRS="$NODE_PRIVATE_DIRS /run/cilium"; fi
# Calico: /var/run/calico (= /run/calico: felix's status, the CNI plugin's lock), /var/lib/calico
# (nodename, mtu), /var/log/calico (file logs, off but bound in case)
if [ "$CNI" = calico ]; then NODE_PRIVATE_DIRS="$NODE_PRIVATE_DIRS /run/calico /var/lib/calico /var/log/calico"; fi
PAUSE_IMAGE=localhost/cnperf-e2e/pause:v1

# MULTUS=1: the bridge network's root netns side: a bridge joined by one veth per node (cnpe2e-mbN)
MULTUS_HOST_BR=${NAME_PREFIX}mbr
multus_host_veth() { echo "$NAME_PREFIX-mb$1"; }
node_name() { echo "node$1"; }
node_ip() { echo "10.123.0.$((10 + $1))"; }
node_ns() { echo "$NAME_PREFIX-node$1"; }
node_veth() { echo "$NAME_PREFIX-v$1"; }
node_mnt() { echo "$MNT_DIR/node$1"; }
pod_cidr() { echo "10.244.$1.0/24"; }
node_ip6() { echo "fd00:10:123::$((10 + $1))"; }
pod_cidr6() { echo "fd00:10:244:$1::/64"; }
# family_list V4 V6: the cluster's families' values, comma-separated, IPv4 first
family_list() {
  local l=""
  [ "$HAS_V4" = 1 ] && l=$1
  [ "$HAS_V6" = 1 ] && l=${l:+$l,}$2
  echo "$l"
}
# the cluster's CIDRs as the control plane's flags take them, node N's addresses (kubelet
# --node-ip) and pod CIDRs: IPv4, IPv6 or both (IPv4 first) as IP_FAMILY says
cluster_cidrs() { family_list "$CLUSTER_CIDR" "$CLUSTER_CIDR6"; }
svc_cidrs() { family_list "$SVC_CIDR" "$SVC_CIDR6"; }
node_ips() { family_list "$(node_ip "$1")" "$(node_ip6 "$1")"; }
pod_cidrs() { family_list "$(pod_cidr "$1")" "$(pod_cidr6 "$1")"; }
node_zone() { # zone-a, zone-b, zone-a, ... (one zone when ZONES=1)
  local z=$(( ($1 - 1) % ZONES ))
  printf 'zone-%b\n' "\\x$(printf %x $((97 + z)))"
}

# Default agent image name: the Kubernetes platform's default, so `cnperf run` needs no --image.
# agent_image [CNPERF_BIN]: asks `cnperf version --image` (the given binary, else go run), and
# falls back to ImageRepository:DevVersion from internal/version/version.go (a development build's image).
agent_image() {
  if [ -n "${CNPERF_E2E_AGENT_IMAGE:-}" ]; then echo "$CNPERF_E2E_AGENT_IMAGE"; return; fi
  local img=""
  if [ -n "${1:-}" ]; then
    img=$("$1" version --image 2>/dev/null | tail -1) || img=""
  else
    img=$(cd "$REPO_ROOT" && go run ./cmd/cnperf version --image 2>/dev/null | tail -1) || img=""
  fi
  case $img in
    *" "*|"") ;;
    */*:*) echo "$img"; return ;;
  esac
  local v="$REPO_ROOT/internal/version/version.go"
  echo "$(sed -n 's/^const ImageRepository = "\(.*\)"/\1/p' "$v"):$(sed -n 's/^const DevVersion = "\(.*\)"/\1/p' "$v")"
}

# ours PID: the process's command line names our state dir, cache dir or netns (so a
# recorded PID that was reused by another process is never signalled)
ours() {
  local cmd
  cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1
  case "$cmd" in *"$E2E_STATE/"*|*"$E2E_CACHE/"*|*"/run/netns/$NAME_PREFIX-"*) return 0 ;; esac
  return 1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b - a}'; }
