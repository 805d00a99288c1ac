netperf -H 127.0.0.1 -p 47399 -t TCP_STREAM -l 1
exit=255
Netperf version 2.7.1
2026-11-26T10:02:08Z
