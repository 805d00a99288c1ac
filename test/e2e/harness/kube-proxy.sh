#!/bin/bash
# Restart ONLY kube-proxy, on every node of the running e2e cluster, with other settings, and
# put it back as up.sh started it (the programming tests slow it or switch its mode with this):
#   kube-proxy.sh restart [--mode iptables|nftables] [--min-sync-period D] [--sync-period D]
#       each node's kube-proxy in turn: stopped, started with a copy of its configuration that
#       differs only in these (D: a Go duration, e.g. 5s), and waited for until it serves the
#       mode asked for and has synced its rules. The settings are relative to up.sh's, not to an
#       earlier restart's. Switching mode, kube-proxy itself removes the other mode's rules as
#       it starts (its platformCleanup). The ConfigMap kube-system/kube-proxy (where cnperf
#       reads the mode from) gets the same change.
#   kube-proxy.sh reset     every kube-proxy as up.sh started it (its recorded command and
#                           configuration), and the ConfigMap as up.sh wrote it; nothing to do
#                           for a node that was not restarted
#   kube-proxy.sh status    per node: pid, the mode it serves, and the settings it runs with
# kube-proxy's flags (--iptables-min-sync-period, --proxy-mode, ...) are ignored when it runs
# with --config, as up.sh starts it: hence the configuration file. The processes are stopped
# and started by proc.sh (by the PIDs up.sh recorded, never by name).
set -euo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
die() { echo "kube-proxy.sh: $*" >&2; exit 1; }
usage="usage: kube-proxy.sh restart [--mode iptables|nftables] [--min-sync-period D] [--sync-period D] | reset | status"
[ $# -ge 1 ] || die "$usage"
[ -s "$S/config" ] && [ -s "$S/nodes" ] || die "no running e2e cluster here ($S/config, $S/nodes missing)"
# the cluster's own settings (mode, IP family), not this shell's
# shellcheck disable=SC1091
. "$S/config"
KUBE_PROXY_MODE=${KUBE_PROXY_MODE:-iptables}
KC="$K8S_DIR/kubectl --kubeconfig=$S/admin.kubeconfig"
nodes=$(cat "$S/nodes")
override=$S/kube-proxy.override   # what `restart` applied, one line; absent: as up.sh started it

# kp_edit FILE MODE MIN SYNC: FILE (a KubeProxyConfiguration up.sh wrote) with mode MODE and,
# when given, MODE's minSyncPeriod and syncPeriod (v1alpha1 keeps them per mode: iptables:,
# nftables:; up.sh's file has neither block)
kp_edit() {
  local file=$1 mode=$2 min=$3 sync=$4 fields=()
  grep -q '^mode: ' "$file" || die "$file has no 'mode:' line"
  ! grep -qE '^(iptables|nftables|ipvs):' "$file" || die "$file already has a per-mode block: not as up.sh writes it"
  sed "s/^mode: .*/mode: $mode/" "$file"
  [ -z "$min" ] || fields+=("minSyncPeriod: $min")
  [ -z "$sync" ] || fields+=("syncPeriod: $sync")
  if [ ${#fields[@]} = 2 ]; then echo "$mode: {${fields[0]}, ${fields[1]}}"
  elif [ ${#fields[@]} = 1 ]; then echo "$mode: {${fields[0]}}"; fi
}

# in_node I CMD...: CMD in node I's network namespace
in_node() { local i=$1; shift; nsenter --net="/run/netns/$(node_ns "$i")" "$@"; }

# synced I MODE: node I's kube-proxy serves MODE on /proxyMode and has synced its rules (every
# IP family's sync_proxy_rules_last_timestamp_seconds set: a new process has none before)
synced() {
  local i=$1 mode=$2 got metrics
  got=$(in_node "$i" curl -s -m 3 "http://127.0.0.1:$KP_METRICS_PORT/proxyMode" 2>/dev/null) || return 1
  [ "$got" = "$mode" ] || return 1
  metrics=$(in_node "$i" curl -s -m 3 "http://127.0.0.1:$KP_METRICS_PORT/metrics" 2>/dev/null) || return 1
  echo "$metrics" | awk '/^kubeproxy_sync_proxy_rules_last_timestamp_seconds/ { n++; if ($NF + 0 <= 0) bad++ }
    END { exit !(n > 0 && bad == 0) }'
}
KP_METRICS_PORT=10249   # up.sh's metricsBindAddress 127.0.0.1:10249

# restart_node I ARGVFILE MODE: node I's kube-proxy stopped, started with ARGVFILE's command
# (made its recorded one), and waited for
restart_node() {
  local i=$1 argv=$2 mode=$3 name t0
  name="kube-proxy-$(node_name "$i")"
  [ "$argv" = "$S/pids/$name.argv" ] || cp "$argv" "$S/pids/$name.argv"
  t0=$(now)
  "$HARNESS/proc.sh" stop "$name" >/dev/null || return 1
  "$HARNESS/proc.sh" start "$name" >/dev/null || return 1
  local pid why="did not serve $mode with its rules synced within 60 s"
  pid=$(cat "$S/pids/$name.pid")
  for _ in $(seq 120); do
    if synced "$i" "$mode"; then
      echo "$name: $mode, synced, $(elapsed "$t0") s after the stop (pid $pid)"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { why="exited"; break; }
    sleep 0.5
  done
  echo "----- last lines of $S/logs/$name.log" >&2; tail -n 15 "$S/logs/$name.log" >&2
  echo "kube-proxy.sh: $name $why (see $S/logs/$name.log)" >&2
  return 1
}

# configmap FILE: kube-system/kube-proxy's config.conf made FILE
configmap() {
  $KC -n kube-system create configmap kube-proxy --from-file=config.conf="$1" --dry-run=client -o yaml |
    $KC replace -f - >/dev/null
}

duration_ok() { [[ $1 =~ ^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$ ]]; }

op=$1; shift
case $op in
  restart)
    [ "$(id -u)" = 0 ] || die "restarting kube-proxy takes root (it runs in the nodes' namespaces)"
    mode=$KUBE_PROXY_MODE min="" sync=""
    while [ $# -gt 0 ]; do
      [ $# -ge 2 ] || die "$1 needs a value; $usage"
      case $1 in
        --mode) mode=$2 ;;
        --min-sync-period) min=$2 ;;
        --sync-period) sync=$2 ;;
        *) die "unknown option '$1'; $usage" ;;
      esac
      shift 2
    done
    case $mode in iptables|nftables) ;; *) die "--mode must be iptables or nftables, not '$mode'" ;; esac
    [ -z "$min" ] || duration_ok "$min" || die "--min-sync-period must be a duration such as 5s, not '$min'"
    [ -z "$sync" ] || duration_ok "$sync" || die "--sync-period must be a duration such as 30s, not '$sync'"
    [ "$mode" != nftables ] || command -v nft >/dev/null || die "--mode nftables needs the nft command (Debian's nftables package)"
    what="mode $mode${min:+ minSyncPeriod $min}${sync:+ syncPeriod $sync}"
    for i in $nodes; do
      n=$(node_name "$i") D=$S/$(node_name "$i")
      name="kube-proxy-$n"
      [ -s "$S/pids/$name.argv" ] || die "no recorded command for $name in $S/pids"
      # the command and configuration up.sh started it with, kept the first time
      [ -e "$S/pids/$name.argv.orig" ] || cp "$S/pids/$name.argv" "$S/pids/$name.argv.orig"
      kp_edit "$D/kube-proxy-config.yaml" "$mode" "$min" "$sync" > "$D/kube-proxy-config.restart.yaml"
      new=$S/pids/$name.argv.restart
      mapfile -d '' argv < "$S/pids/$name.argv.orig"
      found=0
      for k in "${!argv[@]}"; do
        if [ "${argv[$k]}" = "--config=$D/kube-proxy-config.yaml" ]; then argv[k]="--config=$D/kube-proxy-config.restart.yaml"; found=1; fi
      done
      [ $found = 1 ] || die "$name's recorded command has no --config=$D/kube-proxy-config.yaml"
      printf '%s\0' "${argv[@]}" > "$new"
      echo "$(date -u +%FT%TZ) $what" > "$override"
      restart_node "$i" "$new" "$mode" || { echo "kube-proxy.sh: putting every kube-proxy back" >&2; "$0" reset >&2 || true; exit 1; }
    done
    kp_edit "$S/kube-proxy-config.yaml" "$mode" "$min" "$sync" > "$S/kube-proxy-config.restart.yaml"
    configmap "$S/kube-proxy-config.restart.yaml"
    echo "kube-proxy restarted on every node: $what (put back with: $0 reset)"
    ;;
  reset)
    [ $# = 0 ] || die "$usage"
    [ "$(id -u)" = 0 ] || die "restarting kube-proxy takes root (it runs in the nodes' namespaces)"
    rc=0
    for i in $nodes; do
      name="kube-proxy-$(node_name "$i")"
      if [ -e "$S/pids/$name.argv.orig" ]; then
        if restart_node "$i" "$S/pids/$name.argv.orig" "$KUBE_PROXY_MODE"; then
          rm -f "$S/pids/$name.argv.orig" "$S/pids/$name.argv.restart" "$S/$(node_name "$i")/kube-proxy-config.restart.yaml"
        else
          rc=1
        fi
      else
        "$HARNESS/proc.sh" start "$name" >/dev/null || rc=1   # nothing changed: only make sure it runs
        echo "$name: as up.sh started it"
      fi
    done
    if [ -e "$override" ] || [ -e "$S/kube-proxy-config.restart.yaml" ]; then
      configmap "$S/kube-proxy-config.yaml" || rc=1
      [ $rc != 0 ] || rm -f "$override" "$S/kube-proxy-config.restart.yaml"
    fi
    [ $rc = 0 ] || die "some kube-proxy is not as up.sh started it (above); run $0 reset again"
    echo "kube-proxy on every node as up.sh started it (mode $KUBE_PROXY_MODE)"
    ;;
  status)
    [ $# = 0 ] || die "$usage"
    if [ -e "$override" ]; then echo "restarted: $(cat "$override")"; else echo "as up.sh started it (mode $KUBE_PROXY_MODE)"; fi
    for i in $nodes; do
      name="kube-proxy-$(node_name "$i")"
      pid=$(cat "$S/pids/$name.pid" 2>/dev/null || echo -)
      got=$(in_node "$i" curl -s -m 3 "http://127.0.0.1:$KP_METRICS_PORT/proxyMode" 2>/dev/null) || got="(no answer)"
      echo "$name: pid $pid, mode $got"
    done
    ;;
  *) die "unknown operation '$op'; $usage" ;;
esac
