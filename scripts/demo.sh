#!/usr/bin/env bash
# A guided tour of fsguard: builds it quietly with only what running it needs,
# plus node and the demo's npm packages (scripts/setup.sh --for demo), then has
# an MCP client walk through blind, stale and proper writes (scripts/demo.mjs).
# Exits non-zero if fsguard does not behave as the tour says.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log="$(mktemp -t fsguard-setup.XXXXXX)"
trap 'rm -f "$log"' EXIT
printf 'demo: preparing (scripts/setup.sh --for demo) ...\n' >&2
if ! scripts/setup.sh --for demo >"$log" 2>&1; then
  cat "$log" >&2
  printf 'demo: error: setup failed (its output is above)\n' >&2
  exit 1
fi
rm -f "$log"
trap - EXIT

exec node scripts/demo.mjs "$@"
