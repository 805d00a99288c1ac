#!/bin/bash
# make e2e-compare: the CNI comparison (e2e-cnis.sh) on the two modes of one CNI, short samples:
# CNI=bridge (default) its routed and vxlan stand-ins, CNI=flannel its host-gw and vxlan
# backends. Kept as a name for the routed-vs-VXLAN question; e2e-cnis.sh does the work.
# usage: compare-modes.sh     env: CNI (bridge or flannel), COMPARE_DIR (default: a temp dir),
#                                  CNIS_DURATION (default 2s), CNIS_SAMPLES (default 2), NODES
set -uo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${CNI:-bridge} in
  bridge) cnis="bridge:routed bridge:vxlan" ;;
  flannel) cnis="flannel:host-gw flannel:vxlan" ;;
  *) echo "compare-modes: CNI must be bridge or flannel (two modes of one CNI), not '$CNI'; use e2e-cnis.sh (CNIS=...) for others" >&2; exit 2 ;;
esac
# CNIS_PROGRAMMING: none by default (e2e-cnis.sh measures it on every CNI)
exec env CNIS="$cnis" CNIS_PROGRAMMING="${CNIS_PROGRAMMING-}" CNIS_DIR="${COMPARE_DIR:-${CNIS_DIR:-}}" \
  CNIS_DURATION="${CNIS_DURATION:-2s}" CNIS_SAMPLES="${CNIS_SAMPLES:-2}" "$HARNESS/e2e-cnis.sh"
