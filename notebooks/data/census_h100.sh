#!/bin/sh
# Continue the H100 speed census (census-h100-speed.json) where it stopped, for at most LIMIT
# seconds, on the GPUs this machine has; then pack its state (settings, rows, the table) and the
# reports of rows with a finding into OUTDIR. Run in the repository root:
#     sh notebooks/data/census_h100.sh LIMIT OUTDIR [STATE.tgz] [MODES] [PRECISION]
# MODES and PRECISION default to eval and fp32,amp (directories hb, tv, tb); another choice runs
# its own census beside them (train and amp: hb-train-amp, ...), joined with `census merge`.
# hf-base on the first half of the GPUs; torchvision, then timm-base, on the other half.
# The environment may change that: ZOO=NAME runs that zoo alone on every GPU (ONLY=a,b: those
# models of it); GPUS=LIST: these GPUs alone; PER_GPU cases share each GPU (default 3); TIMEOUT is each case's limit (default
# 300 s); RETRY=1 also runs again the rows that failed (an error, or no speedup).
# The compile caches start empty, as on a fresh machine: a case cut off by LIMIT and run again
# on a machine that stayed up compiles cold, not from its first attempt's cache entries.
set -u
LIMIT=${1:-540}
DEST=${2:-.}
STATE=${3:-notebooks/data/census-h100-speed-state.tgz}
MODES=${4:-eval}
PREC=${5:-fp32,amp}
S=""
[ "$MODES,$PREC" = "eval,fp32,amp" ] || S="-$(echo "$MODES-$PREC" | tr , -)"
[ -d "hb$S" ] || [ ! -f "$STATE" ] || tar xzf "$STATE"
G=${GPUS:-$(seq -s, 0 $(($(nvidia-smi -L | wc -l) - 1)))}  # GPUS=2,3: these alone
N=$(echo "$G" | tr , '\n' | wc -l)
H=$((N / 2)); [ "$H" -ge 1 ] || H=1
A=$(echo "$G" | cut -d, -f1-"$H"); B=$(echo "$G" | cut -d, -f$((N - H + 1))-"$N")
P=${PER_GPU:-3}
JA=$((P * H)); JB=$((P * (N - H)))
END=$(($(date +%s) + LIMIT))
left() { echo $((END - $(date +%s))); }
export OMP_NUM_THREADS=4
CACHE=$(mktemp -d)  # this run's own compile caches, empty (yours are left alone)
export TORCHINDUCTOR_CACHE_DIR="$CACHE/inductor" TRITON_CACHE_DIR="$CACHE/triton"
C="python3 -m explorer census --bench --modes $MODES --precision $PREC --device cuda --memory 0"
C="$C --timeout ${TIMEOUT:-300} -q${RETRY:+ --retry}"
if [ -n "${ZOO:-}" ]; then
    D=$(case $ZOO in hf-base) echo hb ;; torchvision) echo tv ;; *) echo tb ;; esac)
    timeout "$(left)" $C --zoo "$ZOO" ${ONLY:+--only "$ONLY"} --gpus "$G" \
        --jobs $((P * N)) --out "$D$S"
else
    timeout "$(left)" $C --zoo hf-base --gpus "$A" --jobs "$JA" --out "hb$S" &
    (
        timeout "$(left)" $C --zoo torchvision --gpus "$B" --jobs "$JB" --out "tv$S"
        [ "$(left)" -gt 30 ] && timeout "$(left)" $C --zoo timm-base --gpus "$B" --jobs "$JB" --out "tb$S"
    ) &
    wait
fi
pkill -9 -f explorer.census._child
sleep 2
rm -rf "$CACHE"
python3 - "$DEST" "$S" <<'PY'
import json, os, sys, tarfile
dest, s = sys.argv[1], sys.argv[2]
with tarfile.open(os.path.join(dest, "census-state.tgz"), "w:gz") as state, \
        tarfile.open(os.path.join(dest, "census-reports.tgz"), "w:gz") as reports:
    for d in ("hb" + s, "tv" + s, "tb" + s):
        if not os.path.isdir(d):
            continue
        for f in ("settings.json", "census.json"):
            if os.path.exists(os.path.join(d, f)):
                state.add(os.path.join(d, f))
        for name in sorted(os.listdir(os.path.join(d, "rows"))):
            row = json.load(open(os.path.join(d, "rows", name)))
            state.add(os.path.join(d, "rows", name))
            slug = name[: -len(".json")]
            sp = row.get("speedup")
            finding = row.get("status") not in ("one graph",) or (sp is not None and sp < 1.1)
            rep = os.path.join(d, "reports", slug + ".json.gz")
            if finding and os.path.exists(rep):
                reports.add(rep)
            log = os.path.join(d, "logs", slug + ".log")
            if row.get("status") == "error" and os.path.exists(log):
                state.add(log)
PY
ls -la "$DEST"
