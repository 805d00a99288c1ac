timeout -s TERM 3 iperf3 -c 127.0.0.1 -p 47391 -J -t 1
exit=124
iperf 3.12 (cJSON 1.7.15)
2026-11-21T06:20:43Z
