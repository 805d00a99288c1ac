uperf -m profile.xml -a -R -i 1 -P 20000
exit=1
hand-written after uperf src/master.c new_control_connection(): uperf_error("Error connecting to %s") then exit(1); shown on stderr
not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent
