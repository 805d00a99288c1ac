qperf 127.0.0.1 -lp 47311 -ip 47312 -t 1 -m 64 -vv -uu -un -e 6 tcp_lat
exit=0
qperf 0.4.11
2026-11-21T06:22:08Z
