#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time
# over its seed corpus. Usage: tests/fuzz/run.sh [seconds] [target]
# (default 30 s each, both targets; a target's name runs only that one).
#   fuzz_guard:  message parsing, the upstream skim, paths, the tracker
#   fuzz_ledger: the guard's call ordering against a model of the agent
# A finding leaves its input in build-fuzz/artifacts/ and fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-30}"
targets=(fuzz_guard fuzz_ledger)
if (($# > 1)); then
  case "$2" in
  fuzz_guard | fuzz_ledger) targets=("$2") ;;
  *)
    echo "fuzz: no target $2 (fuzz_guard, fuzz_ledger)" >&2
    exit 2
    ;;
  esac
fi
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found" >&2
  exit 1
fi
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFSGUARD_FUZZ=ON >/dev/null
cmake --build build-fuzz --target "${targets[@]}" -j2 >/dev/null
mkdir -p build-fuzz/artifacts
for target in "${targets[@]}"; do
  seeds=tests/fuzz/corpus
  [[ "$target" == fuzz_ledger ]] && seeds=tests/fuzz/ledger-corpus
  # New inputs go to build-fuzz/<target>-corpus; the committed seeds stay as they are.
  mkdir -p "build-fuzz/$target-corpus"
  echo "fuzz: $target for $seconds s" >&2
  status=0
  "build-fuzz/tests/fuzz/$target" "build-fuzz/$target-corpus" "$seeds" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="build-fuzz/artifacts/$target-" -print_final_stats=1 2>&1 | tail -12 ||
    status=$?
  if ((status != 0)); then
    echo "fuzz: $target found a failure (exit $status)" >&2
    exit "$status"
  fi
done
