netperf -H 127.0.0.1 -p 47341 -t TCP_RR -l -1
exit=0
Netperf version 2.7.1
2026-11-28T19:12:39Z
