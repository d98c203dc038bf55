#!/usr/bin/env bash
# Grade every solution and exercise on the device machine's GPU, then run the fault and
# wrong-submission tests there. Writes $OUT/grades.json (the `cudakit grade --json` list of all
# notebooks), $OUT/pytest.txt and $OUT/device.txt. Run from the repository root with the
# wheels of .whl (PyCUDA, Jupyter kernel) and .whl-grade (jsonschema for nbformat) carried.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
  .whl-grade/*.whl || exit 1
# grading runs in the bubblewrap sandbox: use the machine's bwrap, or one carried in .cache/bwrap
if ! command -v bwrap >/dev/null 2>&1 && [ -x .cache/bwrap/bwrap ]; then
  mkdir -p /tmp/bwrap /tmp/bin && cp .cache/bwrap/* /tmp/bwrap/
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/bwrap exec /tmp/bwrap/bwrap "$@"\n' > /tmp/bin/bwrap
  chmod +x /tmp/bin/bwrap && export PATH=/tmp/bin:$PATH
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 CUDAKIT_BACKEND=gpu
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/grades
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2
  python3 --version; date -u; } > "$out/device.txt" 2>&1
start=$(date +%s)
ls solutions/*.ipynb exercises/*.ipynb | xargs -P 6 -I{} sh -c \
  'timeout 200 python3 -m cudakit grade {} --json > /tmp/grades/$(echo {} | tr / _).json \
   2> /tmp/grades/$(echo {} | tr / _).err'
python3 - "$out/grades.json" <<'PY'
import glob, json, sys
results = []
for path in sorted(glob.glob("/tmp/grades/*.json")):
    try:
        results += json.load(open(path))
    except ValueError:
        results.append({"notebook": path, "error": open(path[:-5] + ".err").read()[-2000:]})
json.dump(results, open(sys.argv[1], "w"), indent=1)
for r in results:
    print(r.get("notebook"), r.get("score"), "/", r.get("max_score"), r.get("error", ""))
PY
echo "grading took $(( $(date +%s) - start )) s"
timeout 170 python3 -m pytest -q -n 6 -p no:cacheprovider --no-header -rfE \
  tests/grading/test_faults.py tests/grading/test_wrong_submissions.py > "$out/pytest.txt" 2>&1
echo "pytest exit $?"; tail -5 "$out/pytest.txt"
