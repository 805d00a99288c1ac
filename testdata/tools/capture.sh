#!/bin/sh
# capture.sh — run the Debian-packaged iperf3, qperf, sockperf (and iperf 2) on loopback for
# every profile and option cnperf's drivers support, and store their raw outputs as golden
# fixtures under internal/driver/<tool>/testdata/captured/.
#
# Every fixture NAME is three files:
#   NAME.stdout  what the tool printed on stdout, byte for byte
#   NAME.stderr  what it printed on stderr
#   NAME.cmd     line 1: the argv (space separated); line 2: "exit=<code>"; line 3: the tool
#                version; line 4: the capture date (UTC)
# Derived failure fixtures (truncated, garbage, non-UTF-8) are cut from real outputs and say so
# in their .cmd file.
#
# Traffic goes only to 127.0.0.1, on ports 473xx that nothing else here uses. The script
# starts its servers itself and stops exactly those processes by PID (never by name), also
# when it fails. Each run lasts 1-2 s; the whole capture takes about two minutes.
#
# After a new capture the figures change: run `go test ./internal/driver/... -update` to rewrite
# the golden files, and re-read by eye the figures the TestHandVerified tests quote from the raw
# files.
#
# Usage: testdata/tools/capture.sh [iperf3|qperf|sockperf|iperf2 ...]   (default: all)
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HOST=127.0.0.1
IPERF3_PORT=47301
QPERF_PORT=47311
QPERF_DATA=47312
SOCKPERF_PORT=47321
IPERF2_PORT=47331
DEAD_PORT=47399   # nothing listens here: connection refused
SILENT_PORT=47391 # accepts TCP and never answers: a tool-side timeout

LOGS=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null || true
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null || true
	done
	PIDS=""
}
trap 'cleanup; rm -rf "$LOGS"' EXIT
trap 'exit 130' INT TERM

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# start_server OUTFILE CMD... — start a server in the background and remember its PID.
start_server() {
	log=$1
	mkdir -p "$(dirname "$log")"
	shift
	"$@" >"$log" 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.5
}

# run DIR NAME VERSION CMD... — run a client and store its outputs as fixture NAME.
run() {
	dir=$1 name=$2 ver=$3
	shift 3
	mkdir -p "$dir"
	set +e
	"$@" >"$dir/$name.stdout" 2>"$dir/$name.stderr"
	rc=$?
	set -e
	printf '%s\nexit=%s\n%s\n%s\n' "$*" "$rc" "$ver" "$(now)" >"$dir/$name.cmd"
	echo "  $name: exit $rc, $(wc -c <"$dir/$name.stdout") bytes"
}

# derive DIR NAME FROM HOW — derived failure fixtures from a real capture.
derive() {
	dir=$1 name=$2 from=$3 how=$4
	case $how in
	truncated)
		size=$(wc -c <"$dir/$from.stdout")
		head -c $((size / 2)) "$dir/$from.stdout" >"$dir/$name.stdout"
		;;
	garbage)
		printf 'Segmentation fault\n\001\002 not a report at all }{\n' >"$dir/$name.stdout"
		;;
	nonutf8)
		printf '\377\376\375 bad bytes \300\301\n' >"$dir/$name.stdout"
		head -c 200 "$dir/$from.stdout" >>"$dir/$name.stdout"
		;;
	esac
	: >"$dir/$name.stderr"
	printf 'derived from %s.stdout (%s)\nexit=0\n-\n%s\n' "$from" "$how" "$(now)" >"$dir/$name.cmd"
	echo "  $name: derived ($how)"
}

# silent_listener — a TCP listener that accepts and never says a word.
silent_listener() {
	rm -f "$LOGS/silent"
	mkfifo "$LOGS/silent"
	sleep 60 >"$LOGS/silent" &
	PIDS="$PIDS $!"
	busybox nc -l -p "$SILENT_PORT" <"$LOGS/silent" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.3
}

capture_iperf3() {
	d=$ROOT/internal/driver/iperf3/testdata/captured
	v=$(iperf3 --version 2>&1 | head -1)
	echo "iperf3 ($v) -> $d"
	start_server "$LOGS/server.log" iperf3 -s -p $IPERF3_PORT --forceflush
	c="iperf3 -c $HOST -p $IPERF3_PORT -J"
	run "$d" tcp_stream "$v" $c -t 1
	run "$d" tcp_stream_p2_l65536 "$v" $c -t 1 -P 2 -l 65536
	run "$d" tcp_stream_omit "$v" $c -t 1 -O 1
	run "$d" tcp_sendfile "$v" $c -t 1 -Z
	run "$d" tcp_maerts "$v" $c -t 1 -R
	run "$d" tcp_stream_bidir "$v" $c -t 1 --bidir
	run "$d" tcp_stream_rate "$v" $c -t 1 -b 200000000
	run "$d" udp_stream "$v" $c -t 1 -u -l 1400 -b 0
	run "$d" udp_stream_rate "$v" $c -t 1 -u -l 1400 -b 50000000
	run "$d" udp_stream_p2 "$v" $c -t 1 -P 2 -u -l 1024 -b 0
	# A run stopped half way (what a sample timeout does): iperf3 catches SIGTERM.
	run "$d" interrupted "$v" timeout -s TERM 1.5 $c -t 5
	# A test while the server still runs another: the refusal the runner retries.
	$c -t 3 >/dev/null 2>&1 &
	busy_client=$!
	sleep 0.5
	run "$d" busy "$v" $c -t 1
	wait "$busy_client" || true
	cleanup
	run "$d" refused "$v" iperf3 -c $HOST -p $DEAD_PORT -J -t 1
	silent_listener
	run "$d" timeout "$v" timeout -s TERM 3 iperf3 -c $HOST -p $SILENT_PORT -J -t 1
	cleanup
	derive "$d" truncated tcp_stream truncated
	derive "$d" garbage tcp_stream garbage
	derive "$d" nonutf8 tcp_stream nonutf8
}

