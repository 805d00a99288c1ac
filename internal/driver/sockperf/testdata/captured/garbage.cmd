derived from pp_tcp_m64_fullrtt.stdout (garbage)
exit=0
-
2026-11-21T06:21:56Z
