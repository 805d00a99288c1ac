netperf -P 0 -H 127.0.0.1 -p 47341 -t UDP_RR -l 1
exit=0
Netperf version 2.7.1
2026-11-26T10:01:41Z
