derived from tcp_stream.stdout (truncated: first 3 lines)
exit=0
-
-
