#!/usr/bin/env bash
# The shipped calibration's effect on 5-20 us kernels over fresh processes, against one ncu run.
set -uo pipefail
source tools/device/device_env.sh
W=/tmp/s; mkdir -p $W
for i in 1 2 3 4 5; do timeout 60 python3 tools/device/bracket_probe.py spread --cache $W/cache --out $OUT/spread$i.json; done
timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o $W/ncu \
  python3 tools/device/bracket_probe.py ncu-target --spread --cache $W/cache --out $OUT/spread-seq.json > $W/ncu.log 2>&1
ncu --import $W/ncu.ncu-rep --csv --print-units base > $OUT/spread-ncu.csv; tail -2 $W/ncu.log
