derived from tcp_stream_p1.stdout (nonutf8)
exit=0
-
2026-11-26T09:55:35Z
