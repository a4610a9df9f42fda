#!/usr/bin/env bash
# Builds the libFuzzer target with clang and runs it for a bounded time over
# the seed corpus. Usage: tests/fuzz/run.sh [seconds] (default 30).
# A finding leaves its input in build-fuzz/artifacts/ and fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-30}"
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found" >&2
  exit 1
fi
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFSGUARD_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_guard -j2 >/dev/null
mkdir -p build-fuzz/corpus build-fuzz/artifacts
# New inputs go to build-fuzz/corpus; the committed seeds stay as they are.
build-fuzz/tests/fuzz/fuzz_guard build-fuzz/corpus tests/fuzz/corpus \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 2>&1 | tail -25
