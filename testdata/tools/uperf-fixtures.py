#!/usr/bin/env python3
"""Write the uperf parser fixtures (internal/driver/uperf/testdata/manual).

uperf is not packaged on the machine cnperf is developed on, so its fixtures are written, not
captured. This script writes them with uperf's own printf formats (src/print.c print_summary
raw line, print_average, print_goodbye_stat; src/numbers.c adaptive_print_time and
decimal_to_string; src/stats.c flush_history) so every number is self-consistent. Run it from
anywhere; it rewrites the directory's uperf fixtures.
"""
import os, random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "driver", "uperf", "testdata", "manual")
SRC = ("hand-written (testdata/tools/uperf-fixtures.py) after uperf's manual ('Default uperf output'; usage -a -R -i -X) "
       "and the printf formats of uperf src/print.c, src/numbers.c and src/stats.c")
NOTCAP = "not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent"
LINE = "-" * 79 + "\n"
MARK = "### cnperf: uperf -X history\n"
T0 = 1767322800000.0


def tfmt(ns, width):  # numbers.c adaptive_print_time
    v, idx, pre = float(ns), 0, "num"
    while v >= 1000.0 and idx < 3:
        idx += 1
        v /= 1000.0
    s = ("%%%d.2fs" % (width - 1)) % v if idx == 3 else ("%%%d.2f%%cs" % (width - 2)) % (v, pre[idx])
    return "%*s " % (width, s)


def dec(v, is_bit):  # numbers.c decimal_to_string
    suf, pos, div = " KMGTPEZ", 0, 1000.0 if is_bit else 1024.0
    if v == 0:
        return "0"
    while v > div and pos < 8:
        v /= div
        pos += 1
    if is_bit:
        return ("%.2fb/s" % v) if pos == 0 else ("%.2f%cb/s" % (v, suf[pos]))
    return ("%.2fB" % v) if pos == 0 else ("%.2f%cB" % (v, suf[pos]))


def raw(ts, name, b, o):  # print.c print_summary with -R
    return "timestamp_ms:%.4f name:%s nr_bytes:%d nr_ops:%d\n" % (ts, name, b, o)


def goodbye(host, elapsed_ns, bytes_, ops, err=0.0):  # print.c print_goodbye_stat
    thro = (bytes_ * 8) / (elapsed_ns / 1e9)
    return "%-15.15s " % host + tfmt(elapsed_ns, 8) + "%10s " % dec(bytes_, 0) + "%12s " % dec(thro, 1) + "%12d %11.2f\n" % (ops, err)


def avg(name, count, avg_ns, max_ns, min_ns):  # print.c print_average
    return "%-15s %8d " % (name, count) + tfmt(avg_ns, 11) + "%11s " % "0.00ns" + tfmt(max_ns, 11) + tfmt(min_ns, 11) + "\n"


def write(name, argv, out, err="", code=0, src=SRC):
    with open(os.path.join(OUT, name + ".stdout"), "w") as f:
        f.write(out)
    with open(os.path.join(OUT, name + ".stderr"), "w") as f:
        f.write(err)
    with open(os.path.join(OUT, name + ".cmd"), "w") as f:
        f.write("%s\nexit=%d\n%s\n%s\n" % (argv, code, src, NOTCAP))


