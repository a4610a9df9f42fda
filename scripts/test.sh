#!/usr/bin/env bash
# Install what the whole test suite needs and build every target
# (scripts/setup.sh --for test), then run every test registered in ctest: the
# doctest unit tests and the node --test integration tests.
#
# Environment:
#   CTEST_PARALLEL_LEVEL   run tests in parallel (ctest reads it; default: serial)
#   FSGUARD_TEST_TIMEOUT   seconds for a test that sets no TIMEOUT (default 600)
# Extra arguments are passed to ctest, e.g. `scripts/test.sh -R unit`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh --for test || {
  printf 'test: error: setup failed\n' >&2
  exit 1
}

printf 'test: running ctest\n' >&2
status=0
ctest --test-dir build --output-on-failure --no-tests=error \
  --timeout "${FSGUARD_TEST_TIMEOUT:-600}" "$@" || status=$?

if ((status != 0)); then
  printf 'test: FAILED (ctest exit status %d)\n' "$status" >&2
  exit "$status"
fi
printf 'test: all tests passed\n' >&2
