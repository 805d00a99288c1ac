#!/bin/bash
# Stop and start one process of the running e2e cluster, for fault tests (test/e2e/fault_*):
#   proc.sh stop NAME    SIGTERM the PID up.sh recorded (SIGKILL after 10 s); waits until it is gone
#   proc.sh start NAME   start it again with the command up.sh used ($S/pids/NAME.argv), its
#                        output appended to its log; nothing when it is running
# NAME is a file name in $S/pids without .pid: kube-apiserver, kubelet-node2, kube-proxy-node1, ...
# Only a recorded PID that still runs one of our commands is signalled (never by name).
set -euo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
die() { echo "proc.sh: $*" >&2; exit 1; }
[ $# = 2 ] || die "usage: proc.sh stop|start NAME"
op=$1 name=$2
case $name in ""|*/*|.*) die "bad name '$name'" ;; esac
pidf=$S/pids/$name.pid argvf=$S/pids/$name.argv
[ -f "$argvf" ] || die "no process '$name' recorded in $S/pids (is the cluster up?)"
running() { [ -s "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && ours "$(cat "$pidf")"; }

case $op in
  stop)
    running || { echo "$name is not running"; exit 0; }
    pid=$(cat "$pidf")
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; sleep 0.2; fi
    echo "stopped $name (pid $pid)"
    ;;
  start)
    if running; then echo "$name is running (pid $(cat "$pidf"))"; exit 0; fi
    mapfile -d '' argv < "$argvf"
    rm -f "$pidf"
    echo "--- restarted by proc.sh at $(date -u +%FT%TZ)" >> "$S/logs/$name.log"
    setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$pidf" "${argv[@]}" >> "$S/logs/$name.log" 2>&1 < /dev/null
    for _ in $(seq 50); do [ -s "$pidf" ] && break; sleep 0.1; done
    running || die "$name did not start (see $S/logs/$name.log)"
    echo "started $name (pid $(cat "$pidf"))"
    ;;
  *) die "unknown operation '$op' (stop, start)" ;;
esac
