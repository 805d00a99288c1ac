#!/bin/bash
# Bring up a multi-node Kubernetes cluster on this one machine: no Docker, no registry, no
# traffic off the machine.
#   control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, CoreDNS as a
#     process) in the root netns; apiserver on 10.123.0.1:6443
#   nodeN = netns cnpe2e-nodeN with eth0 10.123.0.(10+N)/24 on bridge cnpe2e0, and its own
#     containerd + kubelet + kube-proxy (iptables mode; KUBE_PROXY_MODE=nftables: nftables)
#     and its own mount namespace (fresh sysfs and bpffs, the cgroup tree bound back in, the
#     host paths CNIs hardcode bound to per-node directories: NODE_PRIVATE_DIRS in lib.sh)
#   pods: node N gets 10.244.N.0/24. CNI=bridge (default): CNI bridge + host-local;
#     NET_MODE=routed (alias hostgw): host routes between nodes; NET_MODE=vxlan: VXLAN overlay.
#     CNI=flannel: flanneld --kube-subnet-mgr per node + the flannel CNI plugin, CNI_MODE
#     (alias FLANNEL_MODE) vxlan or host-gw. CNI=calico: calico-node (-felix) per node + the
#     calico CNI plugin with calico-ipam (one IPPool per node podCIDR), VXLAN
#   services: 10.96.0.0/16, DNS 10.96.0.10
#   aggregation layer: front-proxy CA + client certificate (pki.sh), the API server calls
#     webhooks and aggregated APIs at their endpoints' pod IPs (--enable-aggregator-routing);
#     Service and pod CIDRs are "unreachable" in the root netns, never sent by its default route
# usage: up.sh   env: NODES=2 CNI=bridge|flannel|calico NET_MODE=routed|vxlan CNI_MODE=vxlan|host-gw ZONES=1|2 DNS=1|0 EXTRA_IMAGE_TAGS="name:tag ..."
#                     E2E_KEEP_ON_FAIL=1 (leave a failed bring-up in place for debugging)
# On success: $E2E_STATE/admin.kubeconfig and $E2E_STATE/e2e.env (source it). On failure
# everything is torn down again (down.sh) and the exit status is non-zero.
set -Eeuo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
T0=$(now)
S=$E2E_STATE
DNS=${DNS:-1}
log() { printf '[up %6.1fs] %s\n' "$(elapsed "$T0")" "$*"; }
die() { echo "up.sh: $*" >&2; exit 1; }
BUSY=3   # exit status when another cluster is running: callers must not tear anything down

# ---------------- preconditions ----------------
[ "$(id -u)" = 0 ] || die "must run as root"
case $NODES in 2|3|4|5|6|7|8|9) ;; *) die "NODES must be 2..9, not '$NODES'";; esac
for b in $K8S_BINS; do [ -x "$K8S_DIR/$b" ] || die "missing $K8S_DIR/$b: run $HARNESS/build-bins.sh"; done
[ "$KUBE_PROXY_MODE" != nftables ] || command -v nft >/dev/null || die "missing nft (KUBE_PROXY_MODE=nftables: Debian's nftables package; see test/e2e/harness/ci.sh)"
[ -x "$ETCD_DIR/etcd" ] || die "missing $ETCD_DIR/etcd: run $HARNESS/build-bins.sh"
[ "$DNS" = 0 ] || [ -x "$COREDNS_DIR/coredns" ] || die "missing $COREDNS_DIR/coredns: run $HARNESS/build-bins.sh"
for t in containerd containerd-shim-runc-v2 runc ctr nsenter setsid ip bridge iptables openssl curl python3; do
  command -v $t >/dev/null || die "missing $t (see test/e2e/harness/ci.sh for the apt packages)"
done
for p in bridge host-local portmap loopback; do [ -x "$CNI_BIN/$p" ] || die "missing CNI plugin $CNI_BIN/$p"; done
if [ "$CNI" = calico ]; then
  for b in $CALICO_BINS; do [ -x "$CALICO_DIR/$b" ] || die "missing $CALICO_DIR/$b: run CNI=calico $HARNESS/build-bins.sh"; done
  for f in crds.yaml rbac.yaml; do [ -s "$CALICO_DIR/$f" ] || die "missing $CALICO_DIR/$f: run CNI=calico $HARNESS/build-bins.sh"; done
  command -v ipset >/dev/null || die "missing ipset (felix programs ipsets with it; see test/e2e/harness/ci.sh)"
fi
if [ "$CNI" = flannel ]; then
  for b in $FLANNEL_BINS; do [ -x "$FLANNEL_DIR/$b" ] || die "missing $FLANNEL_DIR/$b: run CNI=flannel $HARNESS/build-bins.sh"; done
fi
if [ "$CNI" = cilium ]; then
  for b in $CILIUM_BINS; do [ -x "$CILIUM_DIR/$b" ] || die "missing $CILIUM_DIR/$b: run CNI=cilium $HARNESS/build-bins.sh"; done
  # the agent compiles its datapath with clang at run time (Debian's clang 14 will do)
  for t in clang ipset; do
    command -v $t >/dev/null || die "missing $t (CNI=cilium needs it: CNI=cilium .ci/install-deps.sh)"
  done
fi
if [ "$MULTUS" = 1 ]; then
  for b in $MULTUS_BINS crds.yaml rbac.yaml; do [ -s "$MULTUS_DIR/$b" ] || die "missing $MULTUS_DIR/$b: run MULTUS=1 $HARNESS/build-bins.sh"; done
  for p in macvlan; do [ -x "$CNI_BIN/$p" ] || die "missing CNI plugin $CNI_BIN/$p (MULTUS=1's macvlan network)"; done
fi
export PATH=$K8S_DIR:$PATH
KC="$K8S_DIR/kubectl --kubeconfig=$S/admin.kubeconfig"

# a cluster that is still running belongs to someone (make e2e-up): never tear it down here
for f in "$S"/pids/*.pid; do
  if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "up.sh: a cluster is already running (state $S, $(basename "$f" .pid) alive)." \
      "Use it, or run 'make e2e-down' first." >&2
    exit $BUSY
  fi
done
# leftovers of a crashed run (no live processes): clean them first
if [ -e "$S" ] || ip link show "$BR" >/dev/null 2>&1 || ls /run/netns/"$NAME_PREFIX"-* >/dev/null 2>&1 ||
   ls -d /sys/fs/cgroup/*/"$CGROUP_NAME" /sys/fs/cgroup/"$CGROUP_NAME" >/dev/null 2>&1; then
  log "leftovers of an earlier run found: running down.sh first"
  "$HARNESS/down.sh"
fi
ip route show | grep -qE "^(10\.123\.0\.|10\.244\.|10\.96\.)" &&
  die "the root netns already has routes into 10.123.0.0/24, 10.244.0.0/16 or 10.96.0.0/16: refusing to clash"
[ -f "$E2E_IMAGES/pause.tar" ] && [ -f "$E2E_IMAGES/agent.tar" ] || "$HARNESS/../images/build.sh"
AGENT_IMAGE=$(cat "$E2E_IMAGES/agent.name")

# ---------------- failure handling: always clean up a half-built cluster ----------------
on_fail() {
  local rc=$? line=$1
  trap - ERR INT TERM
  echo "up.sh FAILED (exit $rc, line $line)" >&2
  for f in "$S"/logs/*.log; do
    [ -f "$f" ] || continue
    echo "----- last lines of $f" >&2; tail -n 8 "$f" >&2
  done
  if [ -n "${CNPERF_E2E_LOGS:-}" ] && [ -d "$S/logs" ]; then
    mkdir -p "$CNPERF_E2E_LOGS" && cp -r "$S/logs" "$CNPERF_E2E_LOGS/up-failed" || true
  fi
  if [ "${E2E_KEEP_ON_FAIL:-0}" = 1 ]; then
    echo "E2E_KEEP_ON_FAIL=1: left in place; clean up with test/e2e/harness/down.sh" >&2
  else
    "$HARNESS/down.sh" >&2 || true
  fi
  exit 1
}
trap 'on_fail $LINENO' ERR
trap 'on_fail $LINENO' INT TERM

mkdir -p "$S"/{pids,logs}
# what down.sh needs, written before anything is created
for i in $(seq 1 "$NODES"); do echo "$i"; done > "$S/nodes"
{ echo "NODES=$NODES"; echo "CNI=$CNI"; echo "CNI_MODE=$CNI_MODE"; echo "NET_MODE=$NET_MODE"; echo "ZONES=$ZONES"; echo "MULTUS=$MULTUS"; echo "IP_FAMILY=$IP_FAMILY"; echo "KUBE_PROXY_MODE=$KUBE_PROXY_MODE"; } > "$S/config"
# host paths that kubelet/containerd/libcni/CNIs hardcode: remember which ones we
# create, so down.sh removes only those (never e.g. a real kubelet's device-plugin socket)
for p in /var/lib/kubelet /var/log/containers /var/log/pods $NODE_PRIVATE_DIRS; do
  [ -e $p ] || echo $p
done > "$S/created-paths"
# sysctls that kubelet sets globally (restored by down.sh)
KUBELET_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"
# and the global ones Cilium writes (it is kept from writing them: see its start below)
[ "$CNI" != cilium ] || KUBELET_SYSCTLS="$KUBELET_SYSCTLS kernel.timer_migration net.core.bpf_jit_enable net.core.fb_tunnels_only_for_init_net"
for k in $KUBELET_SYSCTLS; do echo "$k=$(sysctl -n "$k")"; done > "$S/sysctl.orig"

# start NAME CMD... : detached in its own session; its real PID goes to $S/pids/NAME.pid, its
# command to $S/pids/NAME.argv (proc.sh starts it again from there)
start() {
  local name=$1; shift
  printf '%s\0' "$@" > "$S/pids/$name.argv"
  setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$S/pids/$name.pid" "$@" \
    > "$S/logs/$name.log" 2>&1 < /dev/null
  for _ in $(seq 50); do [ -s "$S/pids/$name.pid" ] && return 0; sleep 0.1; done
  echo "failed to start $name" >&2; return 1
}
# wait_for DESC TIMEOUT CMD... (also fails early if a recorded process died)
wait_for() {
  local desc=$1 to=$2; shift 2
  local end=$(( $(date +%s) + to )) f
  until "$@" >/dev/null 2>&1; do
    for f in "$S"/pids/*.pid; do
      kill -0 "$(cat "$f")" 2>/dev/null || { echo "$(basename "$f" .pid) exited (waiting for $desc)" >&2; return 1; }
    done
    [ "$(date +%s)" -lt "$end" ] || { echo "timeout waiting for $desc" >&2; return 1; }
    sleep 0.3
  done
  log "$desc ok"
}
nsx() { local i=$1; shift; nsenter --net="/run/netns/$(node_ns "$i")" "$@"; }
# nsn I CMD...: in node I's network AND mount namespace (what every node daemon runs in)
nsn() { local i=$1; shift; nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" "$@"; }

# ---------------- underlay network ----------------
log "network: $NODES nodes, CNI $CNI $CNI_MODE, zones=$ZONES, ip family $IP_FAMILY"
ip link add "$BR" type bridge
# IP_FAMILY=ipv4|dual: the IPv4 underlay; ipv6|dual: IPv6 on the bridge's own interface only
# (nodad: no duplicate address detection delay); the root netns's sysctls stay as they are (it
# forwards nothing). An IPv6-only cluster has no IPv4 address anywhere but loopback.
if [ "$HAS_V4" = 1 ]; then ip addr add "$APISERVER_IP/24" dev "$BR"; fi
if [ "$HAS_V6" = 1 ]; then ip -6 addr add "$APISERVER_IP6/64" dev "$BR" nodad; fi
ip link set "$BR" up
for i in $(seq 1 "$NODES"); do
  ip netns add "$(node_ns "$i")"
  ip link add "$(node_veth "$i")" type veth peer name eth0 netns "$(node_ns "$i")"
  ip link set "$(node_veth "$i")" master "$BR" up
  nsx "$i" ip link set lo up
  nsx "$i" ip link set eth0 up
  # per-netns sysctls only (the root netns keeps ip_forward=0)
  nsx "$i" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 \
    net.bridge.bridge-nf-call-ip6tables=1 net.ipv4.conf.all.route_localnet=1
  if [ "$HAS_V4" = 1 ]; then
    nsx "$i" ip addr add "$(node_ip "$i")/24" dev eth0
    # no default route on purpose: nothing can leave the machine. hostNetwork clients need a
    # route to ClusterIPs (kube-proxy DNATs them in OUTPUT).
    nsx "$i" ip route add "$SVC_CIDR" dev eth0
    # the control plane (root netns) must reach pods: pod -> 10.96.0.1 -> apiserver replies
    ip route add "$(pod_cidr "$i")" via "$(node_ip "$i")" dev "$BR"
  fi
  if [ "$HAS_V6" = 1 ]; then   # the same for IPv6, in the node's netns only (and the route here)
    nsx "$i" sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.default.forwarding=1
    nsx "$i" ip -6 addr add "$(node_ip6 "$i")/64" dev eth0 nodad
    nsx "$i" ip -6 route add "$SVC_CIDR6" dev eth0
    ip -6 route add "$(pod_cidr6 "$i")" via "$(node_ip6 "$i")" dev "$BR"
  fi
done
# The API server (root netns) calls webhooks and aggregated APIs at their pods' IPs
# (--enable-aggregator-routing below), which the per-node routes above reach. Nothing in the root
# netns translates ClusterIPs (kube-proxy runs in the nodes), and the root netns has the machine's
# default route: so the Service and pod CIDRs get "unreachable" routes here, and a call to a
# ClusterIP or to a pod of a node that is gone fails at once (EHOSTUNREACH) instead of leaving
# the machine (it went to the machine's egress proxy before). down.sh removes them.
# (each family the cluster has; down.sh removes both)
if [ "$HAS_V4" = 1 ]; then for c in $GUARD_CIDRS; do ip route replace unreachable "$c"; done; fi
if [ "$HAS_V6" = 1 ]; then for c in $GUARD_CIDRS6; do ip -6 route replace unreachable "$c"; done; fi
# CNI=bridge: the harness makes the pod network between the nodes itself (flannel does it for CNI=flannel)
# NET_MODE=vxlan: over IPv4 (ipv4, dual), or over IPv6 carrying IPv6 (ipv6: the VTEPs are the nodes'
# IPv6 addresses, the VXLAN header over IPv6 costs 70 bytes, not 50: MTU 1430)
vx_ip() { if [ "$HAS_V4" = 1 ]; then node_ip "$1"; else node_ip6 "$1"; fi; }
vx_gw() { if [ "$HAS_V4" = 1 ]; then echo "10.244.$1.0"; else echo "fd00:10:244:$1::"; fi; }
vx_cidr() { if [ "$HAS_V4" = 1 ]; then pod_cidr "$1"; else pod_cidr6 "$1"; fi; }
VX_MTU=1450; [ "$HAS_V4" = 1 ] || VX_MTU=1430
if [ "$CNI" = bridge ] && [ "$NET_MODE" = vxlan ]; then
  for i in $(seq 1 "$NODES"); do
    nsx "$i" ip link add vxcnp type vxlan id 42 dev eth0 local "$(vx_ip "$i")" dstport 4789 nolearning
    if [ "$HAS_V4" = 1 ]; then
      nsx "$i" ip addr add "$(vx_gw "$i")/32" dev vxcnp
    else
      nsx "$i" ip -6 addr add "$(vx_gw "$i")/128" dev vxcnp nodad
    fi
    nsx "$i" ip link set vxcnp mtu "$VX_MTU" up
  done
fi
for i in $(seq 1 "$NODES"); do
  [ "$CNI" = bridge ] || break
  for j in $(seq 1 "$NODES"); do
    [ "$i" = "$j" ] && continue
    if [ "$NET_MODE" = vxlan ]; then
      # static FDB + neighbour + onlink route via the peer's VTEP, as flannel's vxlan backend
      # programs them. MAC via `ip -o link`: /sys/class/net after `nsenter --net` shows the root netns.
      mac=$(nsx "$j" ip -o link show vxcnp | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p')
      nsx "$i" bridge fdb append "$mac" dev vxcnp dst "$(vx_ip "$j")"
      nsx "$i" ip neigh add "$(vx_gw "$j")" lladdr "$mac" dev vxcnp nud permanent
      nsx "$i" ip route add "$(vx_cidr "$j")" via "$(vx_gw "$j")" dev vxcnp onlink
    elif [ "$HAS_V4" = 1 ]; then
      nsx "$i" ip route add "$(pod_cidr "$j")" via "$(node_ip "$j")" dev eth0
    fi
    # IPv6 between the nodes: host routes over the underlay (ipv6: routed; dual: also with
    # NET_MODE=vxlan, whose hand-made VXLAN is then IPv4 only)
    if [ "$IP_FAMILY" = dual ] || { [ "$IP_FAMILY" = ipv6 ] && [ "$NET_MODE" = routed ]; }; then
      nsx "$i" ip -6 route add "$(pod_cidr6 "$j")" via "$(node_ip6 "$j")" dev eth0
    fi
  done
done

# ---------------- node mount namespaces ----------------
# One per node, kept by a bind mount of its nsfs file under $MNT_DIR (a private mount, so the
# bind is allowed). Inside: a fresh sysfs made in the node's netns (/sys/class/net shows the
# node's interfaces), the host's cgroup tree bound back in, a fresh bpffs, and the host paths
# CNIs hardcode (NODE_PRIVATE_DIRS) bound to the node's own directories. Mounts made there
# (containers' rootfs, kubelet volumes) stay in the node's namespace and end with it.
mkdir -p "$MNT_DIR"
mount --bind "$MNT_DIR" "$MNT_DIR"
mount --make-private "$MNT_DIR"
for p in $NODE_PRIVATE_DIRS; do mkdir -p "$p"; done   # mount points (created-paths lists new ones)
for i in $(seq 1 "$NODES"); do
  D=$S/$(node_name "$i")
  mkdir -p "$D/host" "$D/.cgroup"
  touch "$(node_mnt "$i")"
  nsx "$i" unshare --mount="$(node_mnt "$i")" --propagation private \
    bash -euc 'D=$1; shift
      mount --rbind /sys/fs/cgroup "$D/.cgroup"
      mount -t sysfs sysfs /sys
      mount --move "$D/.cgroup" /sys/fs/cgroup
      mount -t bpf bpf /sys/fs/bpf
      for p in "$@"; do
        h=$D/host/$(echo "${p#/}" | tr / _); mkdir -p "$h"; mount --bind "$h" "$p"
      done' mntns "$D" $NODE_PRIVATE_DIRS
done
log "node mount namespaces ready"

# ---------------- PKI + kubeconfigs ----------------
log "pki"
NODE_NAMES=$(for i in $(seq 1 "$NODES"); do printf '%s ' "$(node_name "$i")"; done)
NODE_NAMES="$NODE_NAMES" APISERVER_IP=$APISERVER_ADDR APISERVER_HOST=$APISERVER_HOST SVC_IP=$KUBERNETES_SVC_ADDR "$HARNESS/pki.sh" "$S" >/dev/null
P=$S/pki
# node resolv.conf (dnsPolicy Default pods): points at nothing, so no DNS query can leave
printf 'nameserver 127.0.0.1\noptions ndots:1\n' > "$S/resolv.conf"

# ---------------- node runtimes (they do not need the apiserver) ----------------
cg_v2=0; [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && cg_v2=1
mtu=1500; [ "$NET_MODE" = vxlan ] && mtu=$VX_MTU
# the CNI plugins containerd runs: /usr/lib/cni, or for a real CNI a directory that adds its
# plugin (containerd 1.6 takes one bin_dir; the flannel plugin delegates to bridge and host-local)
NODE_CNI_BIN=$CNI_BIN
# (and with MULTUS=1, where multus.sh adds multus and whereabouts to it)
if [ "$CNI" = flannel ] || [ "$CNI" = calico ] || [ "$CNI" = cilium ] || [ "$MULTUS" = 1 ]; then
  NODE_CNI_BIN=$S/cni-bin
  mkdir -p "$NODE_CNI_BIN"
  for p in "$CNI_BIN"/*; do ln -s "$p" "$NODE_CNI_BIN/"; done
  if [ "$CNI" = flannel ]; then
    ln -s "$FLANNEL_DIR/flannel" "$NODE_CNI_BIN/flannel"
  elif [ "$CNI" = calico ]; then   # one binary, two plugins: it is calico-ipam when called by that name
    ln -s "$CALICO_DIR/calico" "$NODE_CNI_BIN/calico"
    ln -s "$CALICO_DIR/calico" "$NODE_CNI_BIN/calico-ipam"
  else
    ln -s "$CILIUM_DIR/cilium-cni" "$NODE_CNI_BIN/cilium-cni"
  fi
fi
for i in $(seq 1 "$NODES"); do
  n=$(node_name "$i"); D=$S/$n
  mkdir -p "$D"/{containerd,cni/net.d,cni/ipam,kubelet,pod-logs}
  # one cgroup root per node, so the kubelets do not fight over the same tree
  if [ $cg_v2 = 1 ]; then          # cgroup v2 host: not tested on the CI machine (v1 hybrid)
    mkdir -p "/sys/fs/cgroup/$CGROUP_NAME/$n"
    for d in /sys/fs/cgroup "/sys/fs/cgroup/$CGROUP_NAME" "/sys/fs/cgroup/$CGROUP_NAME/$n"; do
      for ctl in cpuset cpu io memory pids hugetlb; do echo "+$ctl" > "$d/cgroup.subtree_control" 2>/dev/null || true; done
    done
  else
    for c in /sys/fs/cgroup/*/; do
      case $c in */unified/) continue ;; esac
      mkdir -p "${c}$CGROUP_NAME/$n"
    done
    for d in "$CGROUP_NAME" "$CGROUP_NAME/$n"; do   # a new v1 cpuset starts empty: copy the root's
      cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset/$d/cpuset.cpus"
      cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/$d/cpuset.mems"
    done
  fi
  ranges="" routes=""
  if [ "$HAS_V4" = 1 ]; then ranges="[{\"subnet\": \"$(pod_cidr "$i")\"}]" routes='{"dst": "0.0.0.0/0"}'; fi
  if [ "$HAS_V6" = 1 ]; then
    ranges="${ranges:+$ranges, }[{\"subnet\": \"$(pod_cidr6 "$i")\"}]" routes="${routes:+$routes, }{\"dst\": \"::/0\"}"
  fi
  [ "$CNI" = bridge ] && cat > "$D/cni/net.d/10-cnpe2e.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "cnpe2e",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
      "hairpinMode": true, "mtu": $mtu,
      "ipam": {
        "type": "host-local",
        "ranges": [$ranges],
        "routes": [$routes],
        "dataDir": "$D/cni/ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
  cat > "$D/containerd/config.toml" <<TOML
version = 2
root = "$D/containerd/root"
state = "$D/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$D/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  enable_unprivileged_ports = false
  # without CAP_SYS_RESOURCE no process may lower oom_score_adj below 0; the CRI asks for -998
  # (sandboxes) and -997 (Guaranteed pods) and runc init then fails with "can't get final
  # child's PID from pipe: EOF". Clamp to containerd's own value instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$NODE_CNI_BIN"
    conf_dir = "$D/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN_DIR/$n/runc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/containerd/opt"
TOML
  start "containerd-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" containerd --config "$D/containerd/config.toml"
done
log "containerds started"

# ---------------- control plane ----------------
start etcd "$ETCD_DIR/etcd" --name cnperf-e2e --data-dir "$S/etcd" \
  --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 \
  --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
  --initial-cluster cnperf-e2e=http://127.0.0.1:23800 --unsafe-no-fsync --log-level warn
wait_for etcd 60 curl -sf http://127.0.0.1:23790/health

start kube-apiserver "$K8S_DIR/kube-apiserver" \
  --etcd-servers=http://127.0.0.1:23790 \
  --bind-address=$APISERVER_ADDR --advertise-address=$APISERVER_ADDR --secure-port=6443 \
  --service-cluster-ip-range="$(svc_cidrs)" \
  --client-ca-file="$P/ca.crt" --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
  --kubelet-client-certificate="$P/apiserver-kubelet-client.crt" --kubelet-client-key="$P/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --requestheader-client-ca-file="$P/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$P/front-proxy-client.crt" --proxy-client-key-file="$P/front-proxy-client.key" \
  --enable-aggregator-routing=true \
  --allow-privileged=true --profiling=false
log "kube-apiserver started"

# import the images into every node at once, while the apiserver starts
import_images() {   # runs in a background subshell: report failure by exit status only
  trap - ERR
  local n sock tag
  n=$(node_name "$1"); sock=$S/$n/containerd/containerd.sock
  wait_for "containerd $n" 60 ctr --address "$sock" version
  ctr --address "$sock" -n k8s.io images import "$E2E_IMAGES/pause.tar" >/dev/null
  ctr --address "$sock" -n k8s.io images import "$E2E_IMAGES/agent.tar" >/dev/null
  # more names for the agent image (pods using them need imagePullPolicy Never/IfNotPresent;
  # a :latest tag defaults to Always, which means a pull, which fails here)
  for tag in ${EXTRA_IMAGE_TAGS:-}; do
    ctr --address "$sock" -n k8s.io images tag --force "$AGENT_IMAGE" "$tag" >/dev/null
  done
}
jobs_=""
for i in $(seq 1 "$NODES"); do import_images "$i" & jobs_="$jobs_ $!"; done
for j in $jobs_; do wait "$j" || { echo "image import failed" >&2; false; }; done
log "images imported: $PAUSE_IMAGE $AGENT_IMAGE ${EXTRA_IMAGE_TAGS:-}"

wait_for kube-apiserver 120 $KC get --raw /readyz

start kube-controller-manager "$K8S_DIR/kube-controller-manager" \
  --kubeconfig="$S/kcm.kubeconfig" \
  --authentication-kubeconfig="$S/kcm.kubeconfig" --authorization-kubeconfig="$S/kcm.kubeconfig" \
  --bind-address=$APISERVER_ADDR --leader-elect=false \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
  --cluster-cidr="$(cluster_cidrs)" --allocate-node-cidrs=false --service-cluster-ip-range="$(svc_cidrs)" \
  --profiling=false
start kube-scheduler "$K8S_DIR/kube-scheduler" \
  --kubeconfig="$S/scheduler.kubeconfig" \
  --authentication-kubeconfig="$S/scheduler.kubeconfig" --authorization-kubeconfig="$S/scheduler.kubeconfig" \
  --bind-address=$APISERVER_ADDR --leader-elect=false --profiling=false
log "kube-controller-manager, kube-scheduler started"

# kube-proxy's configuration where kubeadm clusters keep it (kube-system/kube-proxy, key
# config.conf), so tools that read the proxy mode from there (cnperf's clusterinfo) find it
kp_conf() { # NODE_NAME (empty: the shared ConfigMap)
  cat <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $S/kube-proxy.kubeconfig}
$( [ -n "$1" ] && echo "hostnameOverride: $1" )
mode: $KUBE_PROXY_MODE
clusterCIDR: "$(cluster_cidrs)"
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["primary"]
# nf_conntrack_max is global and cannot be set from a netns: leave conntrack sysctls alone
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
YAML
}
kp_conf "" > "$S/kube-proxy-config.yaml"
$KC -n kube-system create configmap kube-proxy --from-file=config.conf="$S/kube-proxy-config.yaml" >/dev/null

