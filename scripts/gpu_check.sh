#!/usr/bin/env bash
# What one lent CUDA machine measures, in one go and in under 8 minutes:
#
#   bash scripts/gpu_check.sh > $OUT/gpu.json
#
# stdout: ONE JSON object (assembled by scripts/gpu_check_json.py): the device, and per
# step its command, exit status, seconds and result. Progress goes to stderr.
#   device           GPU name, torch / CUDA / cuDNN versions, bf16 support
#   mcts_fp32        bench mcts on cuda: forward ceiling at batch 256 and 1024, neural
#                    playouts/s and games/hour with 256 self-play slots (64 playouts a move)
#   mcts_tree_only   the same search with no network (`--evaluator null`): the tree's ceiling
#   mcts_bf16        mcts_fp32 with the search forward in bf16
#   train_fp32       bench train, maddison_cnn at the paper's 12 layers x 128 filters:
#   train_bf16       samples/s (plain loop, Lightning) and the share of time spent waiting for data
#   belief_vit       a fast_dev_run of model=belief_vit data=kgs on the GPU (the 300-game sample)
#   alphazero_2min   8x8 connect-5 AlphaZero, 2 minutes, bf16-mixed, self-play on the GPU ...
#   alphazero_resume ... then resumed from its last.ckpt for 30 more seconds
#
# Every step runs under `timeout`, and all of them together within GPU_CHECK_BUDGET seconds
# (default 440): a step that fails, times out or finds no time left is recorded in the JSON
# and the next one runs. Runs from any folder (it works in the checkout it lies in, on this
# checkout's src/), with the `python` of the current environment (or $PYTHON), no network.
# Exit status: 0 with the JSON; 3 where there is no CUDA device (nothing is measured and no
# JSON is printed); 2 where python cannot import torch.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
PYTHON=${PYTHON:-python}
# This checkout's code, not whatever copy of stonelab the environment has installed.
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
BUDGET=${GPU_CHECK_BUDGET:-440}
START=$SECONDS

log() { echo "gpu_check: $*" >&2; }

if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
    log "$PYTHON cannot import torch: nothing to measure"
    exit 2
fi
if ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    log "no CUDA device (torch.cuda.is_available() is False): nothing to measure"
    exit 3
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/steps"
STEPS=()

# step NAME LIMIT_S COMMAND...: run COMMAND for at most LIMIT_S seconds (less when the
# budget is nearly spent; skipped under 20 s), its stdout and stderr kept for the JSON.
step() {
    local name=$1 limit=$2
    shift 2
    STEPS+=("$name")
    local dir="$WORK/steps/$name" left=$((BUDGET - (SECONDS - START)))
    mkdir -p "$dir"
    printf '%s\n' "$*" > "$dir/command"
    if ((left < limit)); then limit=$left; fi
    if ((limit < 20)); then
        echo "${left} s of the ${BUDGET} s budget left" > "$dir/skipped"
        log "$name: skipped (${left} s of the budget left)"
        return
    fi
    log "$name: at most ${limit} s: $*"
    local begin=$SECONDS
    timeout --kill-after=10 "$limit" "$@" > "$dir/stdout" 2> "$dir/stderr"
    local rc=$?
    echo "$rc $((SECONDS - begin)) $limit" > "$dir/status"
    if ((rc == 0)); then
        log "$name: done in $((SECONDS - begin)) s"
    else
        log "$name: exit $rc after $((SECONDS - begin)) s; its last lines:"
        tail -n 5 "$dir/stderr" | sed 's/^/    /' >&2
    fi
}

# keep_result NAME RUN_DIR: a training run's result.json, beside its step's output.
keep_result() {
    if [[ -f "$2/result.json" ]]; then cp "$2/result.json" "$WORK/steps/$1/result.json"; fi
}

step device 60 "$PYTHON" - <<'EOF'
import json, os, torch
d = torch.cuda.current_device()
props = torch.cuda.get_device_properties(d)
print(json.dumps({
    "name": torch.cuda.get_device_name(d), "count": torch.cuda.device_count(),
    "capability": ".".join(map(str, torch.cuda.get_device_capability(d))),
    "memory_gib": round(props.total_memory / 2**30, 1), "bf16_supported": torch.cuda.is_bf16_supported(),
    "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
    "cpu_count": os.cpu_count(),
}))
EOF

MCTS=(-m stonelab.bench mcts --json --board-size 8 --win-length 5 --playouts 64 --parallel 256 --games 256
      --pure-playouts 1000 --seconds 2 --threads 1)
step mcts_fp32 100 "$PYTHON" "${MCTS[@]}" --device cuda --precision 32 --forward-batches 256 1024
step mcts_tree_only 60 "$PYTHON" "${MCTS[@]}" --evaluator null --threads 4   # tree threads: 1 beside 4
step mcts_bf16 70 "$PYTHON" "${MCTS[@]}" --device cuda --precision bf16 --forward-batches 256 1024

TRAIN=(-m stonelab.bench train --json --depth 12 --filters 128 --batch-size 128 --steps 40 --workers 6
       --threads 4 --sources data/kgs --cache-dir "$WORK/kgs_cache")
step train_fp32 120 "$PYTHON" "${TRAIN[@]}" --device cuda --precision 32
step train_bf16 60 "$PYTHON" "${TRAIN[@]}" --device cuda --precision bf16

step belief_vit 60 "$PYTHON" src/train.py model=belief_vit data=kgs trainer.accelerator=gpu \
    +trainer.fast_dev_run=true data.num_workers=4 "data.cache_dir=$WORK/kgs_cache" logger=none \
    callbacks.progress_bar=null "hydra.run.dir=$WORK/belief_vit"
keep_result belief_vit "$WORK/belief_vit"

AZ="$WORK/alphazero"
step alphazero_2min 180 "$PYTHON" src/train.py game=gomoku_8x8_c5 trainer.accelerator=gpu \
    trainer.max_time=00:00:02:00 trainer.precision=bf16-mixed \
    callbacks.selfplay.parallel_games=256 callbacks.selfplay.games_per_round=64 \
    callbacks.selfplay.steps_per_round=16 callbacks.evaluation.games=4 "hydra.run.dir=$AZ"
keep_result alphazero_2min "$AZ"
# The budget is the run's total across resumes: 30 s more than the first part had.
step alphazero_resume 90 "$PYTHON" src/train.py "ckpt_path=$AZ/checkpoints/last.ckpt" \
    trainer.max_time=00:00:02:30
keep_result alphazero_resume "$AZ"

"$PYTHON" "$ROOT/scripts/gpu_check_json.py" "$WORK/steps" "$((SECONDS - START))" "$BUDGET" "${STEPS[@]}"
