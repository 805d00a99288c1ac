netperf -H 127.0.0.1 -p 47341 -l 1 -t TCP_RR -- -o min_latency,mean_latency,max_latency,stddev_latency,transaction_rate
exit=0
Netperf version 2.7.1
2026-11-26T10:02:04Z