if [ "$DNS" = 1 ]; then
  # CoreDNS as a process in the root netns, behind Service kube-dns with a hand-made
  # EndpointSlice. No `forward` plugin: names outside cluster.local never leave the machine.
  cat > "$S/Corefile" <<COREFILE
.:53 {
    bind $APISERVER_ADDR
    errors
    ready $APISERVER_HOST:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $S/admin.kubeconfig cnperf-e2e
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
COREFILE
  start coredns "$COREDNS_DIR/coredns" -conf "$S/Corefile"
  $KC apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_ADDR
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-external
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: cnperf-e2e}
addressType: $( [ "$IP_FAMILY" = ipv6 ] && echo IPv6 || echo IPv4 )
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
endpoints:
- addresses: ["$APISERVER_ADDR"]
  conditions: {ready: true}
YAML
  log "coredns started"
fi

# ---------------- kubelets + kube-proxies ----------------
for i in $(seq 1 "$NODES"); do
  n=$(node_name "$i"); D=$S/$n
  cat > "$D/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$D/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_NAME/$n
failCgroupV1: false
failSwapOn: false
address: "$( [ "$HAS_V4" = 1 ] && echo 0.0.0.0 || echo "::" )"
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
$( [ "$DNS" = 1 ] && echo "clusterDNS: [\"$DNS_ADDR\"]" )
resolvConf: $S/resolv.conf
podLogsDir: $D/pod-logs
rotateCertificates: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# the machine's disk is shared with builds: 1% of a 250 GB disk (2.5 GB free) tainted every node
# disk-pressure for 5 min and no pod could start; evict only when it is really full
evictionHard: {memory.available: "100Mi", nodefs.available: "512Mi", imagefs.available: "512Mi", nodefs.inodesFree: "1%"}
evictionPressureTransitionPeriod: 30s
nodeStatusReportFrequency: 10s
YAML
  start "kubelet-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" "$K8S_DIR/kubelet" \
    --config="$D/kubelet-config.yaml" --kubeconfig="$S/$n.kubeconfig" \
    --root-dir="$D/kubelet" --cert-dir="$D/kubelet/pki" \
    --hostname-override="$n" --node-ip="$(node_ips "$i")" \
    --node-labels="topology.kubernetes.io/zone=$(node_zone "$i"),topology.kubernetes.io/region=cnperf-e2e" --v=1
  kp_conf "$n" > "$D/kube-proxy-config.yaml"
  start "kube-proxy-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" "$K8S_DIR/kube-proxy" \
    --config="$D/kube-proxy-config.yaml"
