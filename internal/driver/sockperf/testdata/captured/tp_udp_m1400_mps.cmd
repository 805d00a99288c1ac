sockperf throughput -i 127.0.0.1 -p 47321 -t 2 -m 1400 --mps 20000
exit=0
sockperf, version 3.7-no.git
2026-11-21T06:21:40Z
