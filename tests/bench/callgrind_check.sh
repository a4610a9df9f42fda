#!/usr/bin/env bash
# Instructions fsguard executes per relayed message, counted by callgrind.
#
#   tests/bench/callgrind_check.sh [THRESHOLD]
#
# Replays tests/bench/transcript.jsonl (initialize, tools/list, reads, writes
# and directory listings of 4 KiB files) through
#   valgrind --tool=callgrind --trace-children=no fsguard -- node server-filesystem DIR
# one request at a time, waiting for each response. DIR is a fresh temp
# directory with fixed files, substituted for @DIR@ in the transcript. Only
# fsguard runs under callgrind; the upstream runs natively.
#
# Prints the total instructions (the "summary:" line of callgrind.out) divided
# by the number of messages relayed in both directions (startup included).
# Exits 1 if that is over THRESHOLD, or if any call failed or was vetoed.
#
# Environment: FSGUARD_BIN (default build/fsguard), FSGUARD_NODE (default node),
# FSGUARD_VALGRIND (default valgrind),
# FSGUARD_KEEP_CALLGRIND=FILE to keep the callgrind output (for callgrind_annotate).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
threshold="${1:-}"
fsguard="${FSGUARD_BIN:-$root/build/fsguard}"
node="${FSGUARD_NODE:-node}"
valgrind="${FSGUARD_VALGRIND:-valgrind}"
server="$root/tests/integration/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
transcript="$here/transcript.jsonl"

fail() {
  printf 'callgrind_check: error: %s\n' "$*" >&2
  exit 1
}

[[ -z "$threshold" || "$threshold" =~ ^[0-9]+$ ]] || fail "THRESHOLD must be a whole number, not '$threshold'"
[[ -x "$fsguard" ]] || fail "fsguard not found at $fsguard (build it, or set FSGUARD_BIN)"
[[ -f "$server" ]] || fail "server-filesystem not found at $server (run scripts/setup.sh)"
command -v "$valgrind" >/dev/null 2>&1 || fail "valgrind not found"
command -v "$node" >/dev/null 2>&1 || fail "node not found"

work="$(mktemp -d "${TMPDIR:-/tmp}/fsguard-callgrind-XXXXXX")"
work="$(cd "$work" && pwd -P)"
guard_pid=""
cleanup() {
  if [[ -n "$guard_pid" ]] && kill -0 "$guard_pid" 2>/dev/null; then
    kill -KILL "$guard_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Fixed files: f00..f19, 4 KiB each.
dir="$work/files"
mkdir "$dir"
for n in $(seq -w 0 19); do
  line="callgrind fixture f$n: the quick brown fox jumps over the lazy dog 0123456789"
  text=""
  while ((${#text} < 4096)); do text+="$line"$'\n'; done
  printf '%s' "${text:0:4096}" >"$dir/f$n.txt"
done
# Let the files age past fsguard's 2 s racy window, so whether a check
# re-hashes does not depend on how fast valgrind starts.
sleep 2.2

sed "s|@DIR@|$dir|g" "$transcript" >"$work/transcript.jsonl"

coproc GUARD {
  exec "$valgrind" --tool=callgrind --trace-children=no \
    --callgrind-out-file="$work/callgrind.out.%p" \
    "$fsguard" --mode enforce -- "$node" "$server" "$dir" 2>"$work/stderr"
}
# shellcheck disable=SC2153 # GUARD_PID is set by coproc
guard_pid="$GUARD_PID"
to_guard="${GUARD[1]}"
from_guard="${GUARD[0]}"

client_messages=0
upstream_messages=0
while IFS= read -r request; do
  [[ -n "$request" ]] || continue
  printf '%s\n' "$request" >&"$to_guard"
  client_messages=$((client_messages + 1))
  [[ "$request" == *'"id":'* ]] || continue # a notification: no response
  if ! IFS= read -r -t 120 response <&"$from_guard"; then
    cat "$work/stderr" >&2 || true
    fail "no response to: ${request:0:200}"
  fi
  upstream_messages=$((upstream_messages + 1))
  if [[ "$response" == *'"isError":true'* || "$response" == *'"error":{'* ]]; then
    cat "$work/stderr" >&2 || true
    fail "call failed or was vetoed: ${request:0:200} -> ${response:0:300}"
  fi
done <"$work/transcript.jsonl"

exec {to_guard}>&-
status=0
wait "$guard_pid" || status=$?
guard_pid=""
((status == 0)) || {
  cat "$work/stderr" >&2 || true
  fail "fsguard under valgrind exited with status $status"
}

outputs=("$work"/callgrind.out.*)
((${#outputs[@]} == 1)) || fail "expected one callgrind output, found ${#outputs[@]}"
total="$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "${outputs[0]}")"
[[ -n "$total" ]] || fail "no summary line in ${outputs[0]}"
if [[ -n "${FSGUARD_KEEP_CALLGRIND:-}" ]]; then
  cp "${outputs[0]}" "$FSGUARD_KEEP_CALLGRIND"
fi

messages=$((client_messages + upstream_messages))
per_message=$((total / messages))
printf 'callgrind: %d instructions over %d messages (%d from the client, %d from the upstream): %d per message\n' \
  "$total" "$messages" "$client_messages" "$upstream_messages" "$per_message"
if [[ -n "$threshold" ]] && ((per_message > threshold)); then
  printf 'callgrind_check: FAIL: %d instructions per message is over the threshold %d\n' \
    "$per_message" "$threshold" >&2
  exit 1
fi
