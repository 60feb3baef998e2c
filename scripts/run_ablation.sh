#!/usr/bin/env bash
# Seed 000's Figure 3 ablation: every pruning variant on 8x8 connect-5 (64 playouts,
# 20 evaluation games vs a fixed pure MCTS 1000), the same wall-time budget each,
# PARALLEL runs at a time with one CPU thread each, then results.csv + the plot.
#   scripts/run_ablation.sh [MAX_TIME=00:00:30:00] [PARALLEL=2] [OUT=logs/ablation]
set -euo pipefail
MAX_TIME=${1:-00:00:30:00}
PARALLEL=${2:-2}
OUT=${3:-logs/ablation}
VARIANTS="ablation_base ablation_local6 ablation_local6_threat ablation_local5_threat ablation_local4_threat
ablation_local4_top8 ablation_local4_top8_within ablation_local6_threat_space ablation_local6_adaptive"
mkdir -p "$OUT"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 OUT MAX_TIME
echo $VARIANTS | tr ' ' '\n' | xargs -P "$PARALLEL" -I{} sh -c \
  'python src/train.py experiment={} trainer.max_time=$MAX_TIME callbacks.selfplay.torch_threads=1 \
     callbacks.progress_bar=null hydra.run.dir=$OUT/{} > $OUT/{}.log 2>&1 && echo "done {}" || echo "FAILED {} (see $OUT/{}.log)"'
python -m stonelab.reporting sweep "$OUT"
