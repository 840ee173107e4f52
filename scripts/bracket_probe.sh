set -uo pipefail
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export PYTHONPATH="$PWD:$PYTHONPATH"
export DCUOPT_HIP_INCLUDE="$PWD/.carry/hip-include"
W=/tmp/p; mkdir -p $W
python3 scripts/h200_evidence.py prebuild --cache $W/cache > $OUT/prebuild.log 2>&1; tail -3 $OUT/prebuild.log
timeout 200 python3 scripts/bracket_probe.py measure --cache $W/cache --out $OUT/probe.json 2>&1 | tee $OUT/measure.log
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o $W/ncu python3 scripts/bracket_probe.py ncu-target --cache $W/cache --out $OUT/probe-seq.json > $OUT/ncu.log 2>&1; tail -3 $OUT/ncu.log
ncu --import $W/ncu.ncu-rep --csv --print-units base > $OUT/probe-ncu.csv; wc -l $OUT/probe-ncu.csv
