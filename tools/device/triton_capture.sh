#!/usr/bin/env bash
# On one CUDA GPU (an H200): the `dcuopt triton` workflow end to end on a small torch.compile model.
#
#   bash tools/device/triton_capture.sh
#
# capture (max-autotune, TORCH_LOGS=+inductor, TORCHINDUCTOR_TRACE=1, the capture hook) -> summarize -> pick the
# slowest tuned kernel -> collect its Inductor artifacts -> scan its SASS -> inspect its TTIR -> run it standalone
# (device timing) -> report with the eager-fallback timing (model compiled vs `norm` under torch._dynamo.disable)
# -> to-case. The model is tools/device/triton_capture.py. $OUT gets the small outputs (JSON/Markdown, the capture
# records without their inputs) and triton_capture.tgz (logs, the collected artifacts). Everything is packed after
# each step, so a run cut short still returns what it finished. Designed to end within 240 s (BUDGET_S).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/triton-capture-out}
W=${W:-/tmp/triton-capture}
BUDGET_S=${BUDGET_S:-230}
mkdir -p "$OUT" && rm -rf "$W" && mkdir -p "$W"
source tools/device/device_env.sh
PY=python3
REPO=$PWD
DCUOPT="$PY -m pytest_dcuopt.cli.main triton"
HELP="$PY $REPO/tools/device/triton_capture.py"
export TORCHINDUCTOR_CACHE_DIR="$W/cap/inductor-cache"
START=$SECONDS

pack() {
  tar -C "$W" -czf "$OUT/triton_capture.tgz" --exclude=./cap/inductor-cache --exclude=./cap/debug --exclude='*.pt' \
    --exclude='*.llir' . 2>/dev/null
  $HELP shrink "$W" "$OUT" > /dev/null 2>&1
}
STEP_MIN_S=10 STEP_TAIL=12
source tools/device/steps.sh  # left, step

step capture 80 $DCUOPT capture --out "$W/cap" --timeout 75 -- $PY "$REPO/tools/device/triton_capture.py"
step summarize 10 $DCUOPT summarize "$W/cap" "$W/cap/inductor.log" --json "$W/autotune_summary.json" \
     --markdown "$W/autotune_summary.md"
read -r KERNEL FOLDER < <($HELP pick "$W/cap" 2>/dev/null) || true
echo "hot kernel: ${KERNEL:-none} (${FOLDER:-no capture folder})"
if [ -n "${KERNEL:-}" ]; then
  step collect 10 $DCUOPT collect --cache "$W/cap/inductor-cache" --kernel "$KERNEL" --log "$W/cap/inductor.log" \
       --out "$W/art"
  SCAN_DIR="$W/art/best"; [ -d "$SCAN_DIR" ] || SCAN_DIR="$W/art"  # the winner's build, else every variant
  step scan 15 $DCUOPT scan "$SCAN_DIR" --kernel "$KERNEL" --json "$W/isa_scan.json"
  step inspect 20 $DCUOPT inspect "$FOLDER/kernel.py" --json "$W/meta.json"
  step run 25 $DCUOPT run "$FOLDER" --max-time 1
  [ -f "$FOLDER/run.json" ] && cp "$FOLDER/run.json" "$W/run.json"
  RUN_ARG=(); [ -f "$W/run.json" ] && RUN_ARG=(--run "$W/run.json")
  step report 60 $DCUOPT report --kernel "$KERNEL" --summary "$W/autotune_summary.json" --inspect "$W/meta.json" \
       --scan "$W/isa_scan.json" "${RUN_ARG[@]}" --fallback "$REPO/tools/device/triton_capture.py" --out "$W/report.md"
  step to-case 20 bash -c "$DCUOPT to-case '$FOLDER' --out '$W/case' > '$W/case.txt'"
fi
step env 15 $DCUOPT env --json "$W/env.json"
pack
echo "done after $((SECONDS - START)) s; outputs in $OUT: $(ls "$OUT" | tr '\n' ' ')"
