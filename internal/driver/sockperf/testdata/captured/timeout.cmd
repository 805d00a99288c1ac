timeout -s TERM 4 sockperf ping-pong --tcp -i 127.0.0.1 -p 47391 -t 1 -m 64 --full-rtt
exit=0
sockperf, version 3.7-no.git
2026-11-21T06:21:56Z
