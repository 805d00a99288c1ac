#!/bin/bash
# The cost of standing NetworkPolicies on TCP_RR latency and TCP_CRR rate, on a running cluster
# whose CNI enforces them (make e2e-up CNI=calico). For each count N in POLICY_COUNTS, one
# namespace gets N NetworkPolicies selecting every pod of it (so the measured pods too) plus N
# idle ones selecting no pod, and the allow-all policy that keeps them from blocking
# (`cnperf load create --policies N --idle-policies N`); then `cnperf run` measures TCP_RR and
# TCP_CRR on pod-pod-cross-node in that namespace (labelled policies=N), the namespace's
# standing config is removed, and `cnperf compare` sets the runs side by side.
# usage: policy-cost.sh     env: POLICY_COUNTS ("0 100 1000"), DURATION (5s), SAMPLES (5),
#                                POLICY_DIR (a temp dir: the results files and the comparison)
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
[ -f "$S/e2e.env" ] || { echo "policy-cost: no cluster (make e2e-up CNI=calico first)" >&2; exit 1; }
. "$S/e2e.env"
DIR=${POLICY_DIR:-$(mktemp -d /tmp/cnperf-e2e-policy.XXXXXX)}
mkdir -p "$DIR"
T_ALL=$(now)
say() { printf '\n==> [policy-cost %6.1fs] %s\n' "$(elapsed "$T_ALL")" "$*"; }
bin=$CNPERF_E2E_CNPERF
files=() rc=0
for n in ${POLICY_COUNTS:-0 100 1000}; do
  ns=cnperf-policy-$n
  say "$n policies selecting the measured pods + $n idle ones (namespace $ns)"
  t=$(now)
  "$bin" load create -n "$ns" --policies "$n" --idle-policies "$n" || { rc=1; break; }
  echo "standing config ready in $(elapsed "$t") s"
  "$bin" run --platform kube -n "$ns" --driver native --profile TCP_RR,TCP_CRR --path pod-pod-cross-node \
    --duration "${DURATION:-5s}" --samples "${SAMPLES:-5}" --label "policies=$n" --no-progress \
    --results "$DIR/policies-$n.jsonl" || rc=1
  files+=("$DIR/policies-$n.jsonl")
  "$bin" load remove -n "$ns" >/dev/null || rc=1   # deletes the namespace it created
done
if [ ${#files[@]} -gt 1 ]; then
  say "compare"
  "$bin" compare "${files[@]}" | tee "$DIR/compare.txt"
fi
say "done in $(elapsed "$T_ALL") s; results in $DIR"
exit $rc
