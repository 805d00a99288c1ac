sh -c uperf -m profile.xml -a -R -i 1 -P 47361 -X history; rc=$?; echo '### cnperf: uperf -X history'; cat history; exit $rc
exit=0
Uperf Version 1.0.8
2026-11-26T09:54:54Z
