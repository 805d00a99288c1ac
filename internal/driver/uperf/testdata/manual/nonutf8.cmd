derived from tcp_stream.stdout (nonutf8)
exit=0
-
-
