#!/bin/sh
# capture.sh — run the Debian-packaged iperf3, qperf, sockperf (and iperf 2), and netperf 2.7.1
# and uperf 1.0.8 as .ci/install-third-party.sh builds them, on loopback for every profile and
# option cnperf's drivers support (and, for netperf and uperf, the outputs people save: classic
# tables with and without banner and -c -C, omni CSV and keyval, uperf's default output with
# nthreads and nprocs groups), and store their raw outputs as golden fixtures under
# internal/driver/<tool>/testdata/captured/.
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
# uperf reads its workload from a profile file: each uperf fixture's profile is kept beside it
# as profiles/NAME.xml (the .cmd line names it as profile.xml).
#
# Usage: testdata/tools/capture.sh [iperf3|qperf|sockperf|iperf2|netperf|uperf|import ...]   (default: all but import)
# A part alone (its fixtures only; the full tool run includes it): uperf-peers, netperf-peers,
# sockperf-peers: the forms k8s-netperf and people's saved outputs have that cnperf misread;
# netperf-send: the driver's TCP_STREAM and UDP_STREAM runs.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HOST=127.0.0.1
IPERF3_PORT=47301
QPERF_PORT=47311
QPERF_DATA=47312
SOCKPERF_PORT=47321
IPERF2_PORT=47331
NETPERF_PORT=47341 # data ports 47342..
UPERF_PORT=47361   # data ports 47362..
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

