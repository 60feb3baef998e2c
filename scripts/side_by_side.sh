#!/usr/bin/env bash
# Run experiments side by side on one machine with the same wall-time budget, PARALLEL at
# a time, one CPU thread each, then collect them into OUT/results.csv + pruning_tradeoff.png.
#   scripts/side_by_side.sh OUT MAX_TIME PARALLEL EXPERIMENT [EXPERIMENT ...] [-- OVERRIDES ...]
# Seed 000's Figure 3 ablation (8x8 connect-5, 64 playouts, a fixed pure MCTS 1000):
#   scripts/side_by_side.sh logs/ablation 00:00:30:00 2 ablation_base ablation_local6 \
#     ablation_local6_threat ablation_local5_threat ablation_local4_threat ablation_local4_top8 \
#     ablation_local4_top8_within ablation_local6_threat_space ablation_local6_adaptive
# Seed 000's Table 1, pruned vs unpruned 8x8 connect-5 under identical settings:
#   scripts/side_by_side.sh logs/table1 00:01:00:00 2 table1_8x8_c5_none table1_8x8_c5_local6
set -euo pipefail
if [ $# -lt 4 ]; then sed -n 2,10p "$0"; exit 2; fi
OUT=$1; MAX_TIME=$2; PARALLEL=$3; shift 3
EXPERIMENTS=(); OVERRIDES=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do EXPERIMENTS+=("$1"); shift; done
[ $# -gt 0 ] && shift && OVERRIDES=("$@")
mkdir -p "$OUT"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 OUT MAX_TIME
export EXTRA="${OVERRIDES[*]:-}"
printf '%s\n' "${EXPERIMENTS[@]}" | xargs -P "$PARALLEL" -I{} sh -c \
  'python src/train.py experiment={} trainer.max_time=$MAX_TIME callbacks.selfplay.torch_threads=1 \
     hydra.run.dir=$OUT/{} $EXTRA > $OUT/{}.log 2>&1 \
   && echo "done {}" || echo "FAILED {} (see $OUT/{}.log)"'
python -m stonelab.reporting sweep "$OUT"
