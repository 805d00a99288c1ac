#!/bin/bash
# The seeds' CNI comparison on real CNIs (make e2e-cnis): brings up the e2e cluster with each
# CNI in turn (one cluster per machine), runs the same plan on it (deploy/plans/cni-comparison.yaml:
# TCP_STREAM 1 and 8 flows, UDP_STREAM 64 B, TCP_RR at 1/10/20/40 connections, TCP_CRR, on
# pod-pod-cross-node, pod-clusterip and host-host), tears it down and checks for leftovers
# before the next one comes up. Then `cnperf compare` across every CNI (table and markdown),
# `cnperf report -o html` of all the runs, and the e2e test TestCNIComparison checks the lot.
# Each run is labelled cni=CNI-MODE (cnperf run --label), which names compare's columns.
# On each CNI of CNIS_PROGRAMMING, after the plan, `cnperf programming` measures how fast the
# cluster obeys (docs/programming.md): Service and endpoint programming (kube-proxy) and, on a
# CNI that enforces NetworkPolicy (calico, cilium), policy enforcement, CNIS_PROGRAMMING_COUNT
# changes of each; `cnperf compare` of those runs and TestCNIProgramming check them.
#
# usage: e2e-cnis.sh
# env:   CNIS        CNI:MODE list, in order, the first being compare's base
#                    (default "bridge:routed bridge:vxlan flannel:vxlan flannel:host-gw calico:vxlan cilium:vxlan";
#                    a CNI the harness cannot bring up fails the script)
#        CNIS_DURATION, CNIS_SAMPLES   override the plan's 10s x 3 (CI: 2s x 2)
#        CNIS_PROGRAMMING  the CNI:MODE entries of CNIS on which cnperf programming runs too
#                    (default: every one; "" none; CI: calico:vxlan)
#        CNIS_PROGRAMMING_COUNT  changes of each kind (default 20, issue 32's "at least 20")
#        CNIS_PROGRAMMING_KINDS  cnperf programming's --kind on each of them (default: service,endpoint,
#                    and policy-deny,policy-allow on a CNI that enforces NetworkPolicy; CI: the policy
#                    kinds only, as the e2e suite measures Services and endpoints with kube-proxy already)
#        CNIS_DIR    where the results, comparison and report go (default: a temp dir)
#        NODES       (default 2)
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
CNIS=${CNIS:-"bridge:routed bridge:vxlan flannel:vxlan flannel:host-gw calico:vxlan cilium:vxlan"}
DIR=${CNIS_DIR:-$(mktemp -d /tmp/cnperf-e2e-cnis.XXXXXX)}
PLAN=$REPO_ROOT/deploy/plans/cni-comparison.yaml
PROGRAMMING=${CNIS_PROGRAMMING-$CNIS}
PROG_COUNT=${CNIS_PROGRAMMING_COUNT:-20}
PROG_KINDS=${CNIS_PROGRAMMING_KINDS:-}
mkdir -p "$DIR"
T_ALL=$(now)
say() { printf '\n==> [cnis %6.1fs] %s\n' "$(elapsed "$T_ALL")" "$*"; }

