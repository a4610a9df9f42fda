#!/usr/bin/env bash
# A guided tour of fsguard: builds it with only what running it needs (no
# profile-guided training), plus node and the demo's npm packages
# (scripts/setup.sh --for demo), then has an MCP client walk through blind,
# stale and proper writes (scripts/demo.mjs).
# While it sets up, it says what it is doing: each step of setup.sh, the
# build's progress, and a line at least every 30 seconds.
# Exits non-zero if fsguard does not behave as the tour says.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

heartbeat_s=30
say() { printf 'demo: %s\n' "$*" >&2; }
started=$SECONDS
elapsed() {
  local s=$((SECONDS - started))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

log="$(mktemp -t fsguard-setup.XXXXXX)"
setup_pid=""
cleanup() {
  [[ -n "$setup_pid" ]] && kill "$setup_pid" 2>/dev/null
  rm -f "$log"
}
trap cleanup EXIT

if [[ -x build/fsguard && -f scripts/demo/node_modules/.package-lock.json ]]; then
  say "preparing (scripts/setup.sh --for demo): checking that build/fsguard is up to date"
else
  # Measured on a fresh clone with the Debian packages installed: 293 s of
  # CPU (CONTRIBUTING.md, Building).
  say "preparing (scripts/setup.sh --for demo): installing what is missing and building" \
    "fsguard; the first time about 5 minutes of CPU (3 minutes on 2 idle cores, more on" \
    "a busy machine), later runs seconds"
fi

# What setup.sh does now, and how far the build is: shown as it comes.
doing="setting up"
progress=""
said=$SECONDS
seen=0
follow_setup() {
  local total line
  total=$(wc -l <"$log")
  while IFS= read -r line; do
    case "$line" in
      "setup: "*)
        doing="${line#setup: }"
        progress=""
        say "$doing"
        said=$SECONDS
        ;;
      "["*"%]"*)
        # cmake --build (make): "[ 34%] Building CXX object CMakeFiles/proxy.dir/proxy/x.cpp.o"
        progress="${line%%]*}]"
        case "$line" in
          *"Building CXX object "*)
            local object="${line##*Building CXX object }"
            object="${object#*.dir/}"
            progress="$progress compiling ${object%.o}"
            ;;
          *"Linking"*) progress="$progress linking" ;;
        esac
        if ((SECONDS - said >= 10)); then
          say "  $progress ($(elapsed))"
          said=$SECONDS
        fi
        ;;
    esac
  done < <(tail -n +"$((seen + 1))" "$log" | head -n "$((total - seen))")
  seen=$total
  if ((SECONDS - said >= heartbeat_s)); then
    say "  still ${doing%% (*}${progress:+: $progress} ($(elapsed) so far)"
    said=$SECONDS
  fi
}

scripts/setup.sh --for demo >"$log" 2>&1 &
setup_pid=$!
while kill -0 "$setup_pid" 2>/dev/null; do
  follow_setup
  sleep 1
done
status=0
wait "$setup_pid" || status=$?
setup_pid=""
follow_setup
if ((status != 0)); then
  cat "$log" >&2
  say "error: setup failed (its output is above)"
  exit 1
fi
say "ready ($(elapsed)); the tour follows"
rm -f "$log"
trap - EXIT

exec node scripts/demo.mjs "$@"
