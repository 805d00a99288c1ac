#!/usr/bin/env python3
"""Write the netperf parser fixtures (internal/driver/netperf/testdata/manual).

netperf is not packaged on the machine cnperf is developed on, so its fixtures are written, not
captured: keyval (-k) output as the netperf 2.7 manual documents it (chapter "The Omni Tests",
"Omni Output Selection" and "Omni Output Selectors"), with values computed here so that they are
self-consistent (throughput = bytes × 8 / elapsed, RT_LATENCY = (burst+1) / rate, service demand
= util × 1e4 × CPUs / work as netlib.c computes it). The argv line of each fixture is what the
driver builds; the tests check it. Each .cmd file names the manual section it follows.
"""
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "driver", "netperf", "testdata", "manual")
S = ("THROUGHPUT,THROUGHPUT_UNITS,LOCAL_SEND_THROUGHPUT,LOCAL_RECV_THROUGHPUT,REMOTE_SEND_THROUGHPUT,REMOTE_RECV_THROUGHPUT,ELAPSED_TIME,PROTOCOL,DIRECTION,"
     "LOCAL_SEND_SIZE,LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT,REMOTE_BYTES_RECVD,LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,"
     "LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT")
R = ("THROUGHPUT,THROUGHPUT_UNITS,TRANSACTION_RATE,RT_LATENCY,MIN_LATENCY,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,STDDEV_LATENCY,"
     "ELAPSED_TIME,PROTOCOL,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE,BURST_SIZE,LOCAL_SEND_CALLS,LOCAL_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,"
     "LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT")
KV = ("hand-written after the netperf 2.7 manual, chapter 'The Omni Tests', sections 'Omni Output Selection' "
      "(-k keyval: one KEY=value line per selector) and 'Omni Output Selectors' (names, units)")
NOTCAP = "not a capture: netperf is not packaged on this machine; values are chosen to be self-consistent"
H = "10.0.0.2"
BASE = "netperf -P 0 -H %s -p 12865 -t %s -l 10 %s -c -C -- -k %s -P ,%d"


def w(name, argv, stdout, stderr="", code=0, source=KV, note=NOTCAP):
    for ext, text in ((".stdout", stdout), (".stderr", stderr), (".cmd", "%s\nexit=%d\n%s\n%s\n" % (argv, code, source, note))):
        with open(os.path.join(OUT, name + ext), "w") as f:
            f.write(text)


def kv(pairs):
    return "".join("%s=%s\n" % (k, v) for k, v in pairs)


def sd(util, kbytes_per_s):
    return "%.3f" % (util * 1e4 * 4 / kbytes_per_s)


