#!/bin/bash
# Tear down what up.sh created. Ends only processes this harness started: the PIDs up.sh
# recorded, the shims of OUR containerds (their command line holds our unique socket path)
# and whatever runs inside OUR cgroups (the containers). Never by name.
# Then unmounts everything under the state dir and the runc root (which holds the nodes' mount
# namespaces: the mounts made inside them go with them), deletes the netns, bridge
# and veths, removes the cgroups, restores the global sysctls kubelet changed, removes the
# files kubelet/containerd/libcni put outside the state dir, and removes the state dir.
# usage: down.sh     (idempotent: safe to run with nothing up)
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
T0=$(now)
S=$E2E_STATE
log() { printf '[down %5.1fs] %s\n' "$(elapsed "$T0")" "$*"; }

# stop NAME... : SIGTERM the recorded PIDs together, wait up to STOP_WAIT s, then SIGKILL
stop() {
  local pids="" n f pid alive
  for n in "$@"; do
    f=$S/pids/$n.pid
    [ -s "$f" ] || continue
    pid=$(cat "$f")
    # only if it is still the process we started (PID reuse): it runs one of our binaries
    if kill -0 "$pid" 2>/dev/null && ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null && pids="$pids $pid"
    fi
    rm -f "$f"
  done
  for _ in $(seq $(( ${STOP_WAIT:-4} * 10 ))); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    pids=$alive; [ -z "$pids" ] && return 0
    sleep 0.1
  done
  for pid in $pids; do
    [ "${QUIET_KILL:-0}" = 1 ] || echo "SIGKILL $pid $(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | cut -c1-60) (no exit on SIGTERM)"
    kill -KILL "$pid" 2>/dev/null
  done
  sleep 0.2
}
cgroup_dirs() { ls -d /sys/fs/cgroup/*/"$CGROUP_NAME" /sys/fs/cgroup/"$CGROUP_NAME" 2>/dev/null; }
# every PID inside our cgroup trees (the containers' processes)
cgroup_pids() {
  local c
  for c in $(cgroup_dirs); do find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -un
}

# 0. KubeVirt (up.sh KUBEVIRT=1), while the API server still answers: its node mounts and the
#    host directories it made are undone by kubevirt.sh down (the rest goes with the cluster)
if [ -f "$S/kubevirt.up" ]; then
  "$HARNESS/kubevirt.sh" down || log "kubevirt.sh down failed (rc $?); the cluster goes anyway"
  rm -f "$S/kubevirt.up"
fi

nodes=$( { cat "$S/nodes" 2>/dev/null
           ls /run/netns 2>/dev/null | sed -n "s/^$NAME_PREFIX-node\([0-9]*\)$/\1/p"; } | sort -un)

# 1. every recorded daemon at once (kubelets first in the list, so none restarts a container);
#    the cluster is thrown away, so no graceful drain is needed
# shellcheck disable=SC2046
STOP_WAIT=3 QUIET_KILL=1 stop $(for i in $nodes; do echo "kubelet-node$i" "kube-proxy-node$i" "flanneld-node$i" "calico-felix-node$i" "calico-tunnel-node$i" "cilium-agent-node$i"; done) \
  coredns kube-scheduler kube-controller-manager kube-apiserver etcd
log "kubelets, kube-proxies, control plane stopped"

# 2. containers: SIGKILL every process in our cgroups (pause + workloads) - by PID, and
#    only inside the cgroup tree this harness created. Remember the container ids for
#    libcni's result cache (/var/lib/cni/results/<net>-<id>-<if>).
for i in $nodes; do
  ls "$S/node$i/containerd/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null
done >> "$S/container-ids"
for _ in $(seq 20); do
  pids=$(cgroup_pids); [ -z "$pids" ] && break
  for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
  sleep 0.1
done
log "containers killed"

# 3. containerds, then the shims of OUR containerds (matched by our unique socket path)
# (containerd 1.6 takes ~4 s to shut down on SIGTERM; its state is thrown away anyway)
# shellcheck disable=SC2046
STOP_WAIT=1 QUIET_KILL=1 stop $(for i in $nodes; do echo "containerd-node$i"; done)
for f in $(grep -l -a -F "$S/" /proc/[0-9]*/cmdline 2>/dev/null); do
  pid=${f#/proc/}; pid=${pid%/cmdline}
  case "$(tr '\0' ' ' 2>/dev/null < "$f")" in *containerd-shim*"$S/"*) kill -KILL "$pid" 2>/dev/null ;; esac
