uperf -m profile.xml -a -R -i 1 -P 47399
exit=1
Uperf Version 1.0.8
2026-11-26T09:55:35Z
