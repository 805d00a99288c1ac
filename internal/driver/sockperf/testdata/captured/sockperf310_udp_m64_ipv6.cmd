sockperf ping-pong -i ::1 -p 47322 -t 2 -m 64 --full-rtt
exit=0
sockperf, version 3.10-no.git
2026-11-29T05:25:55Z
