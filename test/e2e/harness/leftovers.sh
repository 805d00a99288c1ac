#!/bin/bash
# Leftover check: is anything of the e2e cluster still on this machine?
#   leftovers.sh snapshot FILE   record the host state that the check compares against
#                                (root-netns iptables chains, global sysctls, hardcoded dirs)
#   leftovers.sh check [FILE]    exit 1 and list what remains: processes, mounts, netns, links,
#                                routes, addresses, cgroups, iptables chains, sysctls, files
#   leftovers.sh any             exit 0 if any leftover of ours exists (used before a run)
# Only things this harness names are looked at (cnpe2e*, cnperf-e2e, 10.123.0.0/24, our
# binaries), so other work on the machine (other netns, iperf3 servers, ...) is ignored.
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
# global sysctls kubelet changes, the root netns's forwarding/bridge ones, and every sysctl
# the CNIs write: Cilium 1.15's global ones (kernel.unprivileged_bpf_disabled,
# kernel.timer_migration, net.core.bpf_jit_enable, net.core.fb_tunnels_only_for_init_net) and
# the per-netns ones it writes in the node's netns, watched here in the root netns
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.netfilter.nf_conntrack_max kernel.unprivileged_bpf_disabled net.core.bpf_jit_enable kernel.timer_migration net.core.fb_tunnels_only_for_init_net net.ipv4.conf.all.forwarding net.ipv4.conf.all.rp_filter net.ipv4.fib_multipath_use_neigh net.ipv4.ip_early_demux net.ipv4.ip_local_reserved_ports net.ipv6.conf.all.forwarding net.ipv6.conf.default.forwarding net.bridge.bridge-nf-call-ip6tables"
# host dirs kubelet/containerd/CNIs hardcode (a node's mount namespace binds NODE_PRIVATE_DIRS
# to its own directories, so nothing should ever appear in them)
# (/sys/fs/bpf: the host's bpffs, where no pin of a node's CNI may appear)
HOST_DIRS="/var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /run/containerd /etc/cni /opt/cni /run/flannel /run/calico /run/cilium /var/lib/calico /var/log/calico /etc/calico /var/lib/cilium /sys/fs/bpf"

chains() {   # chain names in the root netns that a kube-proxy/CNI would create (Calico: cali-*),
             # and Calico's ipsets (cali40*, cali60*)
  { iptables-save 2>/dev/null; iptables-legacy-save 2>/dev/null; ip6tables-save 2>/dev/null; } |
    sed -n 's/^:\([^ ]*\) .*/\1/p' | grep -E '^(KUBE-|CNI-|CNPE2E|cali-|FLANNEL)' | sort -u
  ipset list -n 2>/dev/null | grep -E '^cali' | sed 's/^/ipset /'
}
sysctls() { local k; for k in $SYSCTLS; do echo "$k=$(sysctl -n "$k" 2>/dev/null)"; done; }
# BPF (with bpftool): programs attached to the host's interfaces (tc, xdp: `bpftool net` in the
# root netns) and to its cgroup tree, which every node shares (`bpftool cgroup tree`), and the
# loaded programs of the kinds a CNI attaches (sched_cls, xdp, cgroup_sock*): "id type name".
# A node's programs live as long as its netns and bpffs; nothing of them may outlive the run.
bpf() {
  command -v bpftool >/dev/null || return 0
  bpftool net show 2>/dev/null | grep -E '^[^ ]+\(' | sed 's/^/net /'
  bpftool cgroup tree 2>/dev/null | awk '/^\// {p = $1; next} NR > 2 && NF >= 2 {$1 = $1; print "cgroup " p " " $0}'
  bpftool prog show 2>/dev/null | awk '/^[0-9]+: (sched_cls|sched_act|xdp|cgroup_sock|cgroup_sock_addr|cgroup_skb) / {
    print "prog " $1 " " $2 " " $4}'
}
hostfiles() { local d; for d in $HOST_DIRS; do if [ -e "$d" ]; then find "$d" 2>/dev/null; fi; done | sort; }

snapshot() {
  { echo "# chains"; chains; echo "# sysctls"; sysctls; echo "# files"; hostfiles; echo "# bpf"; bpf | sort; } > "$1"
}
section() { sed -n "/^# $2\$/,/^# /p" "$1" | grep -v '^# '; }

