#!/usr/bin/env bash
# Several device scripts in one device call, each with its own cap and output folder, everything packed into one
# archive (a device call returns a limited number of files):
#   bash tools/device/round.sh NAME:CAP_S:'command' [NAME:CAP_S:'command' ...]
# e.g.  bash tools/device/round.sh reliability:110:'bash tools/device/reliability_check.sh'
# $OUT gets parts.txt (exit status and time per part), every part's *.md summaries (prefixed with the part's name)
# and round.tgz (each part's whole output folder and console log).
set -uo pipefail
OUT=${OUT:-/tmp/round}; mkdir -p "$OUT"
R=/tmp/round-parts; rm -rf "$R"; mkdir -p "$R"
START=$SECONDS
for spec in "$@"; do
  name=${spec%%:*}; rest=${spec#*:}; cap=${rest%%:*}; command=${rest#*:}
  mkdir -p "$R/$name"
  begin=$SECONDS
  OUT="$R/$name" timeout "$cap" bash -c "$command" > "$R/$name/console.log" 2>&1
  echo "$name: exit $?, $((SECONDS - begin)) s (at $((SECONDS - START)) s)" | tee -a "$OUT/parts.txt"
  tail -n 15 "$R/$name/console.log"
  for md in "$R/$name"/*.md; do [ -f "$md" ] && cp "$md" "$OUT/${name}__$(basename "$md")"; done
  tar -C "$R" -czf "$OUT/round.tgz" . 2>/dev/null
done
echo "total $((SECONDS - START)) s"
