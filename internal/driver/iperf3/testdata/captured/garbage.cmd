derived from tcp_stream.stdout (garbage)
exit=0
-
2026-11-21T06:20:43Z