done
log "kubelets, kube-proxies started"

for i in $(seq 1 "$NODES"); do
  n=$(node_name "$i")
  wait_for "node $n registered" 120 $KC get node "$n"
  cidrs=\"$(pod_cidrs "$i" | sed 's/,/","/g')\"
  $KC patch node "$n" --type merge \
    -p "{\"spec\":{\"podCIDR\":\"$(pod_cidrs "$i" | cut -d, -f1)\",\"podCIDRs\":[$cidrs]}}" >/dev/null
done
if [ "$CNI" = flannel ]; then
  # flannel as kube-flannel.yml deploys it: namespace, ServiceAccount, ClusterRole(Binding) and
  # ConfigMap kube-flannel-cfg (net-conf.json); flanneld is a process per node (not a
  # DaemonSet: there is no image) with the ServiceAccount's token, started once the node has
  # its podCIDR (--kube-subnet-mgr takes the node's podCIDR as its subnet)
  backend=$CNI_MODE
  printf '{\n  "Network": "%s",\n  "EnableNFTables": false,\n  "Backend": {"Type": "%s"}\n}\n' \
    "$CLUSTER_CIDR" "$backend" > "$S/flannel-net-conf.json"
  $KC apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: kube-flannel, labels: {k8s-app: flannel, pod-security.kubernetes.io/enforce: privileged}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: flannel, namespace: kube-flannel, labels: {k8s-app: flannel}}
