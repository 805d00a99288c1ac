netperf -H np-s -l 60 -t TCP_RR -- -o min_latency,mean_latency,max_latency,stddev_latency,transaction_rate
exit=0
hand-written after the netperf 2.7 manual, section Omni Output Selection (-o CSV: banner, column titles, values) for the command of the Mizar procedure (seed 003)
not a capture: netperf is not packaged on this machine; values are chosen to be self-consistent