# capture_sockperf_peers: the file --full-log writes (the statistics, then one CSV line per
# packet; it names no protocol), of a TCP ping-pong at 500 messages/s to keep it small. Needs
# the TCP server of capture_sockperf (or starts its own: capture.sh sockperf-peers).
capture_sockperf_peers() {
	d=$ROOT/internal/driver/sockperf/testdata/captured
	v=$(sockperf --version 2>&1 | head -1)
	run "$d" fulllog_pp_tcp_m64 "$v" sh -c "sockperf ping-pong --tcp -i $HOST -p $SOCKPERF_PORT -t 2 -m 64 --mps 500 --full-rtt --full-log $LOGS/full.csv >/dev/null; rc=\$?; cat $LOGS/full.csv; exit \$rc"
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
	capture_sockperf_peers
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


# netperf: the driver's own argv (omni keyval, internal/driver/netperf ClientArgv; the tests
# check that they are the same), then the outputs people keep.
NETPERF_STREAM_K=THROUGHPUT,THROUGHPUT_UNITS,LOCAL_SEND_THROUGHPUT,LOCAL_RECV_THROUGHPUT,REMOTE_SEND_THROUGHPUT,REMOTE_RECV_THROUGHPUT,ELAPSED_TIME,PROTOCOL,DIRECTION,LOCAL_SEND_SIZE,LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT,REMOTE_BYTES_RECVD,LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT
# TCP_STREAM and UDP_STREAM add netperf's latency selectors (its send-call timing, the P99 of a
# stream that k8s-netperf asks for; option netperf.sendTiming)
NETPERF_SEND_K=$NETPERF_STREAM_K,MIN_LATENCY,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,STDDEV_LATENCY
NETPERF_RR_K=THROUGHPUT,THROUGHPUT_UNITS,TRANSACTION_RATE,RT_LATENCY,MIN_LATENCY,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,STDDEV_LATENCY,ELAPSED_TIME,PROTOCOL,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE,BURST_SIZE,LOCAL_SEND_CALLS,LOCAL_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT

# run_pair DIR NAME VERSION PORT CMD... — two copies of a client at once (parallel flows):
# fixtures NAME_flow0 and NAME_flow1; "@PORT@" in CMD becomes PORT and PORT+1.
run_pair() {
	dir=$1 name=$2 ver=$3 port=$4
	shift 4
	a=$(echo "$*" | sed "s/@PORT@/$port/g") b=$(echo "$*" | sed "s/@PORT@/$((port + 1))/g")
	run "$dir" "${name}_flow0" "$ver" $a &
	p0=$!
	run "$dir" "${name}_flow1" "$ver" $b &
	p1=$!
	wait $p0 $p1 || true
}

# capture_netperf_peers: forms people save that cnperf misread: classic TCP_RR -v 2 (its
# "RoundTrip Latency usec/Tran" table and histogram) and the omni -O human-readable output.
# Needs the netserver of capture_netperf (or starts its own: capture.sh netperf-peers).
capture_netperf_peers() {
	d=$ROOT/internal/driver/netperf/testdata/captured
	v=$(netperf -V 2>&1 | head -1)
	h="-H $HOST -p $NETPERF_PORT"
	run "$d" classic_tcp_rr_v2 "$v" netperf $h -t TCP_RR -l 1 -v 2
	run "$d" omni_human_tcp_rr "$v" netperf $h -t TCP_RR -l 1 -- -O
	run "$d" omni_human_tcp_stream "$v" netperf $h -t TCP_STREAM -l 1 -- -O
	run "$d" omni_human_sel_tcp_rr "$v" netperf $h -t TCP_RR -l 1 -j -- -O THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P99_LATENCY,REQUEST_SIZE,RESPONSE_SIZE,PROTOCOL,DIRECTION
}

# capture_netperf_send: the send tests as the driver runs them (1 s, -c -C, keyval with the
# latency selectors). Needs the netserver of capture_netperf (or starts its own: capture.sh
# netperf-send).
capture_netperf_send() {
	d=$ROOT/internal/driver/netperf/testdata/captured
	v=$(netperf -V 2>&1 | head -1)
	h="-H $HOST -p $NETPERF_PORT"
	data=$((NETPERF_PORT + 1))
	run "$d" tcp_stream "$v" netperf -P 0 $h -t TCP_STREAM -l 1 -f m -c -C -- -k $NETPERF_SEND_K -P ,$data
	run "$d" udp_stream "$v" netperf -P 0 $h -t UDP_STREAM -l 1 -f m -c -C -- -k $NETPERF_SEND_K -P ,$data -m 1400 -R 1
	run "$d" tcp_stream_m1024 "$v" netperf -P 0 $h -t TCP_STREAM -l 1 -f m -c -C -- -k $NETPERF_SEND_K -P ,$data -m 1024
	run_pair "$d" tcp_stream_p2 "$v" $data netperf -P 0 $h -t TCP_STREAM -l 1 -f m -c -C -- -k $NETPERF_SEND_K -P ,@PORT@
}

capture_netperf() {
	d=$ROOT/internal/driver/netperf/testdata/captured
	v=$(netperf -V 2>&1 | head -1)
	echo "$v -> $d"
	start_server "$LOGS/netserver.log" netserver -D -p $NETPERF_PORT
	h="-H $HOST -p $NETPERF_PORT"
	data=$((NETPERF_PORT + 1))
	# as the driver runs them (1 s, -c -C, keyval)
	capture_netperf_send
	run "$d" tcp_maerts "$v" netperf -P 0 $h -t TCP_MAERTS -l 1 -f m -c -C -- -k $NETPERF_STREAM_K -P ,$data
	for t in TCP_RR UDP_RR TCP_CRR; do
		lc=$(echo $t | tr A-Z a-z)
		run "$d" "$lc" "$v" netperf -P 0 $h -t $t -l 1 -j -c -C -- -k $NETPERF_RR_K -P ,$data
	done
	run "$d" tcp_rr_r1024 "$v" netperf -P 0 $h -t TCP_RR -l 1 -j -c -C -- -k $NETPERF_RR_K -P ,$data -r 1024,1024
	run "$d" tcp_rr_burst4 "$v" netperf -P 0 $h -t TCP_RR -l 1 -j -c -C -- -k $NETPERF_RR_K -P ,$data -b 4
	run "$d" tcp_sendfile "$v" netperf $h -t TCP_SENDFILE -l 1 -f m -- -P ,$data
	run_pair "$d" tcp_rr_p2 "$v" $data netperf -P 0 $h -t TCP_RR -l 1 -j -c -C -- -k $NETPERF_RR_K -P ,@PORT@
	# as people save them: classic tables, with and without banner and -c -C
	for t in TCP_STREAM TCP_MAERTS TCP_SENDFILE UDP_STREAM TCP_RR UDP_RR TCP_CRR; do
		lc=$(echo $t | tr A-Z a-z)
		extra=""
		[ $t = UDP_STREAM ] && extra="-- -m 1024"
		run "$d" "classic_$lc" "$v" netperf $h -t $t -l 1 $extra
		run "$d" "classic_${lc}_cpu" "$v" netperf $h -t $t -l 1 -c -C $extra
		run "$d" "classic_${lc}_nobanner" "$v" netperf -P 0 $h -t $t -l 1 $extra
	done
	run "$d" classic_tcp_stream_fg "$v" netperf $h -t TCP_STREAM -l 1 -f g -- -m 16384
	run "$d" classic_tcp_stream_fk "$v" netperf $h -t TCP_STREAM -l 1 -f K
	# seed 002's procedure: TCP_RR with a 1-byte request and response, and -c -C
	run "$d" classic_tcp_rr_r1_cpu "$v" netperf $h -t TCP_RR -l 1 -c -C -- -r 1,1
	# omni -o CSV (column titles) and -k keyval with netperf's default selectors
	run "$d" omni_csv_tcp_stream "$v" netperf $h -t TCP_STREAM -l 1 -- -o THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME,PROTOCOL,DIRECTION,LOCAL_SEND_SIZE
	run "$d" omni_csv_tcp_rr "$v" netperf $h -t TCP_RR -l 1 -j -- -o THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P99_LATENCY,PROTOCOL,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE
	run "$d" omni_keyval_tcp_rr "$v" netperf $h -t TCP_RR -l 1 -- -k
	run "$d" omni_keyval_udp_stream "$v" netperf $h -t UDP_STREAM -l 1 -- -k -m 1024
	# the Mizar procedure's -o CSV (seed 003) and k8s-netperf's -k selectors (seed 000)
	run "$d" mizar_csv "$v" netperf $h -l 1 -t TCP_RR -- -o min_latency,mean_latency,max_latency,stddev_latency,transaction_rate
	run "$d" k8s_netperf_stream "$v" netperf $h -l 1 -t TCP_STREAM -- -k rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,local_send_calls,local_transport_retrans -m 1024 -P ,$data -R 1
	capture_netperf_peers
	# a run cut short (what a sample timeout does)
	run "$d" interrupted "$v" timeout -s TERM 1.5 netperf -P 0 $h -t TCP_STREAM -l 5 -f m -- -k $NETPERF_STREAM_K -P ,$data
	run "$d" classic_interrupted "$v" timeout -s INT 1.5 netperf $h -t TCP_RR -l 5
	cleanup
	run "$d" refused "$v" netperf -P 0 -H $HOST -p $DEAD_PORT -t TCP_RR -l 1 -j -- -k $NETPERF_RR_K -P ,$data
	run "$d" classic_refused "$v" netperf -H $HOST -p $DEAD_PORT -t TCP_STREAM -l 1
	derive "$d" truncated tcp_rr truncated
	derive "$d" garbage tcp_rr garbage
	derive "$d" nonutf8 tcp_rr nonutf8
}

# uperf_profile FILE NAME GROUPATTR FLOWS PROTO PORT0 OPS... — a profile as the uperf driver
# writes it (internal/driver/uperf Profile: one group per flow, flow i on data port PORT0+i;
# PORT0 "-" = uperf picks the ports, and then one group of FLOWS threads or processes:
# GROUPATTR nthreads|nprocs, as people's own profiles have it).
uperf_profile() {
	f=$1 name=$2 attr=$3 n=$4 proto=$5 port0=$6
	shift 6
	nodelay=""
	[ "$name" = cnperf-TCP_RR ] && nodelay=" tcp_nodelay"
	groups=$n per=1
	[ "$port0" = - ] && groups=1 per=$n
	mkdir -p "$(dirname "$f")"
	{
		printf '<?xml version="1.0"?>\n<profile name="%s">\n' "$name"
		i=0
		while [ $i -lt $groups ]; do
			port=""
			[ "$port0" != - ] && port=" port=$((port0 + i))"
			printf '  <group %s="%s">\n    <transaction iterations="1">\n' "$attr" "$per"
			printf '      <flowop type="connect" options="remotehost=%s protocol=%s%s%s"/>\n' $HOST "$proto" "$port" "$nodelay"
			printf '    </transaction>\n    <transaction duration="1s">\n'
			for op in "$@"; do
				opts=${op#*:}
				case $opts in *=*) ;; *) opts="size=$opts" ;; esac
				printf '      <flowop type="%s" options="%s"/>\n' "${op%%:*}" "$opts"
			done
			printf '    </transaction>\n    <transaction iterations="1">\n      <flowop type="disconnect"/>\n    </transaction>\n  </group>\n'
			i=$((i + 1))
		done
		printf '</profile>\n'
	} >"$f"
}

