#!/usr/bin/env bash
# The `profile` marker on the example suite's cuda branches (vector_add at N = 32M, far beyond the H200's 60 MB L2,
# and matmul at 1024^3), run on the device from the repository root. Writes to $OUT: profile.json and state.json of
# the run, every branch's ncu CSV (ncu_<case>__<branch>.csv, candidates for tests/data/profile/), the pytest log,
# and profile_summary.json (per branch: outcome, kernels counted/dropped, DRAM bytes vs bytes_moved, bound, the
# evidence that decided it (ncu's sm__throughput vs dram__throughput, or the time-based roofline), stop, budget).
set -uo pipefail
source tools/device/device_env.sh
OUT=${OUT:-/tmp/profile_check_out}; mkdir -p "$OUT"
W=/tmp/profile_check; rm -rf $W; mkdir -p $W
CASES=${CASES:-vector_add matmul}  # e.g. CASES=matmul for the compute-bound check alone
PYTEST_S=${PYTEST_S:-540}
for case in $CASES; do
  cp -r kernels/$case $W/$case
  printf '\npytestmark = [pytest.mark.profile(reason="tools/device/profile_check.sh")]\n' >> $W/$case/ref.py
done
which ncu > $OUT/ncu_version.txt 2>&1; ncu --version >> $OUT/ncu_version.txt 2>&1
(cd $W && timeout "$PYTEST_S" python3 -m pytest $CASES --dcuopt-toolchain cuda -k test_profile_cuda -rs \
   -p no:cacheprovider --dcuopt-run-dir=$W/run --dcuopt-cache-dir=$W/cache) > $OUT/pytest.log 2>&1
echo "pytest exit: $?" >> $OUT/pytest.log; tail -25 $OUT/pytest.log
cp $W/run/profile.json $W/run/state.json "$OUT"/ 2>/dev/null
for dir in $W/run/profile/*/; do
  name=$(basename "$dir"); [ -f "$dir/ncu.csv" ] && cp "$dir/ncu.csv" "$OUT/ncu_${name}.csv"
done
python3 - "$W/run/profile.json" > "$OUT/profile_summary.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rows = []
for e in report["profiles"]:
    roof = e.get("roofline") or {}
    rows.append({"branch": f"{e['case']}/{e['branch']}", "outcome": e["outcome"], "reason": e.get("reason", "")[:400],
                 "counted": [k["kernel"] for k in (e.get("kernels") or {}).get("counted", [])],
                 "dropped": (e.get("kernels") or {}).get("dropped"), "model_check": e.get("model_check"),
                 "bound": roof.get("bound"), "evidence": roof.get("evidence"), "decided_by": roof.get("decided_by"),
                 "stop": roof.get("stop"), "budget": roof.get("budget"),
                 "utilization": roof.get("utilization"), "top": [t["name"] for t in e.get("top", [])],
                 "command": [r["command"] for r in e.get("runs", [])]})
print(json.dumps({"made_by": "tools/device/profile_check.sh", "profiles": rows}, indent=2))
PY
cat "$OUT/profile_summary.json" | head -80