def stream():
    el = 10.00
    # TCP_STREAM, 16 KiB sends; netserver received slightly less (in flight when the timer popped).
    calls, size = 715982, 16384
    lb = calls * size
    rb = lb - 65536 * 3
    lt, rt = lb * 8 / el / 1e6, rb * 8 / el / 1e6
    w("tcp_stream", BASE % (H, "TCP_STREAM", "-f m", S, 12866) + " -m 16384", kv([
        ("THROUGHPUT", "%.2f" % lt), ("THROUGHPUT_UNITS", "10^6bits/s"), ("LOCAL_SEND_THROUGHPUT", "%.2f" % lt), ("LOCAL_RECV_THROUGHPUT", "0.00"),
        ("REMOTE_SEND_THROUGHPUT", "0.00"), ("REMOTE_RECV_THROUGHPUT", "%.2f" % rt), ("ELAPSED_TIME", "%.2f" % el), ("PROTOCOL", "TCP"), ("DIRECTION", "Send"),
        ("LOCAL_SEND_SIZE", size), ("LOCAL_BYTES_SENT", lb), ("LOCAL_BYTES_RECVD", 0), ("REMOTE_BYTES_SENT", 0), ("REMOTE_BYTES_RECVD", rb),
        ("LOCAL_SEND_CALLS", calls), ("REMOTE_RECV_CALLS", 1402113), ("LOCAL_TRANSPORT_RETRANS", 27), ("REMOTE_TRANSPORT_RETRANS", 0),
        ("LOCAL_CPU_UTIL", "21.37"), ("REMOTE_CPU_UTIL", "25.04"), ("LOCAL_SD", sd(21.37, lt * 1e6 / 8 / 1024)), ("REMOTE_SD", sd(25.04, rt * 1e6 / 8 / 1024)),
        ("SD_UNITS", "usec/KB"), ("LOCAL_CPU_COUNT", 4), ("REMOTE_CPU_COUNT", 4)]))
    # TCP_MAERTS: netserver sends 64 KiB.
    calls, size = 190000, 65536
    rsb = calls * size
    lrb = rsb - 131072
    mt, st = lrb * 8 / el / 1e6, rsb * 8 / el / 1e6
    w("tcp_maerts", BASE % (H, "TCP_MAERTS", "-f m", S, 12866) + " -m ,65536", kv([
        ("THROUGHPUT", "%.2f" % mt), ("THROUGHPUT_UNITS", "10^6bits/s"), ("LOCAL_SEND_THROUGHPUT", "0.00"), ("LOCAL_RECV_THROUGHPUT", "%.2f" % mt),
        ("REMOTE_SEND_THROUGHPUT", "%.2f" % st), ("REMOTE_RECV_THROUGHPUT", "0.00"), ("ELAPSED_TIME", "10.00"), ("PROTOCOL", "TCP"), ("DIRECTION", "Recv"),
        ("LOCAL_SEND_SIZE", 0), ("LOCAL_BYTES_SENT", 0), ("LOCAL_BYTES_RECVD", lrb), ("REMOTE_BYTES_SENT", rsb), ("REMOTE_BYTES_RECVD", 0),
        ("LOCAL_SEND_CALLS", 0), ("REMOTE_RECV_CALLS", 0), ("LOCAL_TRANSPORT_RETRANS", 0), ("REMOTE_TRANSPORT_RETRANS", 112),
        ("LOCAL_CPU_UTIL", "30.12"), ("REMOTE_CPU_UTIL", "18.40"), ("LOCAL_SD", sd(30.12, mt * 1e6 / 8 / 1024)), ("REMOTE_SD", sd(18.40, st * 1e6 / 8 / 1024)),
        ("SD_UNITS", "usec/KB"), ("LOCAL_CPU_COUNT", 4), ("REMOTE_CPU_COUNT", 4)]))
    # UDP_STREAM, 1400-byte datagrams, some lost.
    sent, got, size = 1000000, 987654, 1400
    ust, urt = sent * size * 8 / el / 1e6, got * size * 8 / el / 1e6
    w("udp_stream", BASE % (H, "UDP_STREAM", "-f m", S, 12866) + " -m 1400 -R 1", kv([
        ("THROUGHPUT", "%.2f" % ust), ("THROUGHPUT_UNITS", "10^6bits/s"), ("LOCAL_SEND_THROUGHPUT", "%.2f" % ust), ("LOCAL_RECV_THROUGHPUT", "0.00"),
        ("REMOTE_SEND_THROUGHPUT", "0.00"), ("REMOTE_RECV_THROUGHPUT", "%.2f" % urt), ("ELAPSED_TIME", "10.00"), ("PROTOCOL", "UDP"), ("DIRECTION", "Send"),
        ("LOCAL_SEND_SIZE", size), ("LOCAL_BYTES_SENT", sent * size), ("LOCAL_BYTES_RECVD", 0), ("REMOTE_BYTES_SENT", 0), ("REMOTE_BYTES_RECVD", got * size),
        ("LOCAL_SEND_CALLS", sent), ("REMOTE_RECV_CALLS", got), ("LOCAL_TRANSPORT_RETRANS", -1), ("REMOTE_TRANSPORT_RETRANS", -1),
        ("LOCAL_CPU_UTIL", "26.50"), ("REMOTE_CPU_UTIL", "24.75"), ("LOCAL_SD", sd(26.50, ust * 1e6 / 8 / 1024)), ("REMOTE_SD", sd(24.75, urt * 1e6 / 8 / 1024)),
        ("SD_UNITS", "usec/KB"), ("LOCAL_CPU_COUNT", 4), ("REMOTE_CPU_COUNT", 4)]))


