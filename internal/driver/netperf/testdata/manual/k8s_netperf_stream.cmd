netperf -H 10.131.0.21 -l 10 -t TCP_STREAM -- -k rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,local_send_calls,local_transport_retrans -m 1024 -P 42424 -R 1
exit=0
hand-written after the netperf 2.7 manual, section Omni Output Selection (-k keyval with banner), for the selectors k8s-netperf requests (seed 000)
not a capture: netperf is not packaged on this machine; values are chosen to be self-consistent
