derived from tcp_rr.stdout (nonutf8)
exit=0
-
-
