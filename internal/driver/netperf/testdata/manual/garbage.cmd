derived from tcp_rr.stdout (garbage)
exit=139
-
-
