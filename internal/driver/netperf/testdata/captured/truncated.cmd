derived from tcp_rr.stdout (truncated)
exit=0
-
2026-11-26T10:02:08Z
