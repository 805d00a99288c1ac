netperf -H 10.0.0.2 -p 12865 -t TCP_SENDFILE -l 10 -f m -- -P ,12866 -m 16384
exit=0
hand-written after the netperf 2.7 manual, section TCP_SENDFILE (classic bulk-transfer table; TCP_SENDFILE is not a migrated omni test)
not a capture: netperf is not packaged on this machine; values are chosen to be self-consistent
