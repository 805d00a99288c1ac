#!/bin/bash
# Runs the same cnperf plan on a `routed` cluster and on a `vxlan` cluster (two stand-ins for
# two CNIs), one after the other (one cluster per machine), then checks with the e2e test
# TestCompareRoutedVxlan that `cnperf compare` matches the two runs case by case. The runs are
# labelled netmode=routed / netmode=vxlan (cnperf run --label), which is what names compare's
# columns (no compare --label needed). Each cluster is torn down and checked for leftovers
# before the next one comes up.
# With CNI=flannel the two clusters are flannel's host-gw (labelled routed) and vxlan backends.
# usage: compare-modes.sh     env: NODES (default 2), CNI (bridge or flannel), COMPARE_DIR (default: a temp dir)
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
DIR=${COMPARE_DIR:-$(mktemp -d /tmp/cnperf-e2e-compare.XXXXXX)}
T_ALL=$(now)
say() { printf '\n==> [compare %6.1fs] %s\n' "$(elapsed "$T_ALL")" "$*"; }

for f in "$S"/pids/*.pid; do
  if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "compare-modes: a cluster is already running (state $S); stop it with 'make e2e-down' first" >&2
    exit 1
  fi
done
CNI=$CNI "$HARNESS/build-bins.sh" >/dev/null || exit 1
"$HARNESS/../images/build.sh" >/dev/null || exit 1

run_mode() { # MODE: bring up, measure, tear down, check leftovers
  local mode=$1 rc_up rc_run=1 rc_down rc_left base cni_mode=$1
  [ "$mode" = routed ] && [ "$CNI" != bridge ] && cni_mode=host-gw
  base=$(mktemp /tmp/cnperf-e2e-baseline.XXXXXX)
  "$HARNESS/leftovers.sh" snapshot "$base"
  say "bring-up CNI=$CNI NET_MODE=$mode CNI_MODE=$cni_mode"
  CNI=$CNI NET_MODE=$mode CNI_MODE=$cni_mode "$HARNESS/up.sh"; rc_up=$?
  if [ $rc_up = 0 ]; then
    say "cnperf run on $mode"
    (
      . "$S/e2e.env"
      "$CNPERF_E2E_CNPERF" run --platform kube --driver native \
        --profile TCP_STREAM,TCP_RR --path pod-pod-cross-node,pod-clusterip \
        --duration 2s --samples 4 --label "netmode=$mode" --no-progress \
        --results "$DIR/$mode.jsonl" -o table
    )
    rc_run=$?
  fi
  if [ "$rc_up" = 3 ]; then rm -f "$base"; return 1; fi  # someone else's cluster: leave it
  say "teardown $mode"
  "$HARNESS/down.sh"; rc_down=$?
  "$HARNESS/leftovers.sh" check "$base"; rc_left=$?
  rm -f "$base"
  echo "    $mode: up rc=$rc_up run rc=$rc_run down rc=$rc_down leftovers rc=$rc_left"
  [ $rc_up = 0 ] && [ $rc_run = 0 ] && [ $rc_down = 0 ] && [ $rc_left = 0 ]
}

run_mode routed || { echo "==> compare-modes FAILED (routed)"; exit 1; }
run_mode vxlan || { echo "==> compare-modes FAILED (vxlan)"; exit 1; }

say "cnperf compare routed vxlan"
cd "$REPO_ROOT" || exit 1
CNPERF_E2E_COMPARE_BASE=$DIR/routed.jsonl CNPERF_E2E_COMPARE_NEW=$DIR/vxlan.jsonl \
  go test -tags e2e ./test/e2e/ -run TestCompareRoutedVxlan -count=1 -v
rc=$?
echo "==> compare-modes $([ $rc = 0 ] && echo PASSED || echo FAILED) in $(elapsed "$T_ALL")s (results in $DIR)"
exit $rc
