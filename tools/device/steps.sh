# Sourced by the device scripts (from the repository root) after they set BUDGET_S, START, W and define `pack`:
#   left                        seconds of the script's budget still unused
#   step NAME MAX_SECONDS cmd   runs cmd when at least STEP_MIN_S (default 15; at most MAX_SECONDS) seconds are left,
#                               capped at MAX_SECONDS
#                               and at what is left; logs to $W/NAME.log, appends its exit status and time to
#                               $W/steps.txt, prints the log's last STEP_TAIL (default 20) lines, then calls `pack`,
#                               so a run cut short still returns what it finished.
left() { echo $((BUDGET_S - (SECONDS - START))); }
step() {
  local name=$1 max=$2; shift 2
  local budget need=${STEP_MIN_S:-15}; budget=$(left)
  [ "$budget" -gt "$max" ] && budget=$max
  [ "$need" -gt "$max" ] && need=$max  # a step capped below the minimum runs when its own cap is left
  if [ "$budget" -lt "$need" ]; then
    echo "=== $name: SKIPPED, $(left) s left" | tee -a "$W/steps.txt"; return
  fi
  echo "=== $name (limit ${budget} s, at $((SECONDS - START)) s)"
  timeout "$budget" "$@" > "$W/$name.log" 2>&1
  echo "--- $name: exit $? after $((SECONDS - START)) s" | tee -a "$W/steps.txt"; tail -n "${STEP_TAIL:-20}" "$W/$name.log"
  pack
}
