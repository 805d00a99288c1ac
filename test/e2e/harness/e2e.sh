#!/bin/bash
# `make e2e`: build what is missing, build the images, bring the cluster up, run the e2e Go
# tests against it, ALWAYS tear it down, then fail the run if anything is left behind.
# Prints build, bring-up, test and teardown times.
# usage: e2e.sh [go test args...]   env: NODES CNI CNI_MODE NET_MODE ZONES DNS (see up.sh),
#   E2E_GO_TEST_ARGS (default: -count=1 -v -timeout 40m), E2E_PKGS (default: ./test/e2e/...),
#   CNPERF_E2E_LOGS=<dir> keeps the cluster's logs there on failure
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
S=$E2E_STATE
T_ALL=$(now)
say() { printf '\n==> [e2e %6.1fs] %s\n' "$(elapsed "$T_ALL")" "$*"; }

# a running cluster (make e2e-up) is someone's: do not replace it
for f in "$S"/pids/*.pid; do
  if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    echo "e2e: a cluster is already running (state $S). Run the tests against it with 'make e2e-test'," >&2
    echo "     or stop it with 'make e2e-down' first." >&2
    exit 1
  fi
done
if "$HARNESS/leftovers.sh" any; then
  say "leftovers of an earlier run: cleaning them first"
  "$HARNESS/down.sh"
fi

BASE=$(mktemp /tmp/cnperf-e2e-baseline.XXXXXX)
"$HARNESS/leftovers.sh" snapshot "$BASE"

say "build binaries (cached in $E2E_CACHE)"
t=$(now); "$HARNESS/build-bins.sh" || { rm -f "$BASE"; exit 1; }; T_BUILD=$(elapsed "$t")
say "build images"
t=$(now); "$HARNESS/../images/build.sh" || { rm -f "$BASE"; exit 1; }; T_IMAGES=$(elapsed "$t")

rc_up=1 rc_test=1 rc_down=1 rc_left=1 T_UP=- T_TEST=- T_DOWN=- done_down=0
teardown() {
  [ $done_down = 1 ] && return; done_down=1
  if [ "$rc_up" = 3 ]; then   # up.sh found someone else's running cluster: leave it alone
    echo "e2e: another cluster was started meanwhile; not touching it" >&2
    rc_down=0 rc_left=0; rm -f "$BASE"; return
  fi
  say "teardown"
  local t; t=$(now)
  if [ $rc_test != 0 ] && [ -n "${CNPERF_E2E_LOGS:-}" ] && [ -d "$S/logs" ]; then
    mkdir -p "$CNPERF_E2E_LOGS" && cp -r "$S/logs" "$CNPERF_E2E_LOGS/" && echo "cluster logs kept in $CNPERF_E2E_LOGS/logs"
  fi
  "$HARNESS/down.sh"; rc_down=$?; T_DOWN=$(elapsed "$t")
  say "leftover check"
  "$HARNESS/leftovers.sh" check "$BASE"; rc_left=$?
  rm -f "$BASE"
}
summary() {
  teardown
  echo
  echo "==> e2e summary: NODES=$NODES CNI=$CNI CNI_MODE=$CNI_MODE NET_MODE=$NET_MODE ZONES=$ZONES IP_FAMILY=$IP_FAMILY"
  printf '    build %ss, images %ss, bring-up %ss, tests %ss, teardown %ss, total %ss\n' \
    "$T_BUILD" "$T_IMAGES" "$T_UP" "$T_TEST" "$T_DOWN" "$(elapsed "$T_ALL")"
  printf '    up rc=%s, tests rc=%s, down rc=%s, leftovers rc=%s\n' $rc_up $rc_test $rc_down $rc_left
  if [ $rc_up = 0 ] && [ $rc_test = 0 ] && [ $rc_down = 0 ] && [ $rc_left = 0 ]; then
    echo "==> e2e PASSED"; exit 0
  fi
  echo "==> e2e FAILED"; exit 1
}
trap summary EXIT
trap 'echo "e2e: interrupted" >&2; exit 130' INT TERM

say "bring-up"
t=$(now); "$HARNESS/up.sh"; rc_up=$?; T_UP=$(elapsed "$t")
[ $rc_up = 0 ] || exit 1

say "e2e tests"
t=$(now)
(
  . "$S/e2e.env"
  cd "$REPO_ROOT" || exit 1
  # shellcheck disable=SC2086
  go test -tags e2e ${E2E_PKGS:-./test/e2e/...} ${E2E_GO_TEST_ARGS:--count=1 -v -timeout 40m} "$@"
)
rc_test=$?; T_TEST=$(elapsed "$t")
exit $rc_test
