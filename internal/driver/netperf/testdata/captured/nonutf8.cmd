derived from tcp_rr.stdout (nonutf8)
exit=0
-
2026-11-26T10:02:08Z
