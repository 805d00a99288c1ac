iperf -c 127.0.0.1 -p 47331 -e -t 1
exit=0
iperf version 2.1.8 (12 August 2022) pthreads
2026-11-21T06:21:59Z
