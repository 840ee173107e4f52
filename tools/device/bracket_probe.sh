#!/usr/bin/env bash
# What an event pair adds to a kernel's time, against ncu (bracket_probe.py measure + ncu-target).
set -uo pipefail
source tools/device/device_env.sh
W=/tmp/p; mkdir -p $W
python3 tools/device/h200_evidence.py prebuild --cache $W/cache > $OUT/prebuild.log 2>&1; tail -3 $OUT/prebuild.log
timeout 200 python3 tools/device/bracket_probe.py measure --cache $W/cache --out $OUT/probe.json 2>&1 | tee $OUT/measure.log
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o $W/ncu python3 tools/device/bracket_probe.py ncu-target --cache $W/cache --out $OUT/probe-seq.json > $OUT/ncu.log 2>&1; tail -3 $OUT/ncu.log
ncu --import $W/ncu.ncu-rep --csv --print-units base > $OUT/probe-ncu.csv; wc -l $OUT/probe-ncu.csv