for f in "$S"/pids/*.pid; do
  if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "e2e-cnis: a cluster is already running (state $S); stop it with 'make e2e-down' first" >&2
    exit 1
  fi
done
for c in $CNIS; do
  case $c in *:*) ;; *) echo "e2e-cnis: CNIS entry '$c' is not CNI:MODE (e.g. flannel:vxlan)" >&2; exit 2 ;; esac
done
for c in $PROGRAMMING; do
  case " $CNIS " in *" $c "*) ;; *) echo "e2e-cnis: CNIS_PROGRAMMING entry '$c' is not in CNIS='$CNIS'" >&2; exit 2 ;; esac
done
case $PROG_COUNT in ''|*[!0-9]*) echo "e2e-cnis: CNIS_PROGRAMMING_COUNT='$PROG_COUNT' is not a number of changes" >&2; exit 2 ;; esac
case ,$PROG_KINDS, in
  ,,) ;;
  *,,*|*[!a-z,-]*) echo "e2e-cnis: CNIS_PROGRAMMING_KINDS='$PROG_KINDS' is not a comma-separated list of cnperf programming's kinds" >&2; exit 2 ;;
esac
set -- $CNIS
[ $# -ge 2 ] || { echo "e2e-cnis: CNIS='$CNIS' names $# CNI; a comparison needs at least two (e.g. CNIS=\"bridge:routed flannel:vxlan\")" >&2; exit 2; }

# the agent image and the host-side cnperf from this checkout (the image directory is shared by
# every checkout on the machine: never run on what another one built)
"$HARNESS/../images/build.sh" >"$DIR/images.log" 2>&1 || { echo "e2e-cnis: image build failed:" >&2; tail -20 "$DIR/images.log" >&2; exit 1; }

overrides=()
[ -n "${CNIS_DURATION:-}" ] && overrides+=(--duration "$CNIS_DURATION")
[ -n "${CNIS_SAMPLES:-}" ] && overrides+=(--samples "$CNIS_SAMPLES")

files=() measured=() timings=() prog_files=() prog_measured=()
run_cni() { # CNI MODE: build, bring up, measure, tear down, check leftovers
  local cni=$1 mode=$2 name="$1-$2" rc_up rc_run=1 rc_prog=0 rc_down rc_left base t t_up t_run=0 t_prog=0 t_down kinds
  CNI=$cni "$HARNESS/build-bins.sh" >"$DIR/$name.build.log" 2>&1 || { echo "    $name: build failed (see $DIR/$name.build.log)"; tail -5 "$DIR/$name.build.log"; return 1; }
  base=$(mktemp /tmp/cnperf-e2e-baseline.XXXXXX)
  "$HARNESS/leftovers.sh" snapshot "$base"
  say "bring-up CNI=$cni CNI_MODE=$mode"
  t=$(now)
  local net=$mode; [ "$cni" = bridge ] || net=
  CNI=$cni CNI_MODE=$mode NET_MODE=${net:-routed} "$HARNESS/up.sh"; rc_up=$?
  t_up=$(elapsed "$t")
  if [ $rc_up = 0 ]; then
    t=$(now)
    say "cnperf run on $name"
    (
      . "$S/e2e.env"
      "$CNPERF_E2E_CNPERF" run --platform kube -c "$PLAN" "${overrides[@]}" \
        --label "cni=$name" --no-progress --results "$DIR/$name.jsonl" -o table
    ) | tee "$DIR/$name.table"
    rc_run=${PIPESTATUS[0]}
    t_run=$(elapsed "$t")
    case " $PROGRAMMING " in
      *" $cni:$mode "*)
        kinds=service,endpoint
        case $cni in calico|cilium) kinds=$kinds,policy-deny,policy-allow ;; esac # they enforce NetworkPolicy
        kinds=${PROG_KINDS:-$kinds}
        t=$(now)
        say "cnperf programming on $name: $kinds, $PROG_COUNT changes each"
        (
          . "$S/e2e.env"
          "$CNPERF_E2E_CNPERF" programming --kind "$kinds" --count "$PROG_COUNT" -n cnperf-cnis-programming \
            --label "cni=$name" --results "$DIR/$name.programming.jsonl" -o table
        ) | tee "$DIR/$name.programming.table"
        rc_prog=${PIPESTATUS[0]}
        t_prog=$(elapsed "$t")
        if [ -s "$DIR/$name.programming.jsonl" ]; then prog_files+=("$DIR/$name.programming.jsonl") prog_measured+=("$cni:$mode"); fi
        ;;
    esac
  fi
  if [ "$rc_up" = 3 ]; then rm -f "$base"; return 1; fi  # someone else's cluster: leave it
  say "teardown $name"
  t=$(now)
  "$HARNESS/down.sh"; rc_down=$?
  "$HARNESS/leftovers.sh" check "$base"; rc_left=$?
  rm -f "$base"
  t_down=$(elapsed "$t")
  timings+=("$(printf '%-16s up %6.1fs  run %6.1fs  programming %6.1fs  down+check %5.1fs' "$name" "$t_up" "$t_run" "$t_prog" "$t_down")")
  echo "    $name: up rc=$rc_up run rc=$rc_run programming rc=$rc_prog down rc=$rc_down leftovers rc=$rc_left"
  if [ -s "$DIR/$name.jsonl" ]; then files+=("$DIR/$name.jsonl") measured+=("$cni:$mode"); fi
  [ $rc_up = 0 ] && [ $rc_run = 0 ] && [ $rc_prog = 0 ] && [ $rc_down = 0 ] && [ $rc_left = 0 ]
}

failed=()
for c in $CNIS; do
  run_cni "${c%%:*}" "${c#*:}" || failed+=("$c")
done

cd "$REPO_ROOT" || exit 1
if [ ${#files[@]} -ge 2 ]; then
  say "cnperf compare ${files[*]##*/}"
  CLI=$DIR/cnperf
  go build -o "$CLI" ./cmd/cnperf || exit 1
  "$CLI" compare "${files[@]}" | tee "$DIR/compare.txt"
  "$CLI" compare -o markdown "${files[@]}" >"$DIR/compare.md"
  "$CLI" report -o html "${files[@]}" >"$DIR/report.html"
  if [ ${#prog_files[@]} -ge 2 ]; then
    say "cnperf compare ${prog_files[*]##*/}"
    "$CLI" compare "${prog_files[@]}" | tee "$DIR/programming-compare.txt"
    "$CLI" compare -o markdown "${prog_files[@]}" >"$DIR/programming-compare.md"
  fi
  # the CNIs that were measured (a CNI that failed already fails the script)
  CNPERF_E2E_CNIS_DIR=$DIR CNPERF_E2E_CNIS="${measured[*]}" CNPERF_E2E_CNIS_PROGRAMMING="${prog_measured[*]}" \
    CNPERF_E2E_CNIS_PROGRAMMING_COUNT=$PROG_COUNT CNPERF_E2E_CNIS_PROGRAMMING_KINDS=$PROG_KINDS CNPERF_E2E_CNIS_NODES="$(seq -f 'node%g' -s ' ' 1 "${NODES:-2}")" \
    go test -tags e2e ./test/e2e/ -run 'TestCNIComparison|TestCNIProgramming' -count=1 -v
  rc_test=$?
else
  echo "==> e2e-cnis: fewer than two CNIs were measured: nothing to compare" >&2
  rc_test=1
fi
echo
echo "==> e2e-cnis timings (build excluded):"
printf '    %s\n' "${timings[@]}"
if [ ${#failed[@]} -gt 0 ]; then echo "==> e2e-cnis FAILED on: ${failed[*]} (results in $DIR)"; exit 1; fi
echo "==> e2e-cnis $([ "$rc_test" = 0 ] && echo PASSED || echo FAILED) in $(elapsed "$T_ALL")s (results in $DIR)"
exit "$rc_test"
