timeout -s INT 1.5 netperf -H 127.0.0.1 -p 47341 -t TCP_RR -l 5
exit=124
Netperf version 2.7.1
2026-11-26T10:02:08Z
