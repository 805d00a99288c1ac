uperf -m profile.xml -a -R -i 1 -P 47361
exit=0
Uperf Version 1.0.8
2026-11-28T19:00:44Z
