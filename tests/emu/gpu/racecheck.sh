#!/bin/sh
# Run warp_race.cu under compute-sanitizer's racecheck (device machine); log to $1.
set -e
nvcc -arch=sm_90 -lineinfo -o /tmp/warp_race "$(dirname "$0")/warp_race.cu"
{
  echo "=== compute-sanitizer --tool racecheck"
  compute-sanitizer --tool racecheck /tmp/warp_race || true
  echo "=== compute-sanitizer --tool racecheck --racecheck-report hazard"
  compute-sanitizer --tool racecheck --racecheck-report hazard /tmp/warp_race || true
} > "$1" 2>&1