# our processes: running one of our binaries, or naming our state dir/netns/runc root, or in our
# cgroups. One find and one grep over /proc (a fork per process is slow on a busy machine).
procs() {
  local f pid p anc=" "
  # the check's own ancestors (make, a wrapper `bash -c '. $S/e2e.env; ...'`) name our state
  # dir on their command lines but are not left behind: they are waiting for this check
  p=$$
  while [ -n "$p" ] && [ "$p" != 0 ]; do
    anc="$anc$p "
    p=$(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null)
  done
  find /proc/[0-9]*/exe -maxdepth 0 \( -lname "$K8S_DIR/*" -o -lname "$ETCD_DIR/*" \
    -o -lname "$COREDNS_DIR/*" -o -lname "$PAUSE_DIR/*" -o -lname "$FLANNEL_DIR/*" -o -lname "$CALICO_DIR/*" -o -lname "$CILIUM_DIR/*" \) -printf '%h %l\n' 2>/dev/null | sed 's|^/proc/||'
  for f in $(grep -l -a -F -e "$S/" -e "/run/netns/$NAME_PREFIX-" -e "$RUN_DIR/" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    case "$anc" in *" $pid "*) continue ;; esac
    # the grep itself matched its own arguments; it is gone by now
    [ -e "/proc/$pid" ] && echo "$pid $(tr '\0' ' ' 2>/dev/null < "$f" | cut -c1-160)"
  done
  for c in /sys/fs/cgroup/*/"$CGROUP_NAME" /sys/fs/cgroup/"$CGROUP_NAME"; do
    [ -d "$c" ] && find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | sed 's/$/ (in our cgroup)/'
  done
}

found() {   # print what is left; return 0 if something is
  local base=${1:-} out=""
  add() { [ -n "$2" ] && out="$out$1:"$'\n'"$(echo "$2" | sed 's/^/    /')"$'\n'; }
  add "processes" "$(procs)"
  add "mounts" "$(awk -v s="$S/" -v r="$RUN_DIR/" -v n="/run/netns/$NAME_PREFIX-" \
    'index($5, s) == 1 || index($5, r) == 1 || index($5, n) == 1 {print $5}' /proc/self/mountinfo)"
  add "netns" "$(cd /run/netns 2>/dev/null && for n in "$NAME_PREFIX"-*; do [ -e "$n" ] && echo "$n"; done)"
  # (cnpe2e*: also MULTUS=1's bridge cnpe2embr and its veths cnpe2e-mbN; its NADs and whereabouts
  # IPPools are API objects and its multus cache is in the nodes' /var/lib/cni: gone with the cluster)
  add "links" "$(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep -E "^($NAME_PREFIX|cali|vxlan(-v6)?\.calico|flannel\.)")"
  # (and up.sh's "unreachable" guards for the Service and pod CIDRs)
  add "routes" "$(ip route show 2>/dev/null | grep -E "^(unreachable )?(10\.123\.0\.|10\.244\.|10\.96\.)|dev $BR")"
  # (IP_FAMILY=ipv6|dual: the IPv6 ones, fd00:10:123::/64, fd00:10:244::/56 and fd00:10:96::/112)
  add "IPv6 routes" "$(ip -6 route show 2>/dev/null | grep -E "^(unreachable )?fd00:10:(123|244|96):|dev $BR")"
  add "addresses" "$(ip -o addr show 2>/dev/null | grep -F -e " $APISERVER_IP/" -e " $APISERVER_IP6/")"
  add "cgroups" "$(ls -d /sys/fs/cgroup/*/"$CGROUP_NAME" /sys/fs/cgroup/"$CGROUP_NAME" 2>/dev/null)"
  add "state files" "$(ls -d "$S" "$RUN_DIR" 2>/dev/null; ls /var/lib/cni/results/cnpe2e-* 2>/dev/null
    for l in /var/log/containers/*.log; do [ -L "$l" ] && case $(readlink "$l") in "$S/"*) echo "$l";; esac; done)"
  if [ -n "$base" ] && [ -f "$base" ]; then
    add "iptables chains (new in the root netns)" "$(comm -13 <(section "$base" chains) <(chains))"
    add "sysctls (changed)" "$(comm -13 <(section "$base" sysctls | sort) <(sysctls | sort))"
    add "files (new in host dirs)" "$(comm -13 <(section "$base" files) <(hostfiles))"
    add "BPF (new: attached in the root netns or to the cgroup tree, or loaded)" "$(comm -13 <(section "$base" bpf) <(bpf | sort))"
  else
    add "iptables chains (root netns)" "$(chains)"
  fi
  [ -n "$out" ] || return 1
  printf '%s' "$out"
}

case ${1:-check} in
  snapshot) snapshot "${2:?file}" ;;
  any) found "" >/dev/null ;;
  check)
    if out=$(found "${2:-}"); then
      echo "LEFTOVERS FOUND:"; echo "$out"; exit 1
    fi
    echo "leftover check: nothing left (processes, mounts, netns, links, routes, cgroups, iptables, sysctls, files, BPF)"
    ;;
  *) echo "usage: $0 snapshot FILE | check [FILE] | any" >&2; exit 2 ;;
esac