def rr(name, test, rate, burst, req, rsp, lat, retrans, extra, port=12866, cpu=(11.20, 12.90), proto="TCP", elapsed=10.00):
    calls = int(round(rate * elapsed))
    w(name, BASE % (H, test, "-j", R, port) + extra, kv([
        ("THROUGHPUT", "%.2f" % rate), ("THROUGHPUT_UNITS", "Trans/s"), ("TRANSACTION_RATE", "%.3f" % rate), ("RT_LATENCY", "%.3f" % ((burst + 1) * 1e6 / rate)),
        ("MIN_LATENCY", lat[0]), ("MEAN_LATENCY", "%.2f" % lat[1]), ("P50_LATENCY", lat[2]), ("P90_LATENCY", lat[3]), ("P99_LATENCY", lat[4]),
        ("MAX_LATENCY", lat[5]), ("STDDEV_LATENCY", "%.2f" % lat[6]),
        ("ELAPSED_TIME", "%.2f" % elapsed), ("PROTOCOL", proto), ("DIRECTION", "Send|Recv"), ("REQUEST_SIZE", req), ("RESPONSE_SIZE", rsp), ("BURST_SIZE", burst),
        ("LOCAL_SEND_CALLS", calls), ("LOCAL_RECV_CALLS", calls), ("LOCAL_TRANSPORT_RETRANS", retrans[0]), ("REMOTE_TRANSPORT_RETRANS", retrans[1]),
        ("LOCAL_CPU_UTIL", "%.2f" % cpu[0]), ("REMOTE_CPU_UTIL", "%.2f" % cpu[1]), ("LOCAL_SD", sd(cpu[0], rate)), ("REMOTE_SD", sd(cpu[1], rate)),
        ("SD_UNITS", "usec/Tran"), ("LOCAL_CPU_COUNT", 4), ("REMOTE_CPU_COUNT", 4)]))


def rrs():
    rr("tcp_rr", "TCP_RR", 10479.123, 0, 1, 1, (47, 95.30, 88, 112, 231, 4210, 38.71), (0, 0), "")
    rr("tcp_rr_flow0", "TCP_RR", 6012.440, 0, 64, 64, (52, 166.10, 150, 201, 402, 6033, 61.20), (1, 0), " -r 64,64", port=12866, cpu=(23.10, 24.80))
    rr("tcp_rr_flow1", "TCP_RR", 5890.017, 0, 64, 64, (49, 169.55, 152, 210, 455, 7120, 70.05), (0, 2), " -r 64,64", port=12867, cpu=(22.90, 25.00))
    rr("tcp_rr_burst", "TCP_RR", 72345.678, 8, 1, 1, (61, 123.90, 118, 140, 260, 3890, 30.12), (0, 0), " -b 8")
    rr("udp_rr", "UDP_RR", 11873.305, 0, 64, 1024, (44, 84.10, 79, 96, 170, 2874, 25.55), (-1, -1), " -r 64,1024", proto="UDP")
    rr("tcp_crr", "TCP_CRR", 3046.127, 0, 1, 1, (201, 327.80, 301, 402, 811, 9120, 110.40), (0, 0), "")


def others():
    rr_argv = BASE % (H, "TCP_RR", "-j", R, 12866)
    w("tcp_sendfile", "netperf -H 10.0.0.2 -p 12865 -t TCP_SENDFILE -l 10 -f m -- -P ,12866 -m 16384",
      "TCP SENDFILE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 (10.0.0.2) port 12866 AF_INET\n"
      "Recv   Send    Send                          \nSocket Socket  Message  Elapsed              \n"
      "Size   Size    Size     Time     Throughput  \nbytes  bytes   bytes    secs.    10^6bits/sec  \n\n"
      "131072  16384  16384    10.00    9311.04   \n",
      source="hand-written after the netperf 2.7 manual, section TCP_SENDFILE (classic bulk-transfer table; TCP_SENDFILE is not a migrated omni test)")
    w("refused", rr_argv,
      "establish control: are you sure there is a netserver listening on 10.0.0.2 at port 12865?\n"
      "establish_control could not establish the control connection from 0.0.0.0 port 0 address family AF_UNSPEC to 10.0.0.2 port 12865 address family AF_INET\n",
      code=255, source="hand-written after netperf 2.7 netlib.c establish_control_internal()/establish_control() (the messages the manual chapter "
                       "Address Resolution refers to); netperf exits with INVALID_SOCKET (-1)")
    w("data_timeout", rr_argv, "", stderr="netperf: send_omni: connect_data_socket failed: Connection timed out\n", code=1,
      source="hand-written after netperf 2.7 nettest_omni.c send_omni_inner(): perror() when the data connection cannot be made "
             "(e.g. a Service that carries the control port but not the data port)")
    with open(os.path.join(OUT, "tcp_stream.stdout")) as f:
        head = f.read().splitlines(True)
    w("truncated", "derived from tcp_stream.stdout (truncated: first 3 lines)", "".join(head[:3]), source="-", note="-")
    w("garbage", "derived from tcp_rr.stdout (garbage)", "Segmentation fault\n\x01\x02 not a report at all }{\n", code=139, source="-", note="-")
    with open(os.path.join(OUT, "tcp_rr.stdout"), "rb") as f:
        rrb = f.read()
    with open(os.path.join(OUT, "nonutf8.stdout"), "wb") as f:
        f.write(b"\xff\xfe\xfd bad bytes \xc0\xc1\n" + rrb[:60])
    w_meta("nonutf8", "derived from tcp_rr.stdout (nonutf8)")
    w("mizar_csv", "netperf -H np-s -l 60 -t TCP_RR -- -o min_latency,mean_latency,max_latency,stddev_latency,transaction_rate",
      "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to np-s () port 0 AF_INET : first burst 0\n"
      "Minimum Latency Microseconds,Mean Latency Microseconds,Maximum Latency Microseconds,Stddev Latency Microseconds,Transaction Rate Tran/s\n"
      "47,95.30,4210,38.71,10479.123\n",
      source="hand-written after the netperf 2.7 manual, section Omni Output Selection (-o CSV: banner, column titles, values) "
             "for the command of the Mizar procedure (seed 003)")
    w("k8s_netperf_stream", "netperf -H 10.131.0.21 -l 10 -t TCP_STREAM -- -k rt_latency,p99_latency,throughput,throughput_units,"
                            "remote_recv_calls,local_send_calls,local_transport_retrans -m 1024 -P 42424 -R 1",
      "MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.131.0.21 () port 42424 AF_INET\n"
      "RT_LATENCY=-1.000\nP99_LATENCY=3\nTHROUGHPUT=2702.23\nTHROUGHPUT_UNITS=10^6bits/s\nREMOTE_RECV_CALLS=1319419\nLOCAL_SEND_CALLS=329887\nLOCAL_TRANSPORT_RETRANS=15\n",
      source="hand-written after the netperf 2.7 manual, section Omni Output Selection (-k keyval with banner), for the selectors k8s-netperf requests (seed 000)")


def w_meta(name, first):
    with open(os.path.join(OUT, name + ".stderr"), "w") as f:
        f.write("")
    with open(os.path.join(OUT, name + ".cmd"), "w") as f:
        f.write("%s\nexit=0\n-\n-\n" % first)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    stream()
    rrs()
    others()