# urun DIR NAME VERSION UPERF-ARGS... — run uperf with profiles/NAME.xml copied to profile.xml.
urun() {
	dir=$1 name=$2 ver=$3
	shift 3
	cp "$dir/profiles/$name.xml" "$LOGS/profile.xml"
	(cd "$LOGS" && run "$dir" "$name" "$ver" uperf -m profile.xml "$@")
}

# k8s_uperf_profile FILE NAME PROTO PORT OPS — a profile as k8s-netperf writes it
# (pkg/drivers/uperf.go createUperfProfile, v0.1.43: unquoted flowop types, one group of
# nprocs="1"), its duration 1 s.
k8s_uperf_profile() {
	f=$1 name=$2 proto=$3 port=$4 ops=$5
	mkdir -p "$(dirname "$f")"
	printf '<?xml version=1.0?>\n<profile name="%s">\n<group nprocs="1">\n<transaction iterations="1">\n' "$name" >"$f"
	printf '  <flowop type="connect" options="remotehost=%s protocol=%s port=%s"/>\n' $HOST "$proto" "$port" >>"$f"
	printf '</transaction>\n<transaction duration="1">\n%b</transaction>\n' "$ops" >>"$f"
	printf '<transaction iterations="1">\n  <flowop type=disconnect />\n</transaction>\n</group>\n</profile>\n' >>"$f"
}

# capture_uperf_peers: the runs k8s-netperf makes (uperf -v -a -R -i 1 on its own profiles,
# the slave's Run Statistics line then starts with "[host] Success"), and an RR run without -a
# (no Txn table: the round trip can only be derived from the rate). Needs the uperf server of
# capture_uperf (or starts its own when run alone: capture.sh uperf-peers).
capture_uperf_peers() {
	d=$ROOT/internal/driver/uperf/testdata/captured
	v=$(uperf -V 2>&1 | head -1)
	P=$d/profiles
	data=$((UPERF_PORT + 1))
	k8s_uperf_profile "$P/k8s_tcp_rr_v.xml" rr-tcp-1024-1 tcp $data \
		'  <flowop type=write options="size=1024"/>\n  <flowop type=read  options="size=1024"/>\n'
	urun "$d" k8s_tcp_rr_v "$v" -v -a -R -i 1 -P $UPERF_PORT
	k8s_uperf_profile "$P/k8s_udp_stream_v.xml" stream-udp-1024-1 udp $data \
		'  <flowop type=write options="count=16 size=1024"/>\n'
	urun "$d" k8s_udp_stream_v "$v" -v -a -R -i 1 -P $UPERF_PORT
	uperf_profile "$P/tcp_rr_p1_noall.xml" cnperf-TCP_RR nthreads 1 tcp $data write:1 read:1
	urun "$d" tcp_rr_p1_noall "$v" -R -i 1 -P $UPERF_PORT
	# TCP_STREAM_LAT: the driver's profile (16 writes of the message, 16 reads of the small
	# message back, per transaction) and k8s-netperf's own
	uperf_profile "$P/tcp_stream_lat_p1.xml" cnperf-TCP_STREAM_LAT nthreads 1 tcp $data "write:count=16 size=1024" "read:count=16 size=1"
	urun "$d" tcp_stream_lat_p1 "$v" -a -R -i 1 -P $UPERF_PORT
	k8s_uperf_profile "$P/k8s_tcp_stream_lat_v.xml" stream-tcp-1024-1 tcp $data \
		'  <flowop type=write options="count=16 size=1024"/>\n  <flowop type=read options="count=16 size=1"/>\n'
	urun "$d" k8s_tcp_stream_lat_v "$v" -v -a -R -i 1 -P $UPERF_PORT
}

