derived from tcp_stream.stdout (truncated after the first Txn2 line)
exit=0
-
not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent
