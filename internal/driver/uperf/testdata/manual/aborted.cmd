uperf -m profile.xml -a -R -i 1 -P 20000
exit=1
hand-written after uperf src/master.c master_poll() ("*** Slave aborted! ***") and master() ("WARNING: Errors detected during run", exit 1)
not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent
