netperf -H 127.0.0.1 -p 47341 -l 1 -t TCP_STREAM -- -k rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,local_send_calls,local_transport_retrans -m 1024 -P ,47342 -R 1
exit=0
Netperf version 2.7.1
2026-11-26T10:02:05Z
