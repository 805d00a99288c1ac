derived from tcp_stream.stdout (garbage)
exit=139
-
not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent
