iperf3 -c 127.0.0.1 -p 47399 -J -t 1
exit=0
iperf 3.12 (cJSON 1.7.15)
2026-11-28T19:12:38Z