capture_uperf() {
	d=$ROOT/internal/driver/uperf/testdata/captured
	v=$(uperf -V 2>&1 | head -1)
	echo "$v -> $d"
	start_server "$LOGS/uperf-server.log" uperf -s -P $UPERF_PORT
	data=$((UPERF_PORT + 1))
	P=$d/profiles
	for n in 1 4; do
		uperf_profile "$P/tcp_stream_p$n.xml" cnperf-TCP_STREAM nthreads $n tcp $data write:65536
		uperf_profile "$P/tcp_maerts_p$n.xml" cnperf-TCP_MAERTS nthreads $n tcp $data read:65536
		uperf_profile "$P/udp_stream_p$n.xml" cnperf-UDP_STREAM nthreads $n udp $data write:1400
		uperf_profile "$P/tcp_rr_p$n.xml" cnperf-TCP_RR nthreads $n tcp $data write:1 read:1
		uperf_profile "$P/udp_rr_p$n.xml" cnperf-UDP_RR nthreads $n udp $data write:1 read:1
		for t in tcp_stream tcp_maerts udp_stream tcp_rr udp_rr; do
			urun "$d" "${t}_p$n" "$v" -a -R -i 1 -P $UPERF_PORT
		done
	done
	uperf_profile "$P/tcp_rr_m1024_p1.xml" cnperf-TCP_RR nthreads 1 tcp $data write:1024 read:1024
	urun "$d" tcp_rr_m1024_p1 "$v" -a -R -i 1 -P $UPERF_PORT
	# -X writes a line per flowop: 300 transactions per flow keep the fixture small
	uperf_profile "$P/tcp_rr_history.xml" cnperf-TCP_RR nthreads 2 tcp $data write:64 read:64
	sed -i 's/duration="1s"/iterations="300"/' "$P/tcp_rr_history.xml"
	cp "$P/tcp_rr_history.xml" "$LOGS/profile.xml"
	(cd "$LOGS" && run "$d" tcp_rr_history "$v" sh -c "uperf -m profile.xml -a -R -i 1 -P $UPERF_PORT -X history; rc=\$?; echo '### cnperf: uperf -X history'; cat history; exit \$rc")
	# as people write and save them: uperf picks the data ports, N threads or processes in
	# one group, uperf's default output (no -R) as well as -R
	for attr in nthreads nprocs; do
		uperf_profile "$P/default_tcp_stream_$attr.xml" tcp-stream $attr 4 tcp - write:16384
		uperf_profile "$P/default_tcp_rr_$attr.xml" rr-tcp $attr 4 tcp - write:64 read:64
		uperf_profile "$P/default_udp_stream_$attr.xml" udp-stream $attr 2 udp - write:1024
		uperf_profile "$P/raw_tcp_stream_$attr.xml" tcp-stream $attr 4 tcp - write:16384
		for t in tcp_stream tcp_rr udp_stream; do
			urun "$d" "default_${t}_$attr" "$v" -a -P $UPERF_PORT
		done
		urun "$d" "raw_tcp_stream_$attr" "$v" -a -R -i 1 -P $UPERF_PORT
	done
	capture_uperf_peers
	uperf_profile "$P/default_tcp_maerts.xml" tcp-maerts nthreads 1 tcp - read:65536
	urun "$d" default_tcp_maerts "$v" -a -P $UPERF_PORT
	uperf_profile "$P/default_udp_rr.xml" rr-udp nthreads 1 udp - write:1 read:1
	urun "$d" default_udp_rr "$v" -a -P $UPERF_PORT
	# uperf 1.0.8's bug that the driver avoids: N threads on one fixed data port
	uperf_profile "$P/fixed_port_nthreads2.xml" cnperf-TCP_STREAM nthreads 1 tcp $data write:65536
	sed -i 's/nthreads="1"/nthreads="2"/' "$P/fixed_port_nthreads2.xml"
	urun "$d" fixed_port_nthreads2 "$v" -a -R -i 1 -P $UPERF_PORT
	# a run cut short (what a sample timeout does)
	uperf_profile "$P/interrupted.xml" cnperf-TCP_STREAM nthreads 1 tcp $data write:65536
	sed -i 's/duration="1s"/duration="8s"/' "$P/interrupted.xml"
	cp "$P/interrupted.xml" "$LOGS/profile.xml"
	(cd "$LOGS" && run "$d" interrupted "$v" timeout -s TERM 4 uperf -m profile.xml -a -R -i 1 -P $UPERF_PORT)
	cleanup
	cp "$P/tcp_stream_p1.xml" "$P/refused.xml"
	urun "$d" refused "$v" -a -R -i 1 -P $DEAD_PORT
	derive "$d" truncated tcp_stream_p1 truncated
	derive "$d" garbage tcp_stream_p1 garbage
	derive "$d" nonutf8 tcp_stream_p1 nonutf8
}