---
kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: flannel, labels: {k8s-app: flannel}}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get]}
- {apiGroups: [""], resources: [nodes], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [nodes/status], verbs: [patch]}
---
kind: ClusterRoleBinding
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: flannel, labels: {k8s-app: flannel}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: flannel}
subjects:
- {kind: ServiceAccount, name: flannel, namespace: kube-flannel}
YAML
  $KC -n kube-flannel create configmap kube-flannel-cfg --from-file=net-conf.json="$S/flannel-net-conf.json" >/dev/null
  token=$($KC -n kube-flannel create token flannel --duration=24h)
  cat > "$S/flannel.kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://$APISERVER_HOST:6443", certificate-authority: "$P/ca.crt"}
  name: cnperf-e2e
users:
- name: flannel
  user: {token: "$token"}
contexts:
- context: {cluster: cnperf-e2e, user: flannel, namespace: kube-flannel}
  name: flannel
current-context: flannel
KCFG
  # as kube-flannel.yml runs it: --ip-masq (flanneld masquerades what leaves the cluster CIDR,
  # and the CNI plugin then tells the bridge plugin not to: with --ip-masq=false the plugin
  # turns the bridge's ipMasq on, which would hide pod IPs even between nodes)
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i")
    start "flanneld-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" \
      env NODE_NAME="$n" POD_NAMESPACE=kube-flannel "$FLANNEL_DIR/flanneld" --kube-subnet-mgr \
      --kubeconfig-file="$S/flannel.kubeconfig" --net-config-path="$S/flannel-net-conf.json" \
      --iface=eth0 --ip-masq --subnet-file=/run/flannel/subnet.env
  done
  # /run/flannel is the node's own directory (its mount namespace binds $D/host/run_flannel)
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    wait_for "flannel subnet on $n" 120 test -s "$D/host/run_flannel/subnet.env"
    # the CNI configuration as kube-flannel.yml's cni-conf.json; written once flanneld is up,
    # so the node turns Ready only when pods can get a network
    cat > "$D/cni/net.d/10-flannel.conflist" <<JSON
{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {"type": "flannel", "delegate": {"hairpinMode": true, "isDefaultGateway": true}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
  done
fi
if [ "$CNI" = calico ]; then
  # Calico as calico-vxlan.yaml deploys it, without BIRD/confd (CALICO_NETWORKING_BACKEND=vxlan)
  # and with the Kubernetes datastore: its CRDs (libcalico-go/config/crd) and the RBAC of
  # calico-node and calico-cni-plugin (from calico-vxlan.yaml), both put next to the binaries by
  # build-bins.sh. calico-node is a process per node (not a DaemonSet: there is no image), run as
  # the image's rc.local runs it: -startup, -allocate-tunnel-addrs once, then -felix and
  # -allocate-tunnel-addrs as daemons.
  $KC apply --server-side -f "$CALICO_DIR/crds.yaml" >/dev/null
  $KC wait --for=condition=Established --timeout=60s -f "$CALICO_DIR/crds.yaml" >/dev/null
  $KC apply -f "$CALICO_DIR/rbac.yaml" >/dev/null
  # IPAM: calico-ipam (Calico's own: blocks of /26 with node affinity, handles), from one IPPool
  # per node holding that node's podCIDR (nodeSelector), so pod addresses stay where the harness
  # routes them (the root netns reaches node N's pods via 10.244.N.0/24) and are the same as with
  # CNI=bridge|flannel. VXLAN always (what CALICO_IPV4POOL_VXLAN=Always makes of the default
  # pool, which NO_DEFAULT_POOLS=true turns off), natOutgoing as the default pool has it.
  for i in $(seq 1 "$NODES"); do
    if [ "$HAS_V4" = 1 ]; then cat <<YAML
---
apiVersion: crd.projectcalico.org/v1
kind: IPPool
metadata: {name: cnpe2e-$(node_name "$i")}
spec:
  cidr: $(pod_cidr "$i")
  blockSize: 26
  vxlanMode: Always
  ipipMode: Never
  natOutgoing: true
  nodeSelector: kubernetes.io/hostname == "$(node_name "$i")"
  allowedUses: [Workload, Tunnel]
YAML
    fi
    # IP_FAMILY=ipv6|dual: the node's IPv6 pod CIDR as a pool (dual: the second), VXLAN too (what
    # CALICO_IPV6POOL_VXLAN=Always makes of the default IPv6 pool; blockSize 122 is its default)
    # (an if, not `[ ] && cat`: a false test as the loop's last command failed the pipeline
    # under pipefail, and with it every IPv4 Calico bring-up)
    if [ "$HAS_V6" = 1 ]; then cat <<YAML
---
apiVersion: crd.projectcalico.org/v1
kind: IPPool
metadata: {name: cnpe2e-$(node_name "$i")-v6}
spec:
  cidr: $(pod_cidr6 "$i")
  blockSize: 122
  vxlanMode: Always
  ipipMode: Never
  natOutgoing: true
  nodeSelector: kubernetes.io/hostname == "$(node_name "$i")"
  allowedUses: [Workload, Tunnel]
YAML
    fi
  done | $KC apply -f - >/dev/null
  calico_kubeconfig() { # SERVICEACCOUNT FILE: a kubeconfig with the ServiceAccount's token (24 h)
    local token
    token=$($KC -n kube-system create token "$1" --duration=24h)
    cat > "$2" <<KCFG
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://$APISERVER_HOST:6443", certificate-authority: "$P/ca.crt"}
  name: cnperf-e2e
users:
- name: $1
  user: {token: "$token"}
contexts:
- context: {cluster: cnperf-e2e, user: $1}
  name: $1
current-context: $1
KCFG
  }
  calico_kubeconfig calico-node "$S/calico-node.kubeconfig"
  calico_kubeconfig calico-cni-plugin "$S/calico-cni.kubeconfig"
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i")
    # the environment of calico-vxlan.yaml's calico-node container, plus what a process outside
    # that image needs: its node name for felix (rc.local exports FELIX_FELIXHOSTNAME), no
    # syslog or log files, no usage reporting (nothing may leave the machine), no XDP/BPF
    cenv=(env DATASTORE_TYPE=kubernetes FELIX_DATASTORETYPE=kubernetes KUBECONFIG="$S/calico-node.kubeconfig"
      NODENAME="$n" FELIX_FELIXHOSTNAME="$n" CALICO_NETWORKING_BACKEND=vxlan CLUSTER_TYPE=k8s
      WAIT_FOR_DATASTORE=true IP=autodetect IP_AUTODETECTION_METHOD=interface=eth0
      NO_DEFAULT_POOLS=true CALICO_IPV4POOL_IPIP=Never CALICO_IPV4POOL_VXLAN=Always
      CALICO_DISABLE_FILE_LOGGING=true FELIX_DEFAULTENDPOINTTOHOSTACTION=ACCEPT FELIX_IPV6SUPPORT=false
      FELIX_HEALTHENABLED=true FELIX_LOGFILEPATH=none FELIX_LOGSEVERITYSYS=none FELIX_LOGSEVERITYSCREEN=info
      FELIX_USAGEREPORTINGENABLED=false FELIX_XDPENABLED=false FELIX_BPFENABLED=false
      FELIX_DebugSkipCTLBCleanup=true FELIX_PROMETHEUSMETRICSENABLED=true FELIX_PROMETHEUSMETRICSHOST=127.0.0.1
      FELIX_PROMETHEUSMETRICSPORT=9091)
    # IP_FAMILY=dual, as calico-vxlan.yaml's dual-stack variant: IPv6 on (felix's IPv6 dataplane,
    # vxlan-v6.calico), the node's IPv6 address autodetected on eth0 like the IPv4 one
    if [ "$HAS_V6" = 1 ]; then
      cenv+=(FELIX_IPV6SUPPORT=true IP6=autodetect IP6_AUTODETECTION_METHOD=interface=eth0 CALICO_IPV6POOL_VXLAN=Always)
    fi
    # IP_FAMILY=ipv6, as Calico's IPv6-only set-up says: no IPv4 address for the node (IP=none;
    # env takes the last of a name), its BGP router ID from a hash of the node name (there is
    # no IPv4 address to take it from)
    if [ "$HAS_V4" = 0 ]; then cenv+=(IP=none CALICO_ROUTER_ID=hash); fi
    # FELIX_PROMETHEUSMETRICS*: felix's own metrics (its dataplane apply time, which cnperf
    # programming reads beside its end-to-end policy latency) on the node's 127.0.0.1:9091, felix's
    # default port, bound like kube-proxy's 127.0.0.1:10249: reachable from a hostNetwork pod only
    # FELIX_DebugSkipCTLBCleanup (felix's switch for its FV tests): at start felix removes a BPF
    # connect-time load balancer left by BPF mode, through BPF syscalls that a build without cgo
    # only has as stubs that panic ("BPF syscall stub"); there is none to remove here
    # a pod's only route is "default via 169.254.1.1", which the node's cali* veth answers by
    # proxy ARP, and the kernel answers proxy ARP only for an address it has a route to through
    # another device: Calico's nodes have a default route, these have none on purpose (nothing
    # may leave the machine), so the node gets a route to that one address instead
    if [ "$HAS_V4" = 1 ]; then nsx "$i" ip route add 169.254.1.1/32 dev eth0; fi
    nsn "$i" "${cenv[@]}" "$CALICO_DIR/calico-node" -startup > "$S/logs/calico-startup-$n.log" 2>&1 ||
      { echo "calico-node -startup failed on $n (log $S/logs/calico-startup-$n.log)" >&2; false; }
    nsn "$i" "${cenv[@]}" "$CALICO_DIR/calico-node" -allocate-tunnel-addrs -allocate-tunnel-addrs-run-once \
      >> "$S/logs/calico-startup-$n.log" 2>&1 ||
      { echo "calico-node -allocate-tunnel-addrs failed on $n (log $S/logs/calico-startup-$n.log)" >&2; false; }
    # felix exits on purpose when some configuration changes (e.g. an IPPool's encapsulation:
    # "Exiting for encapsulation change") and counts on being restarted, as the calico/node
    # image's runit does: so it runs in a loop that restarts it, and that ends it on SIGTERM
    start "calico-felix-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" \
      bash -c 'trap "kill \$c 2>/dev/null; exit 0" TERM INT
        while :; do "$@" & c=$!; wait $c; echo "felix exited (status $?): restarting it"; sleep 1; done' \
      felix-loop "${cenv[@]}" "$CALICO_DIR/calico-node" -felix
    # the tunnel address allocator as a run-once every 10 s, not its watching daemon: after an
    # API server restart (TestFaultAPIServerRestart) the daemon of one node stopped for good
    # (its last words "connection is unauthorized ... Full resync is required"), so when an
    # encapsulation change later released that node's VXLAN address it never came back and no
    # pod could reach that node's pods
    start "calico-tunnel-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" \
      bash -c 'trap "kill \$c 2>/dev/null; exit 0" TERM INT
        while :; do "$@" & c=$!; wait $c; sleep 10 & c=$!; wait $c; done' \
      tunnel-loop "${cenv[@]}" "$CALICO_DIR/calico-node" -allocate-tunnel-addrs -allocate-tunnel-addrs-run-once
  done
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    # felix has programmed the node (vxlan.calico; IPv6-only: vxlan-v6.calico) and written the
    # MTU the CNI plugin uses
    vx=vxlan.calico; [ "$HAS_V4" = 1 ] || vx=vxlan-v6.calico
    wait_for "felix on $n ($vx, /var/lib/calico/mtu)" 180 \
      bash -c 'test -s "$1" && nsenter --net="$2" ip link show "$3"' _ "$D/host/var_lib_calico/mtu" "/run/netns/$(node_ns "$i")" "$vx"
    # the CNI configuration as calico-vxlan.yaml's cni_network_config (install-cni fills it in);
    # written once felix is up, so the node turns Ready only when pods can get a network. mtu 0:
    # the plugin takes felix's /var/lib/calico/mtu
    cat > "$D/cni/net.d/10-calico.conflist" <<JSON
{
  "name": "k8s-pod-network",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "calico",
      "log_level": "info",
      "log_file_path": "$S/logs/calico-cni-$n.log",
      "datastore_type": "kubernetes",
      "nodename": "$n",
      "mtu": 0,
      "ipam": {"type": "calico-ipam"$(case $IP_FAMILY in dual) echo ', "assign_ipv4": "true", "assign_ipv6": "true"' ;; ipv6) echo ', "assign_ipv4": "false", "assign_ipv6": "true"' ;; esac)},
      "policy": {"type": "k8s"},
      "kubernetes": {"kubeconfig": "$S/calico-cni.kubeconfig"}
    },
    {"type": "portmap", "snat": true, "capabilities": {"portMappings": true}}
  ]
}
JSON
  done