done
# any other recorded process (should be none)
for f in "$S"/pids/*.pid; do [ -f "$f" ] && stop "$(basename "$f" .pid)"; done
log "containerds, shims stopped"
# anything still running inside one of our network namespaces (node netns, pod netns), e.g.
# a server a test started with `ip netns exec` or nsenter: by PID, matched by netns inode
for ns in $(awk -v s="$S/" -v n="/run/netns/$NAME_PREFIX-" \
    '$(NF-2) == "nsfs" && (index($5, s) == 1 || index($5, n) == 1) {print $5}' /proc/self/mountinfo); do
  find -L /proc/[0-9]*/ns/net -maxdepth 0 -samefile "$ns" 2>/dev/null | while read -r f; do
    pid=${f#/proc/}; pid=${pid%/ns/net}
    kill -KILL "$pid" 2>/dev/null && echo "killed process $pid left in netns $ns"
  done
done
# and inside one of our nodes' mount namespaces
for m in "$MNT_DIR"/node*; do
  [ -e "$m" ] || continue
  find -L /proc/[0-9]*/ns/mnt -maxdepth 0 -samefile "$m" 2>/dev/null | while read -r f; do
    pid=${f#/proc/}; pid=${pid%/ns/mnt}
    kill -KILL "$pid" 2>/dev/null && echo "killed process $pid left in mount namespace $m"
  done
done

# 4. unmount everything under the state dir and our runc root (deepest first)
for _ in 1 2 3; do
  mps=$(awk -v s="$S/" -v r="$RUN_DIR/" '{ if (index($5, s) == 1 || index($5, r) == 1) print $5 }' /proc/self/mountinfo | sort -r)
  [ -z "$mps" ] && break
  for m in $mps; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done
log "unmounted"

# 5. network: netns (takes the node's iptables, conntrack, cni0, vxlan with it), bridge, veths
for i in $nodes; do ip netns del "$NAME_PREFIX-node$i" 2>/dev/null; done
ip link del "$BR" 2>/dev/null
# the guard routes up.sh made for the Service and pod CIDRs (only these exact "unreachable" ones)
for c in $GUARD_CIDRS; do ip route del unreachable "$c" 2>/dev/null; done
for c in $GUARD_CIDRS6; do ip -6 route del unreachable "$c" 2>/dev/null; done
for i in $nodes; do ip link del "$(node_veth "$i")" 2>/dev/null; done
# MULTUS=1's bridge network (multus.sh): its root-netns bridge (the veths went with the nodes' netns)
ip link del "$MULTUS_HOST_BR" 2>/dev/null
for i in $nodes; do ip link del "$(multus_host_veth "$i")" 2>/dev/null; done
log "netns, bridge deleted"

# 6. cgroups (deepest first)
for _ in 1 2 3 4 5 6 7 8 9 10; do   # a cgroup is busy for a moment after its last process died
  for c in $(cgroup_dirs); do find "$c" -depth -type d -delete 2>/dev/null; done
  [ -z "$(cgroup_dirs)" ] && break
  sleep 0.2
done
for c in $(cgroup_dirs); do echo "WARN: could not remove $c" >&2; done
log "cgroups removed"

# 7. global sysctls kubelet changed
if [ -s "$S/sysctl.orig" ]; then
  # only the changed ones (writing a value back is not always harmless: e.g.
  # kernel.unprivileged_bpf_disabled, once 1, refuses every write until reboot)
  while IFS='=' read -r k v; do
    [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] && continue
    sysctl -qw "$k=$v" || echo "WARN: could not restore $k=$v" >&2
  done < "$S/sysctl.orig"
  log "sysctls restored"
fi

# 8. files outside the state dir (paths kubelet, containerd and libcni hardcode)
rm -rf "$RUN_DIR"
rm -f /var/lib/cni/results/cnpe2e-* 2>/dev/null
if [ -s "$S/container-ids" ]; then
  while read -r id; do rm -f /var/lib/cni/results/*-"$id"-* 2>/dev/null; done < "$S/container-ids"
fi
for l in /var/log/containers/*.log; do          # kubelet's symlinks into our pod log dirs
  [ -L "$l" ] && case "$(readlink "$l")" in "$S/"*) rm -f "$l" ;; esac
done
if [ -s "$S/created-paths" ]; then
  # the kubelets (re)create /var/lib/kubelet/device-plugins/kubelet.sock (hardcoded path; now in
  # each node's own directory, NODE_PRIVATE_DIRS: this is for a cluster of an older up.sh)
  grep -qx /var/lib/kubelet "$S/created-paths" && rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  while read -r p; do find "$p" -depth -type d -empty -delete 2>/dev/null; done < "$S/created-paths"
fi
rm -rf "$S"
rmdir "$E2E_HOME" 2>/dev/null
log "done"
exit 0
