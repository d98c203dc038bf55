#!/usr/bin/env bash
# The H100 side of issue 19, in one device call: the device's microbenchmarks, then every lab
# at full size with each timed region recorded (cudakit/record.py), all within TOTAL seconds.
#
#   cd .gpu-measure && bash benchmarks/record_labs.sh          # on the device machine
#   CUDAKIT_BACKEND=emu OUT=/tmp/out bash benchmarks/record_labs.sh   # dry run on the emulator
#
# Writes to $OUT (at most 8 files come back): h100_device.json + microbench.log
# (benchmarks/microbench.py), lab_launches.jsonl.gz (the recordings, for benchmarks/model.py),
# labs.tar.gz (the executed notebooks, lab 22's among them) and record_labs.log.
# Wheels carried in ../.whl or ./.whl are installed into /tmp/site first (the device machine
# has no network); on the emulator nothing is installed.
set -u
START=$SECONDS
TOTAL=${TOTAL:-450}              # seconds for everything, install included
PY=${PYTHON:-python3}
OUT=${OUT:-$PWD/test-output/record-labs}
LABS=${LABS:-"10 11 12 21 20 09 02 22 04 06 08 03 01 00 07 05"}  # most timings first
LAB_TIMEOUT=${LAB_TIMEOUT:-100}  # seconds one lab may take
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ "${CUDAKIT_BACKEND:-}" != "emu" ]; then
    WHL=$(ls -d ../.whl .whl 2>/dev/null | head -1)
    if [ -n "$WHL" ]; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl \
            || { echo "record_labs: installing the wheels from $WHL failed"; exit 1; }
        export PYTHONPATH=/tmp/site:$PWD
    fi
fi
export PYTHONPATH=${PYTHONPATH:-$PWD}
echo "wheels: $((SECONDS - START)) s"

SMALL=""
[ "${CUDAKIT_BACKEND:-}" = "emu" ] && SMALL="--small"
timeout 100 "$PY" -m benchmarks.microbench $SMALL --out "$OUT/h100_device.json" \
    > "$OUT/microbench.log" 2>&1
echo "microbench: exit $?, $((SECONDS - START)) s so far"

BUDGET=$((TOTAL - (SECONDS - START) - 15))   # 15 s for packing and the copies
WORK=$(mktemp -d)
# shellcheck disable=SC2086  # LABS is a list of words
timeout $((BUDGET + 30)) "$PY" tools/gpu-check --record "$WORK" --labs $LABS \
    --lab-timeout "$LAB_TIMEOUT" --budget "$BUDGET" > "$OUT/record_labs.log" 2>&1
echo "labs: exit $?, $((SECONDS - START)) s so far"
cp "$WORK/lab_launches.jsonl.gz" "$WORK/labs.tar.gz" "$OUT/" 2>/dev/null
grep '^|' "$OUT/record_labs.log"
for f in "$WORK"/launches/*.jsonl; do
    [ -e "$f" ] && echo "$(basename "$f" .jsonl): $(($(wc -l < "$f") - 1)) regions recorded"
done
ls -la "$OUT"
echo "total: $((SECONDS - START)) s"