fi
if [ "$CNI" = cilium ]; then
  # Cilium as its Helm chart deploys it, without the operator (ipam: kubernetes takes the
  # node's podCIDR, which up.sh set): the CRDs (the agent waits for them; the operator would
  # register them), ServiceAccount cilium, ClusterRole/ClusterRoleBinding cilium (the chart's
  # cilium-agent/clusterrole.yaml) and ConfigMap kube-system/cilium-config, which the agent
  # reads (--config-dir, as the chart mounts it). The agent is a process per node (no image).
  $KC apply -f "$CILIUM_DIR/crds" >/dev/null
  $KC wait --for condition=Established --timeout=60s -f "$CILIUM_DIR/crds" >/dev/null
  $KC apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: cilium, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cilium, labels: {app.kubernetes.io/part-of: cilium}}
rules:
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [namespaces, services, pods, endpoints, nodes], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [nodes/status], verbs: [patch]}
- {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [list, watch, get]}
- apiGroups: [cilium.io]
  resources: [ciliumloadbalancerippools, ciliumbgppeeringpolicies, ciliumbgpnodeconfigs, ciliumbgpadvertisements,
    ciliumbgppeerconfigs, ciliumclusterwideenvoyconfigs, ciliumclusterwidenetworkpolicies, ciliumegressgatewaypolicies,
    ciliumendpoints, ciliumendpointslices, ciliumenvoyconfigs, ciliumidentities, ciliumlocalredirectpolicies,
    ciliumnetworkpolicies, ciliumnodes, ciliumnodeconfigs, ciliumcidrgroups, ciliuml2announcementpolicies, ciliumpodippools]
  verbs: [list, watch]
