#!/bin/sh
# netperf-vs-k8s-netperf.sh — UDP_STREAM with cnperf's netperf command line and with k8s-netperf's
# (fb9a2ec: super-netperf runs `netperf -s 2 ARGS -P 12866`), and each without the one option
# that tells them apart (cnperf's send timing, k8s-netperf's -s 2 sleep), in rotating order
# within each round, between two network namespaces joined by a veth pair. Prints one line per
# run (round, variant, datagrams sent and received per second) and then, per variant, the ratio
# to k8s-netperf's line paired per round: geometric mean and 95 % interval. docs/drivers.md
# ("Against k8s-netperf's netperf") has the figures this measured.
#
# Needs root, ip, netperf and netserver 2.7 (.ci/install-third-party.sh). Creates the namespaces
# cnpkn-a and cnpkn-b and removes them, and stops the netserver it started (by PID), also when
# it fails or is interrupted.
#
# Usage: testdata/tools/netperf-vs-k8s-netperf.sh [ROUNDS [SECONDS [MSGSIZE]]]   (default 16 3 1024)
#        NICE=-20 runs netperf and netserver at that niceness (a busy host's noise is smaller).
set -eu
ROUNDS=${1:-16} L=${2:-3} M=${3:-1024} NICE=${NICE:-0}
A=cnpkn-a B=cnpkn-b H=10.250.77.2
SERVER_PID=""
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
	ip netns del $A 2>/dev/null || true
	ip netns del $B 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add $A
ip netns add $B
ip link add cnpkn0 netns $A type veth peer name cnpkn1 netns $B
ip -n $A addr add 10.250.77.1/24 dev cnpkn0
ip -n $B addr add $H/24 dev cnpkn1
for ns in $A $B; do ip -n $ns link set lo up; done
ip -n $A link set cnpkn0 up
ip -n $B link set cnpkn1 up
ip netns exec $B nice -n "$NICE" netserver -D -p 12865 >/dev/null 2>&1 &
SERVER_PID=$!
sleep 1

SEL=THROUGHPUT,THROUGHPUT_UNITS,LOCAL_SEND_THROUGHPUT,LOCAL_RECV_THROUGHPUT,REMOTE_SEND_THROUGHPUT,REMOTE_RECV_THROUGHPUT
SEL=$SEL,ELAPSED_TIME,PROTOCOL,DIRECTION,LOCAL_SEND_SIZE,LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT
SEL=$SEL,REMOTE_BYTES_RECVD,LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS
SEL=$SEL,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT
LAT=MIN_LATENCY,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,STDDEV_LATENCY
PEER=rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,local_send_calls,local_transport_retrans

# argv VARIANT: the netperf command line of one variant
argv() {
	case $1 in
	cnperf) echo "-P 0 -H $H -p 12865 -t UDP_STREAM -l $L -f m -c -C -- -k $SEL,$LAT -P ,12866 -m $M -R 1" ;;
	cnperf-no-timing) echo "-P 0 -H $H -p 12865 -t UDP_STREAM -l $L -f m -c -C -- -k $SEL -P ,12866 -m $M -R 1" ;;
	k8s-netperf) echo "-s 2 -H $H -l $L -t UDP_STREAM -- -k $PEER -m $M -R 1 -P 12866" ;;
	k8s-netperf-no-sleep) echo "-H $H -l $L -t UDP_STREAM -- -k $PEER -m $M -R 1 -P 12866" ;;
	esac
}
VARIANTS="cnperf k8s-netperf cnperf-no-timing k8s-netperf-no-sleep"
for v in $VARIANTS; do echo "# $v: netperf $(argv $v)"; done
OUT=$(mktemp)
trap 'cleanup; rm -f "$OUT"' EXIT
i=1
while [ $i -le "$ROUNDS" ]; do
	# rotate the order so no variant always runs first
	set -- $VARIANTS
	k=$(( (i - 1) % 4 ))
	while [ $k -gt 0 ]; do first=$1; shift; set -- "$@" "$first"; k=$((k - 1)); done
	for v in "$@"; do
		# shellcheck disable=SC2046 # argv splits into netperf's arguments
		res=$(ip netns exec $A nice -n "$NICE" netperf $(argv $v) 2>&1 | tr -d '\r')
		sent=$(echo "$res" | sed -n 's/^LOCAL_SEND_CALLS=//p')
		recv=$(echo "$res" | sed -n 's/^REMOTE_RECV_CALLS=//p')
		if [ -z "$sent" ] || [ -z "$recv" ]; then
			echo "round $i $v: netperf failed: $res" >&2
			exit 1
		fi
		echo "$i $v $((sent / L)) $((recv / L))" | tee -a "$OUT"
	done
	i=$((i + 1))
done
# ratio to k8s-netperf's line, paired per round: geometric mean and 95 % interval (Student t)
awk '
function t95(df) { return df>=30 ? 2.04 : (df>=20 ? 2.09 : (df>=15 ? 2.13 : (df>=10 ? 2.23 : (df>=7 ? 2.36 : (df>=5 ? 2.57 : (df>=3 ? 3.18 : (df>=2 ? 4.30 : 12.71))))))) }
{ s[$1, $2] = $3; r[$1, $2] = $4; rounds[$1] = 1; vs[$2] = 1 }
END {
	printf "%-22s %12s %12s  %-26s %s\n", "variant", "sent/s", "received/s", "sent, ratio (95% CI)", "received, ratio"
	for (v in vs) {
		n = 0; ms = 0; mr = 0; qs = 0; qr = 0; as = 0; ar = 0
		for (i in rounds) {
			if (s[i, v] == "" || s[i, "k8s-netperf"] <= 0 || r[i, "k8s-netperf"] <= 0 || r[i, v] <= 0) continue
			n++; a = log(s[i, v] / s[i, "k8s-netperf"]); b = log(r[i, v] / r[i, "k8s-netperf"])
			ms += a; qs += a * a; mr += b; qr += b * b; as += s[i, v]; ar += r[i, v]
		}
		if (n < 2) continue
		ms /= n; mr /= n
		hs = t95(n - 1) * sqrt((qs - n * ms * ms) / (n - 1) / n); hr = t95(n - 1) * sqrt((qr - n * mr * mr) / (n - 1) / n)
		printf "%-22s %12.0f %12.0f  %.3f (%.3f-%.3f)        %.3f (%.3f-%.3f)\n", v, as / n, ar / n, exp(ms), exp(ms - hs), exp(ms + hs), exp(mr), exp(mr - hr), exp(mr + hr)
	}
}' "$OUT"
