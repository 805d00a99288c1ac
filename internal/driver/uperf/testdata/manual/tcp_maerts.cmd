uperf -m profile.xml -a -R -i 1 -P 20000
exit=0
hand-written (testdata/tools/uperf-fixtures.py) after uperf's manual ('Default uperf output'; usage -a -R -i -X) and the printf formats of uperf src/print.c, src/numbers.c and src/stats.c
not a capture: uperf is not packaged on this machine; values are chosen to be self-consistent
