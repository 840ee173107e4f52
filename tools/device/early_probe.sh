#!/usr/bin/env bash
# Early H200 probe: (1) the sync-solve kernel under several sample protocols + ncu, (2) raw TorchInductor output of a
# small torch.compile model under max-autotune (for the `dcuopt triton` fixtures).
set -uo pipefail
source tools/device/device_env.sh
OUT=${OUT:-/tmp/early}; mkdir -p "$OUT"; W=/tmp/early-w; rm -rf $W; mkdir -p $W
step() { local name=$1 limit=$2; shift 2; local b=$SECONDS; timeout "$limit" "$@" > "$W/$name.log" 2>&1; echo "$name: exit $?, $((SECONDS-b)) s" | tee -a $OUT/steps.txt; tail -n 30 "$W/$name.log"; }
step probe 120 python3 tools/device/sync_probe.py --case tests/data/cases/sync_solve --cache $W/cache --out $OUT/sync_probe.json
cat > $W/ncu_target.py <<'PY'
import sys, json, torch
sys.path.insert(0, '.')
from pathlib import Path
from pytest_dcuopt.case.buffers import resolve_shapes
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.cuda import CudaToolchain
case = Path('tests/data/cases/sync_solve'); dims = json.loads((case/'dims.json').read_text())
ref = load_reference(case/'ref.py', dims); tc = CudaToolchain(); rt = tc.runtime()
for src in [case/'kernel.cu', case/'branches/device_sync/kernel.cu']:
    params = parse_solve_signature(src.read_text(), str(src))
    k = tc.load(tc.build(src, BuildCache(Path(sys.argv[1]))), params)
    b = k.bind(BindSpec(dict(dims), 0, resolve_shapes(params, ref.shapes, dims, str(src)), ref.inputs), rt)
    for _ in range(5): b.launch()
    torch.cuda.synchronize(); torch.cuda.profiler.start()
    for _ in range(7): b.launch()
    torch.cuda.synchronize(); torch.cuda.profiler.stop()
PY
step ncu-all 90 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off --csv --print-units base python3 $W/ncu_target.py $W/cache
cp $W/ncu-all.log $OUT/ncu_cache_all.csv
step ncu-none 90 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --profile-from-start off --csv --print-units base python3 $W/ncu_target.py $W/cache
cp $W/ncu-none.log $OUT/ncu_cache_none.csv
# --- raw TorchInductor output
I=$W/inductor; mkdir -p $I
cp tests/data/triton_inductor_h200/model.py $I/model.py  # the model the recording ran
( cd $I && step inductor 200 env TORCHINDUCTOR_CACHE_DIR=$I/cache TORCH_LOGS=+inductor,output_code TORCHINDUCTOR_TRACE=1 \
   TORCH_COMPILE_DEBUG_DIR=$I/debug TORCHINDUCTOR_BENCHMARK_KERNEL=1 TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 python3 model.py )
cp $W/inductor.log $I/stderr.log
echo "made by: env TORCHINDUCTOR_CACHE_DIR=cache TORCH_LOGS=+inductor,output_code TORCHINDUCTOR_TRACE=1 TORCH_COMPILE_DEBUG_DIR=debug TORCHINDUCTOR_BENCHMARK_KERNEL=1 TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 python3 model.py (torch.compile mode=max-autotune-no-cudagraphs, one H200)" > $I/README.txt
python3 -c "import torch,triton;print(torch.__version__, triton.__version__)" >> $I/README.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $I/README.txt
# keep it small: drop cubin/so binaries over 2 MB
find $I -type f -size +2M -delete
tar -C $W -czf $OUT/inductor.tgz inductor
du -sh $OUT/*
