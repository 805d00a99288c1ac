derived from tcp_lat_m64.stdout (garbage)
exit=0
-
2026-11-21T06:22:26Z
