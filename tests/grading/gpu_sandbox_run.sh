#!/usr/bin/env bash
# Grade in the sandbox on the device machine's GPU: the GPU sandbox tests, the fault tests and
# every solution and exercise (tests/grading/test_course_grades.py), all with CUDAKIT_BACKEND=gpu.
# Run from the repository root with the wheels of .whl carried, and bubblewrap either installed
# or carried as .cache/bwrap/bwrap (copy /usr/bin/bwrap there; the device machine has its
# libraries). Writes $OUT/pytest.txt, $OUT/device.txt.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
if ! command -v bwrap >/dev/null 2>&1 && [ -x .cache/bwrap/bwrap ]; then
  mkdir -p /tmp/bwrap /tmp/bin && cp .cache/bwrap/* /tmp/bwrap/
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/bwrap exec /tmp/bwrap/bwrap "$@"\n' > /tmp/bin/bwrap
  chmod +x /tmp/bin/bwrap && export PATH=/tmp/bin:$PATH
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 CUDAKIT_BACKEND=gpu
out=${OUT:-/tmp/out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2
  python3 --version; bwrap --version; id; date -u; } > "$out/device.txt" 2>&1
python3 -c "from cudakit.grading.sandbox import check; check(); print('sandbox ok')" \
  >> "$out/device.txt" 2>&1
n=""; python3 -c "import xdist" 2>/dev/null && n="-n 8"
timeout 500 python3 -m pytest -q $n -p no:cacheprovider --no-header -rfE \
  tests/grading/test_sandbox_gpu.py tests/grading/test_faults.py \
  tests/grading/test_course_grades.py > "$out/pytest.txt" 2>&1
echo "pytest exit $?"; cat "$out/device.txt"; tail -15 "$out/pytest.txt"
