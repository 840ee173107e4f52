#!/usr/bin/env bash
# The adversarial corpus's CUDA twins on one NVIDIA GPU: every cheat must be caught or flagged and never crowned,
# every honest control correct and unflagged.
#
#   bash tools/device/adversarial_cuda.sh
#
# Copies the cases of tests/data/adversarial that have .cu kernels (series, matmul) to $W/cases, runs pytest on them
# with --dcuopt-toolchain cuda (10 Hypothesis examples, 0.5 s of sampling per branch, the default A/B rounds), and
# prints one line per branch: expected (cheat / honest), correct, caught (the reason), implausible, champion, beats
# baseline, speedup, and OK or WRONG against what the corpus table (tests/data/adversarial/corpus.py) asks.
# $OUT gets adversarial_cuda.md (that table), state.json and the pytest log.
# Needs python3 with CUDA torch, pytest, pytest-benchmark, hypothesis, numpy, and the plugin's own dependencies
# xxhash (imported by every run) and jsonschema (state.json's validation; without it state.json is still written,
# with `validation_error` set): wheels of missing ones go in .whl/ (tools/device/device_env.sh installs them).
# TOOLCHAIN=cpu runs the same cases' kernel.cpp branches instead (a dry run of the script on any machine).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/adversarial-out}
W=${W:-/tmp/adversarial}
TIMEOUT_S=${TIMEOUT_S:-540}
TOOLCHAIN=${TOOLCHAIN:-cuda}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=${PY:-python3}

missing=$($PY - <<'PYEOF'
import importlib.util
need = ["torch", "pytest", "pytest_benchmark", "hypothesis", "numpy", "xxhash"]
print(" ".join(name for name in need if importlib.util.find_spec(name) is None))
PYEOF
)
if [ -n "$missing" ]; then
  echo "missing Python packages: $missing (pip download them into .whl/ on a machine with network access)"; exit 2
fi
$PY -c "import jsonschema" 2>/dev/null || echo "note: jsonschema is not installed: state.json is written unvalidated"
if [ "$TOOLCHAIN" = cuda ]; then
  $PY -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" || { echo "torch sees no CUDA GPU"; exit 2; }
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -n 1
fi

rm -rf "$W/cases" && mkdir -p "$W/cases"
for case in series matmul; do cp -r "tests/data/adversarial/$case" "$W/cases/"; done
touch "$W/cases/.adversarial-copy"
START=$SECONDS
(cd "$W/cases" && timeout "$TIMEOUT_S" $PY -m pytest series matmul --dcuopt-toolchain="$TOOLCHAIN" \
  --dcuopt-cache-dir="$W/cache" --dcuopt-run-dir="$W/run" --dcuopt-max-time=0.5 --dcuopt-min-samples=5 \
  --dcuopt-warmup=0.05 --dcuopt-examples=10 -p no:cacheprovider -q) > "$W/pytest.log" 2>&1
echo "pytest: exit $? after $((SECONDS - START)) s"; tail -n 5 "$W/pytest.log"
cp "$W/pytest.log" "$OUT/" 2>/dev/null; cp "$W/run/state.json" "$OUT/" 2>/dev/null

$PY - "$W/run/state.json" "$OUT/adversarial_cuda.md" "$TOOLCHAIN" <<'PYEOF'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("adversarial_corpus", "tests/data/adversarial/corpus.py")
corpus = importlib.util.module_from_spec(spec); sys.modules[spec.name] = corpus; spec.loader.exec_module(corpus)
state, toolchain = json.load(open(sys.argv[1])), sys.argv[3]
rows = ["| branch | kind | known open | correct | caught | implausible | champion | beats | speedup | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|"]
wrong = 0
for entry in (e for e in corpus.CORPUS if e.toolchain == toolchain and e.case in ("series", "matmul")):
    found, champion = corpus.records(state, entry.case, toolchain)
    v = corpus.judge(found.get(entry.branch), entry.branch, champion)
    if entry.honest:
        ok = v["correct"] is True and not v["caught"] and not v["implausible"] and (v["beats"] or not entry.faster)
    else:
        ok = corpus.stopped(v)
    known = not ok and not entry.honest and entry.open_now is not None and not v["champion"] and not v["beats"]
    wrong += not ok and not known
    rows.append(f"| {entry.case}/{entry.branch} | {entry.kind} | {'yes' if entry.open_now else '-'} | {v['correct']} | "
                f"{v['reason'][:70] or '-'} | {v['implausible']} | {v['champion']} | {v['beats']} | "
                f"{v['speedup']} | {'OK' if ok else 'OPEN (known, not crowned)' if known else 'WRONG'} |")
rows.append(f"\n{wrong} of {len(rows) - 2} branches not as the corpus table asks (a known open one that is neither "
            "crowned nor said to beat the baseline is not counted)")
open(sys.argv[2], "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PYEOF
