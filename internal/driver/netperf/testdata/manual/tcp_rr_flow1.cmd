netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_RR -l 10 -j -c -C -- -k THROUGHPUT,THROUGHPUT_UNITS,TRANSACTION_RATE,RT_LATENCY,MIN_LATENCY,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,STDDEV_LATENCY,ELAPSED_TIME,PROTOCOL,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE,BURST_SIZE,LOCAL_SEND_CALLS,LOCAL_RECV_CALLS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT -P ,12867 -r 64,64
exit=0
hand-written after the netperf 2.7 manual, chapter 'The Omni Tests', sections 'Omni Output Selection' (-k keyval: one KEY=value line per selector) and 'Omni Output Selectors' (names, units)
not a capture: netperf is not packaged on this machine; values are chosen to be self-consistent