# capture_import — the inputs of cnperf import's own tests (internal/cli/importcmd): two runs
# of one iperf3 test (two samples of one case), iperf3 refused, and netperf told to stop after
# one byte/transaction (-l -1), which prints "Elapsed Time 0.00" and a rate from nothing.
capture_import() {
	d=$ROOT/internal/cli/importcmd/testdata/captured
	v=$(iperf3 --version 2>&1 | head -1)
	echo "import: iperf3 ($v) -> $d"
	start_server "$LOGS/server.log" iperf3 -s -p $IPERF3_PORT
	run "$d" iperf3_tcp_stream_1 "$v" iperf3 -c $HOST -p $IPERF3_PORT -J -t 1
	run "$d" iperf3_tcp_stream_2 "$v" iperf3 -c $HOST -p $IPERF3_PORT -J -t 1
	cleanup
	run "$d" iperf3_refused "$v" iperf3 -c $HOST -p $DEAD_PORT -J -t 1
	v=$(netperf -V 2>&1 | head -1)
	start_server "$LOGS/netserver.log" netserver -D -p $NETPERF_PORT
	run "$d" netperf_tcp_stream_elapsed0 "$v" netperf -H $HOST -p $NETPERF_PORT -t TCP_STREAM -l -1
	run "$d" netperf_tcp_rr_elapsed0 "$v" netperf -H $HOST -p $NETPERF_PORT -t TCP_RR -l -1
	cleanup
}

tools=${*:-iperf3 qperf sockperf iperf2 netperf uperf}
for t in $tools; do
	case $t in
	iperf3) command -v iperf3 >/dev/null && capture_iperf3 || echo "iperf3 not installed; skipped" ;;
	qperf) command -v qperf >/dev/null && capture_qperf || echo "qperf not installed; skipped" ;;
	sockperf) command -v sockperf >/dev/null && capture_sockperf || echo "sockperf not installed; skipped" ;;
	iperf2) command -v iperf >/dev/null && capture_iperf2 || echo "iperf (2) not installed; skipped" ;;
	netperf) command -v netperf >/dev/null && capture_netperf || echo "netperf not installed (.ci/install-third-party.sh); skipped" ;;
	uperf) command -v uperf >/dev/null && capture_uperf || echo "uperf not installed (.ci/install-third-party.sh); skipped" ;;
	import) capture_import ;;
	sockperf-peers)
		start_server "$LOGS/server-tcp.log" sockperf sr --tcp -i $HOST -p $SOCKPERF_PORT
		capture_sockperf_peers
		cleanup
		;;
	netperf-peers)
		start_server "$LOGS/netserver.log" netserver -D -p $NETPERF_PORT
		capture_netperf_peers
		cleanup
		;;
	netperf-send)
		start_server "$LOGS/netserver.log" netserver -D -p $NETPERF_PORT
		capture_netperf_send
		cleanup
		;;
	uperf-peers)
		start_server "$LOGS/uperf-server.log" uperf -s -P $UPERF_PORT
		capture_uperf_peers
		cleanup
		;;
	*) echo "unknown tool $t" >&2; exit 2 ;;
	esac
done
