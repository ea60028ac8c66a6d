#!/bin/sh
# Continue the H100 speed census (census-h100-speed.json) where it stopped, for at most LIMIT
# seconds, on the GPUs this machine has; then pack its state (settings, rows, the table) and the
# reports of rows with a finding into OUTDIR. Run in the repository root:
#     sh notebooks/data/census_h100.sh LIMIT OUTDIR [STATE.tgz] [MODES] [PRECISION]
# MODES and PRECISION default to eval and fp32,amp (directories hb, tv, tb); another choice runs
# its own census beside them (train and amp: hb-train-amp, ...), joined with `census merge`.
# hf-base on the first half of the GPUs; torchvision, then timm-base, on the other half.
set -u
LIMIT=${1:-540}
DEST=${2:-.}
STATE=${3:-notebooks/data/census-h100-speed-state.tgz}
MODES=${4:-eval}
PREC=${5:-fp32,amp}
S=""
[ "$MODES,$PREC" = "eval,fp32,amp" ] || S="-$(echo "$MODES-$PREC" | tr , -)"
[ -d "hb$S" ] || [ ! -f "$STATE" ] || tar xzf "$STATE"
N=$(nvidia-smi -L | wc -l)
H=$((N / 2)); [ "$H" -ge 1 ] || H=1
A=$(seq -s, 0 $((H - 1))); B=$(seq -s, $((N - H)) $((N - 1)))
JA=$((3 * H)); JB=$((3 * (N - H)))
END=$(($(date +%s) + LIMIT))
left() { echo $((END - $(date +%s))); }
export OMP_NUM_THREADS=4
C="python3 -m explorer census --bench --modes $MODES --precision $PREC --device cuda --memory 0 --timeout 300 -q"
timeout "$(left)" $C --zoo hf-base --gpus "$A" --jobs "$JA" --out "hb$S" &
(
    timeout "$(left)" $C --zoo torchvision --gpus "$B" --jobs "$JB" --out "tv$S"
    [ "$(left)" -gt 30 ] && timeout "$(left)" $C --zoo timm-base --gpus "$B" --jobs "$JB" --out "tb$S"
) &
wait
pkill -9 -f explorer.census._child
sleep 2
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