- {apiGroups: [cilium.io], resources: [ciliumidentities, ciliumendpoints, ciliumnodes], verbs: [create]}
- {apiGroups: [cilium.io], resources: [ciliumidentities], verbs: [update]}
- {apiGroups: [cilium.io], resources: [ciliumendpoints], verbs: [delete, get]}
- {apiGroups: [cilium.io], resources: [ciliumnodes, ciliumnodes/status], verbs: [get, update]}
- apiGroups: [cilium.io]
  resources: [ciliumnetworkpolicies/status, ciliumclusterwidenetworkpolicies/status, ciliumendpoints/status,
    ciliumendpoints, ciliuml2announcementpolicies/status, ciliumbgpnodeconfigs/status]
  verbs: [patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cilium, labels: {app.kubernetes.io/part-of: cilium}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cilium}
subjects:
- {kind: ServiceAccount, name: cilium, namespace: kube-system}
YAML
  token=$($KC -n kube-system create token cilium --duration=24h)
  cat > "$S/cilium.kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://$APISERVER_HOST:6443", certificate-authority: "$P/ca.crt"}
  name: cnperf-e2e
users:
- name: cilium
  user: {token: "$token"}
contexts:
- context: {cluster: cnperf-e2e, user: cilium, namespace: kube-system}
  name: cilium
