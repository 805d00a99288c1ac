sh -c sockperf ping-pong --tcp -i 127.0.0.1 -p 47321 -t 2 -m 64 --mps 500 --full-rtt --full-log /tmp/tmp.qe1Y8emwlo/full.csv >/dev/null; rc=$?; cat /tmp/tmp.qe1Y8emwlo/full.csv; exit $rc
exit=0
sockperf, version 3.7-no.git
2026-11-28T18:39:22Z