def run(profile, threads, per_second, size, slave_ops=None, flowops=None, history=""):
    """A 3-second run: Txn1 (connect), Txn2 (measured) with per-second op counts, Txn3."""
    out = ["Starting %d threads running profile:cnperf-%s ...   0.00 seconds\n" % (threads, profile)]
    ts = T0 + 0.8123
    out.append(raw(ts, "Txn1", 0, threads))
    ops = 0
    for i, n in enumerate(per_second):
        ops += n
        ts += 1000.4 + i * 0.1
        out.append(raw(ts, "Txn2", ops * size, ops))
    end = ts
    out.append(raw(end + 0.21, "Txn3", 0, threads))
    total_ops = ops + 2 * threads
    out.append("\n" + LINE + raw(end + 0.30, "cnperf-" + profile, ops * size, total_ops))
    out.append("\nGroup Details\n" + LINE + raw(end + 0.31, "Group0", ops * size, total_ops) + "\n")
    out.append("\nStrand Details\n" + LINE)
    for t in range(threads):
        out.append(raw(end + 0.32, "Thr%d" % t, ops * size // threads, total_ops // threads))
    out.append("\n\n%-15s %s\n" % ("Txn", "   Count         avg         cpu         max         min ") + LINE)
    out.append(avg("Txn0", threads, 102310, 104000, 101000) + avg("Txn1", threads, 3001200000, 3001300000, 3001100000) + avg("Txn2", threads, 31200, 32000, 30500) + "\n")
    out.append("\n%-15s %s\n" % ("Flowop", "   Count         avg         cpu         max         min ") + LINE)
    for name, count, a, mx, mn in flowops or []:
        out.append(avg(name, count, a, mx, mn))
    out.append("\n\nNetstat statistics for this run\n" + LINE + "Nic       opkts/s     ipkts/s      obits/s      ibits/s\neth0        61420       30711        9.43G      16.21M\n" + LINE)
    el = int(3001.9e6)
    out.append("\nRun Statistics\nHostname            Time       Data   Throughput   Operations      Errors\n" + LINE)
    sops = total_ops if slave_ops is None else slave_ops
    out.append(goodbye("10.0.0.2", el, sops * size, sops))
    out.append(goodbye("master", el, ops * size, total_ops))
    out.append(LINE + "%-15s %7.2f%% %9.2f%% %11.2f%% %11.2f%% %10.2f%%\n\n" % ("Difference(%)", 0, 0, 0, 0, 0))
    return "".join(out) + history


def history(threads, transactions, seed):
    """src/stats.c flush_history lines: per strand connect, (write, read)*n, disconnect."""
    rnd = random.Random(seed)
    lines = []
    for t in range(threads):
        tid = 140000 + t
        now = int(T0 * 1e6) + 812300000
        def rec(delta):
            nonlocal now
            now += delta
            lines.append("%6d %6d %2d %15d %15d\n" % (4242, tid, 3, now, delta))
        rec(101200)  # connect
        for _ in range(transactions):
            rec(rnd.randint(3000, 5000))       # write
            rtt_rest = rnd.choice([25000] * 90 + [40000] * 9 + [900000])
            rec(rtt_rest + rnd.randint(0, 2000))  # read: waits for the response
        rec(30100)  # disconnect
    return MARK + "".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    uperf = "uperf -m profile.xml -a -R -i 1 -P 20000"
    write("tcp_stream", uperf, run("TCP_STREAM", 1, [18005, 18027, 18008], 65536,
          flowops=[("connect", 1, 101200, 101200, 101200), ("write", 54040, 55530, 2104000, 9100), ("disconnect", 1, 30100, 30100, 30100)]))
    write("tcp_maerts", uperf, run("TCP_MAERTS", 2, [31002, 30990, 31050], 65536,
          flowops=[("connect", 2, 101200, 103000, 99000), ("read", 93042, 64500, 3300000, 2100), ("disconnect", 2, 30100, 31000, 29000)]))
    # UDP: the slave counted fewer operations than the master sent.
    sent = 90000 + 90500 + 89700
    write("udp_stream", uperf, run("UDP_STREAM", 1, [90000, 90500, 89700], 1024, slave_ops=(sent + 2) * 97 // 100,
          flowops=[("connect", 1, 81200, 81200, 81200), ("write", sent, 11100, 802000, 4100), ("disconnect", 1, 20100, 20100, 20100)]))
    # RR: two threads; 2 flowops (write, read) per transaction.
    write("tcp_rr", uperf, run("TCP_RR", 2, [2 * 30001, 2 * 29995, 2 * 30010], 1,
          flowops=[("connect", 2, 101200, 103000, 99000), ("write", 90006, 4100, 61000, 3000), ("read", 90006, 62400, 903000, 24000), ("disconnect", 2, 30100, 31000, 29000)]))
    write("tcp_rr_history", uperf + " -X history", run("TCP_RR", 2, [2 * 300, 2 * 310, 2 * 290], 64, history=history(2, 450, 11),
          flowops=[("connect", 2, 101200, 103000, 99000), ("write", 1800, 4100, 61000, 3000), ("read", 1800, 62400, 903000, 24000), ("disconnect", 2, 30100, 31000, 29000)]))
    # Failures.
    write("refused", uperf, "", err="Error connecting to 10.0.0.2\n", code=1,
          src="hand-written after uperf src/master.c new_control_connection(): uperf_error(\"Error connecting to %s\") then exit(1); shown on stderr")
    aborted = "Starting 1 threads running profile:cnperf-TCP_STREAM ...   0.00 seconds\n" + raw(T0 + 0.8, "Txn1", 0, 1) + raw(T0 + 1001.1, "Txn2", 1179975680, 18005) + \
        "\n*** Slave aborted! ***\n\nWARNING: Errors detected during run\n"
    write("aborted", uperf, aborted, code=1,
          src="hand-written after uperf src/master.c master_poll() (\"*** Slave aborted! ***\") and master() (\"WARNING: Errors detected during run\", exit 1)")
    full = run("TCP_STREAM", 1, [18005, 18027, 18008], 65536)
    write("truncated", "derived from tcp_stream.stdout (truncated after the first Txn2 line)", "".join(full.splitlines(True)[:3]), src="-")
    write("garbage", "derived from tcp_stream.stdout (garbage)", "Segmentation fault\n\x01\x02 not a report at all }{\n", code=139, src="-")
    with open(os.path.join(OUT, "nonutf8.stdout"), "wb") as f:
        f.write(b"\xff\xfe\xfd bad bytes \xc0\xc1\n" + full.encode()[:150])
    with open(os.path.join(OUT, "nonutf8.stderr"), "w") as f:
        f.write("")
    with open(os.path.join(OUT, "nonutf8.cmd"), "w") as f:
        f.write("derived from tcp_stream.stdout (nonutf8)\nexit=0\n-\n-\n")


if __name__ == "__main__":
    main()