current-context: cilium
KCFG
  # cilium-config: one file per key, as the chart's ConfigMap is mounted into the agent. Kept
  # kube-proxy (iptables) for services: no kube-proxy replacement and no socket LB (its cgroup
  # programs would attach to the cgroup tree every node shares with the host); no Hubble, no
  # L7 proxy (Envoy), no health endpoints (cilium-health is not built). Its Prometheus metrics
  # on the node's port 9962 (the chart's prometheus.port; the agent serves none without
  # prometheus-serve-addr): cnperf programming reads its cilium_policy_implementation_delay
  CCFG=$S/cilium-config; mkdir -p "$CCFG"
  {
    echo "cluster-name=default"; echo "cluster-id=0"; echo "ipam=kubernetes"
    echo "enable-ipv4=true"; echo "enable-ipv6=false"; echo "identity-allocation-mode=crd"
    echo "kube-proxy-replacement=false"; echo "bpf-lb-sock=false"
    echo "enable-l7-proxy=false"; echo "enable-hubble=false"
    echo "enable-health-checking=false"; echo "enable-endpoint-health-checking=false"
    echo "enable-policy=default"; echo "enable-ipv4-masquerade=true"; echo "enable-bpf-masquerade=false"
    echo "install-iptables-rules=true"; echo "cni-exclusive=true"; echo "cni-chaining-mode=none"
    echo "k8s-kubeconfig-path=$S/cilium.kubeconfig"; echo "prometheus-serve-addr=:9962"
    if [ "$CNI_MODE" = vxlan ]; then
      echo "routing-mode=tunnel"; echo "tunnel-protocol=vxlan"
    else
      echo "routing-mode=native"; echo "ipv4-native-routing-cidr=$CLUSTER_CIDR"; echo "auto-direct-node-routes=true"
    fi
  } | while IFS='=' read -r k v; do printf '%s' "$v" > "$CCFG/$k"; done
  $KC -n kube-system create configmap cilium-config --from-file="$CCFG" >/dev/null
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    # its library dir: a writable copy of the datapath sources (the agent writes the probed
    # feature headers into bpf/include/bpf); its state dir and socket are /var/run/cilium,
    # the node's own directory
    mkdir -p "$D/cilium-lib" "$D/cilium-cni-conf" && cp -r "$CILIUM_DIR/bpf" "$D/cilium-lib/bpf"
    # the agent writes global sysctls (kernel.unprivileged_bpf_disabled=1, which cannot be
    # undone until reboot, and kernel.timer_migration=0): it runs in a mount namespace of its
    # own, a copy of the node's, where /proc/sys/kernel is read-only (its writes fail with
    # EROFS and it goes on, as they are allowed to fail). net.core.bpf_jit_enable does not
    # exist in a node's netns. Its bpffs (/sys/fs/bpf) is the node's: same superblock.
    start "cilium-agent-$n" nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" \
      unshare --mount --propagation private bash -ec 'mount --bind /proc/sys/kernel /proc/sys/kernel
        mount -o remount,bind,ro /proc/sys/kernel
        exec env "$@"' cilium-agent K8S_NODE_NAME="$n" CILIUM_K8S_NAMESPACE=kube-system \
      "$CILIUM_DIR/cilium-agent" --config-dir="$CCFG" --lib-dir="$D/cilium-lib" \
      --write-cni-conf-when-ready="$D/cilium-cni-conf/05-cilium.conflist" --cni-log-file=/var/run/cilium/cilium-cni.log
  done
  # the agent writes the node's CNI configuration once its datapath is up, so a node turns
  # Ready only when pods can get a network. It writes it into a directory of its own, and
  # up.sh moves a copy into containerd's: written straight into containerd's directory (a
  # temporary file renamed, then rewritten on every change in the directory), containerd 1.6
  # reloaded on the temporary file's events, found no configuration and stayed "cni plugin
  # not initialized"
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    wait_for "cilium agent ready on $n" 300 test -s "$D/cilium-cni-conf/05-cilium.conflist"
    cp "$D/cilium-cni-conf/05-cilium.conflist" "$D/cni/net.d/.05-cilium.tmp"
    mv "$D/cni/net.d/.05-cilium.tmp" "$D/cni/net.d/05-cilium.conflist"
  done
fi
wait_for "nodes Ready" 180 $KC wait --for=condition=Ready node --all --timeout=2s
# Ready is not yet schedulable: the node lifecycle controller removes the not-ready taint on
# its next pass (up to --node-monitor-period later); a test started in between finds no node
# that can run its pods
nodes_untainted() {
  local keys
  keys=$($KC get nodes -o jsonpath='{.items[*].spec.taints[*].key}') || return 1
  [[ " $keys " != *" node.kubernetes.io/not-ready "* ]]
}
wait_for "nodes without the not-ready taint" 120 nodes_untainted
wait_for "default serviceaccount" 60 $KC -n default get serviceaccount default
wait_for "kube-root-ca.crt" 60 $KC -n default get configmap kube-root-ca.crt
[ "$DNS" = 1 ] && wait_for coredns 60 curl -sf "http://$APISERVER_HOST:18181/ready"
# Multus (MULTUS=1): secondary networks over the default one (multus.sh; it needs e2e.env, so
# it runs after the hand-over below)

# ---------------- hand-over ----------------
cat > "$S/e2e.env" <<ENV
# written by test/e2e/harness/up.sh; source it to use the cluster
export KUBECONFIG=$S/admin.kubeconfig
export CNPERF_E2E_KUBECONFIG=$S/admin.kubeconfig
export CNPERF_E2E_NET_MODE=$NET_MODE
export CNPERF_E2E_CNI=$CNI
export CNPERF_E2E_CNI_MODE=$CNI_MODE
export CNPERF_E2E_KUBE_PROXY_MODE=$KUBE_PROXY_MODE
export CNPERF_E2E_NODES=$NODES
export CNPERF_E2E_ZONES=$ZONES
export CNPERF_E2E_DNS=$DNS
export CNPERF_E2E_IP_FAMILY=$IP_FAMILY
export CNPERF_E2E_NODE_NAMES="$(echo $NODE_NAMES)"
export CNPERF_E2E_AGENT_IMAGE=$AGENT_IMAGE
export CNPERF_E2E_CNPERF=$E2E_IMAGES/cnperf
export CNPERF_E2E_KUBECTL=$K8S_DIR/kubectl
export CNPERF_E2E_STATE=$S
export PATH=$K8S_DIR:\$PATH
ENV
if [ "$MULTUS" = 1 ]; then
  "$HARNESS/multus.sh" up
  echo "export CNPERF_E2E_MULTUS=1" >> "$S/e2e.env"
fi
# KubeVirt (KUBEVIRT=1): the marker first, so that down.sh removes a half-installed one too
if [ "$KUBEVIRT" = 1 ]; then
  : > "$S/kubevirt.up"
  "$HARNESS/kubevirt.sh" up
  echo "export CNPERF_E2E_KUBEVIRT=1" >> "$S/e2e.env"
fi
$KC get nodes -L topology.kubernetes.io/zone -o wide
elapsed "$T0" > "$S/up.seconds"
trap - ERR INT TERM
log "cluster up in $(cat "$S/up.seconds") s. Use it: . $S/e2e.env"
