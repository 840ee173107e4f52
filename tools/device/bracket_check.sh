#!/usr/bin/env bash
# Calibration spread (4 processes x 3 fresh backends) and the size sweep's fidelity against ncu, with the
# final calibration settings; run on the device from the repository root, run 1's state.json as the suite.
set -uo pipefail
source tools/device/device_env.sh
W=/tmp/c; mkdir -p $W; EV="python3 tools/device/h200_evidence.py"
# run 1's state.json is kept in the main evidence set's archive (docs/evidence/README.md)
tar -xJf docs/evidence/h200/raw.tar.xz -C $W runs/run1.state.json; S=$W/runs/run1.state.json
python3 tools/device/h200_evidence.py prebuild --cache $W/cache > $OUT/prebuild.log 2>&1
for i in 1 2 3 4; do timeout 60 python3 tools/device/bracket_probe.py calibrate --reps 3 --samples 400 --out $OUT/calibrate$i.json; done
timeout 150 $EV extras --state $S --cache $W/cache --out $OUT/extras.json > $OUT/extras.log 2>&1; tail -3 $OUT/extras.log
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o $W/ncu $EV ncu-target --state $S --cache $W/cache --out $OUT/ncu-seq.json > $W/ncu.log 2>&1
ncu --import $W/ncu.ncu-rep --csv --print-units base > $OUT/ncu.csv
$EV fidelity --state $S --ncu $OUT/ncu.csv --seq $OUT/ncu-seq.json --extras $OUT/extras.json --out $OUT/fidelity.json