capture_qperf() {
	d=$ROOT/internal/driver/qperf/testdata/captured
	v=$(qperf --version 2>&1 | head -1)
	echo "$v -> $d"
	start_server "$LOGS/server.log" qperf -lp $QPERF_PORT
	for t in tcp_bw tcp_lat udp_bw udp_lat; do
		for m in 64 1024; do
			run "$d" "${t}_m$m" "$v" qperf $HOST -lp $QPERF_PORT -ip $QPERF_DATA -t 1 -m $m -vv -uu -un -e 6 $t
		done
	done
	# The human-readable default (no -uu/-e), as people's logs have it.
	run "$d" tcp_lat_default_units "$v" qperf $HOST -lp $QPERF_PORT -ip $QPERF_DATA -t 1 -m 1 -vv tcp_lat
	run "$d" tcp_bw_default_units "$v" qperf $HOST -lp $QPERF_PORT -ip $QPERF_DATA -t 1 -vv tcp_bw
	cleanup
	run "$d" refused "$v" qperf $HOST -lp $DEAD_PORT -ip $QPERF_DATA -t 1 -m 64 -vv -uu -un -e 6 tcp_lat
	silent_listener
	run "$d" timeout "$v" timeout -s TERM 8 qperf $HOST -lp $SILENT_PORT -ip $QPERF_DATA -t 1 -m 64 -vv -uu -un -e 6 tcp_lat
	cleanup
	derive "$d" truncated tcp_lat_m64 truncated
	derive "$d" garbage tcp_lat_m64 garbage
	derive "$d" nonutf8 tcp_lat_m64 nonutf8
}

capture_sockperf() {
	d=$ROOT/internal/driver/sockperf/testdata/captured
	v=$(sockperf --version 2>&1 | head -1)
	echo "$v -> $d"
	start_server "$LOGS/server-tcp.log" sockperf sr --tcp -i $HOST -p $SOCKPERF_PORT
	start_server "$LOGS/server-udp.log" sockperf sr -i $HOST -p $SOCKPERF_PORT
	c="-i $HOST -p $SOCKPERF_PORT"
	run "$d" pp_tcp_m64_fullrtt "$v" sockperf ping-pong --tcp $c -t 2 -m 64 --full-rtt
	run "$d" pp_udp_m64_fullrtt "$v" sockperf ping-pong $c -t 2 -m 64 --full-rtt
	run "$d" pp_udp_m1024_fullrtt "$v" sockperf ping-pong $c -t 2 -m 1024 --full-rtt
	run "$d" pp_udp_m64_halfrtt "$v" sockperf ping-pong $c -t 2 -m 64
	run "$d" pp_tcp_m64_halfrtt "$v" sockperf ping-pong --tcp $c -t 2 -m 64
	run "$d" tp_tcp_m1400 "$v" sockperf throughput --tcp $c -t 2 -m 1400
	run "$d" tp_udp_m1400 "$v" sockperf throughput $c -t 2 -m 1400
	run "$d" tp_udp_m1400_mps "$v" sockperf throughput $c -t 2 -m 1400 --mps 20000
	run "$d" ul_udp_m64_fullrtt "$v" sockperf under-load $c -t 2 -m 64 --mps 10000 --full-rtt
	run "$d" ul_tcp_m64_fullrtt "$v" sockperf under-load --tcp $c -t 2 -m 64 --mps 10000 --full-rtt
	cleanup
	run "$d" refused "$v" sockperf ping-pong --tcp -i $HOST -p $DEAD_PORT -t 1 -m 64 --full-rtt
	run "$d" no_server_udp "$v" sockperf ping-pong -i $HOST -p $DEAD_PORT -t 1 -m 64 --full-rtt
	silent_listener
	run "$d" timeout "$v" timeout -s TERM 4 sockperf ping-pong --tcp -i $HOST -p $SILENT_PORT -t 1 -m 64 --full-rtt
	cleanup
	derive "$d" truncated pp_tcp_m64_fullrtt truncated
	derive "$d" garbage pp_tcp_m64_fullrtt garbage
	derive "$d" nonutf8 pp_tcp_m64_fullrtt nonutf8
}

capture_iperf2() {
	d=$ROOT/internal/driver/iperf2/testdata/captured
	v=$(iperf -v 2>&1 | head -1)
	echo "$v -> $d"
	start_server "$LOGS/server.log" iperf -s -p $IPERF2_PORT
	c="iperf -c $HOST -p $IPERF2_PORT -e"
	run "$d" bounceback_l64 "$v" $c --bounceback --bounceback-period 0 -t 1 -l 64
	run "$d" bounceback_l1024 "$v" $c --bounceback --bounceback-period 0 -t 1 -l 1024
	run "$d" tcp_stream "$v" $c -t 1
	cleanup
	run "$d" refused "$v" iperf -c $HOST -p $DEAD_PORT -e --bounceback --bounceback-period 0 -t 1 -l 64
}

tools=${*:-iperf3 qperf sockperf iperf2}
for t in $tools; do
	case $t in
	iperf3) command -v iperf3 >/dev/null && capture_iperf3 || echo "iperf3 not installed; skipped" ;;
	qperf) command -v qperf >/dev/null && capture_qperf || echo "qperf not installed; skipped" ;;
	sockperf) command -v sockperf >/dev/null && capture_sockperf || echo "sockperf not installed; skipped" ;;
	iperf2) command -v iperf >/dev/null && capture_iperf2 || echo "iperf (2) not installed; skipped" ;;
	*) echo "unknown tool $t" >&2; exit 2 ;;
	esac
done
