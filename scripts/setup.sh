#!/usr/bin/env bash
# Install what fsguard needs and build it into build/. Safe to run again: each
# step does nothing when its work is already done.
#
# Usage: scripts/setup.sh [--for run|demo|test]
#   run    what building and running fsguard needs: a C++ toolchain, CMake,
#          Boost, nlohmann-json, xxHash, utf8proc, libgit2, SQLite, and dpkg-dev
#          (cpack -G DEB, the README's package step). Builds build/fsguard
#          alone (no unit tests, no doctest).
#   demo   run, plus node and the npm packages of scripts/demo/ (the filesystem
#          server and the SDK client that scripts/demo.mjs drives).
#   test   (the default) run, plus what the whole test suite needs: doctest,
#          clang and libclang-rt (fuzzing), valgrind (benchmark check),
#          node >= 20, the npm packages of tests/integration, tests/profiles
#          and tests/clients (Claude Code, Codex and Gemini CLI, whose `mcp
#          add` the client tests run), and an npm cache in tests/clients/npm-cache
#          primed with the pinned server-filesystem, so that the `npx -y` form
#          of docs/clients.md runs offline in the tests. Builds every target.
#
# Environment:
#   FSGUARD_JOBS   parallel build jobs (default 2)
#   FSGUARD_PGO    1: a profile-guided build (the default for --for test; run
#                  and demo only use the profiles of an earlier training);
#                  0: none; retrain: train its profiles again (and build
#                  build/ again from clean)
#
# Step lines and tool output go to stderr; stdout stays empty.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf 'setup: %s\n' "$*" >&2; }
die() {
  printf 'setup: error: %s\n' "$*" >&2
  exit 1
}
trap 'printf "setup: error: command failed (line %s): %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

# ---------------------------------------------------------------- options
purpose="test"
while (($# > 0)); do
  case "$1" in
    --for)
      (($# >= 2)) || die "--for needs one of: run, demo, test"
      purpose="$2"
      shift 2
      ;;
    --for=*)
      purpose="${1#--for=}"
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) die "unknown argument '$1' (usage: scripts/setup.sh [--for run|demo|test])" ;;
  esac
done
case "$purpose" in
  run | demo | test) ;;
  *) die "--for must be run, demo or test, not '$purpose'" ;;
esac
step "setting up for: $purpose"

# ---------------------------------------------------------------- apt
# What the build of fsguard links (CMakeLists.txt: find_package and
# pkg_check_modules), and the tools that build it.
# dpkg-dev: cpack -G DEB (dpkg-shlibdeps), the README's package step and the
# package.deb test. libssl-dev: OpenSSL's libcrypto, for the HMAC of
# fsguard's own requestState in the 2026 era (a well-kept implementation
# every Debian system has the library of, rather than one of fsguard's own).
run_packages=(
  cmake g++ make pkg-config
  libboost1.81-dev libboost-filesystem1.81-dev
  nlohmann-json3-dev libxxhash-dev libutf8proc-dev libgit2-dev libsqlite3-dev
  libssl-dev dpkg-dev
)
# What only the tests use: doctest (unit tests), clang and libclang-rt
# (tests/fuzz), valgrind (tests/bench), strace (syscalls per call:
# scripts/bench --instructions).
test_packages=(doctest-dev clang libclang-rt-14-dev valgrind strace)

apt_packages=("${run_packages[@]}")
if [[ "$purpose" == test ]]; then
  apt_packages+=("${test_packages[@]}")
fi
needs_node=1
if [[ "$purpose" == run ]]; then
  needs_node=0
fi
if ((needs_node)); then
  # node and npm may come from outside Debian (e.g. /usr/bin/node + a global
  # npm); only ask apt for them when the commands are missing.
  command -v node >/dev/null 2>&1 || apt_packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || apt_packages+=(npm)
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for pkg in "${apt_packages[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} > 0)); then
  step "installing Debian packages: ${missing[*]}"
  command -v apt-get >/dev/null 2>&1 ||
    die "apt-get not found; install these packages by hand: ${missing[*]}"
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 ||
      die "not root and no sudo; install these packages by hand: ${missing[*]}"
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 ||
    die "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
    die "apt-get install failed for: ${missing[*]}"
else
  step "Debian packages: all present"
fi

# ---------------------------------------------------------------- node, npm
if ((needs_node)); then
  command -v node >/dev/null 2>&1 || die "node is still missing after installing nodejs"
  command -v npm >/dev/null 2>&1 || die "npm is still missing after installing npm"
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  if [[ "$purpose" == test ]]; then
    # The v2 SDK client and mcpc (tests/integration) declare node >= 20.
    ((node_major >= 20)) || die "node $(node --version) is too old; the test suite needs node >= 20"
  else
    ((node_major >= 18)) || die "node $(node --version) is too old; the MCP SDK needs node >= 18"
  fi
fi

install_npm_folder() {
  local dir="$1"
  [[ -f "$dir/package.json" ]] || die "$dir/package.json is missing"
  # npm writes node_modules/.package-lock.json on every install: use it as the
  # stamp of the last install.
  local stamp="$dir/node_modules/.package-lock.json" manifest npm_cmd
  if [[ -f "$dir/package-lock.json" ]]; then
    manifest="$dir/package-lock.json"
    npm_cmd=(npm ci)
  else
    manifest="$dir/package.json"
    npm_cmd=(npm install)
  fi
  if [[ ! -f "$stamp" || "$manifest" -nt "$stamp" || "$dir/package.json" -nt "$stamp" ]]; then
    step "installing npm packages in $dir (${npm_cmd[*]})"
    (cd "$dir" && "${npm_cmd[@]}" --no-audit --no-fund >&2) ||
      die "'${npm_cmd[*]}' failed in $dir"
  else
    step "npm packages in $dir: up to date"
  fi
}
# The npm cache the client tests give npx (npm_config_cache, with
# npm_config_offline=true): `npx -y @modelcontextprotocol/server-filesystem@V`,
# the form docs/clients.md tells users to register, then finds the server
# installed in its _npx folder and needs no network. V is the version
# tests/integration pins.
prime_npx_cache() {
  local cache="$PWD/tests/clients/npm-cache" version spec
  version="$(node -p 'require("./tests/integration/package.json").dependencies["@modelcontextprotocol/server-filesystem"]')"
  spec="@modelcontextprotocol/server-filesystem@$version"
  if npm_config_cache="$cache" npm_config_offline=true npx -y -p "$spec" true >/dev/null 2>&1; then
    step "npx cache in tests/clients/npm-cache: $spec is there"
  else
    step "priming the npx cache in tests/clients/npm-cache with $spec"
    npm_config_cache="$cache" npx -y -p "$spec" true >&2 ||
      die "npx could not install $spec into tests/clients/npm-cache"
  fi
}
case "$purpose" in
  # scripts/demo: the filesystem server and SDK client of scripts/demo.mjs.
  demo) install_npm_folder scripts/demo ;;
  # tests/integration: the SDK clients, the third-party clients and the MCP
  # servers the tests run (devDependencies included). tests/profiles:
  # third-party filesystem servers for the profile tests (installed with
  # scripts disabled by its .npmrc).
  # tests/clients: the real clients (installed with scripts disabled by its
  # .npmrc: each ships its native binary or bundle in a package).
  test)
    install_npm_folder tests/integration
    install_npm_folder tests/profiles
    install_npm_folder tests/clients
    prime_npx_cache
    ;;
esac

# ---------------------------------------------------------------- build
[[ -f CMakeLists.txt ]] || die "CMakeLists.txt is missing at the repository root"
if [[ "$purpose" == test ]]; then
  tests=(-DFSGUARD_TESTS=ON)
  target=()
else
  # Only fsguard: the unit tests need doctest. A build/ that is already
  # configured keeps its FSGUARD_TESTS, so the demo does not take the tests
  # out of a test build.
  tests=()
  [[ -f build/CMakeCache.txt ]] || tests=(-DFSGUARD_TESTS=OFF)
  target=(--target fsguard)
fi

# Profile-guided: fsguard built instrumented in build-pgo/, run over
# tests/bench/pgo_train.mjs, and build/ optimized with the profiles it
# wrote (CMakeLists.txt). Trained once: later runs keep the profiles, and
# what changed since builds as without them (FSGUARD_PGO=retrain trains
# again). It needs node and server-filesystem (--for test or demo); without
# them, or with FSGUARD_PGO=0, build/ is an ordinary build. --for run and
# --for demo do not train unless FSGUARD_PGO asks: the training builds
# fsguard a second time, which the tour does not need.
profile_dir="$PWD/build-pgo/profile"
# Written last, once the training is done: a directory without it (a
# training cut short) is not used.
profile_stamp="$profile_dir/trained"
case "${FSGUARD_PGO:-}" in
  "") if [[ "$purpose" == test ]]; then pgo=on; else pgo=earlier; fi ;;
  1 | on | yes | true) pgo=on ;;
  0 | off | no | false) pgo=off ;;
  retrain) pgo=retrain ;;
  *) die "FSGUARD_PGO must be 0, 1 or retrain, not '$FSGUARD_PGO'" ;;
esac
train_profile() {
  step "profile-guided build: building fsguard instrumented (build-pgo/)"
  rm -rf "$profile_dir"
  cmake -S . -B build-pgo -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFSGUARD_TESTS=OFF \
    -DFSGUARD_PROFILE_GENERATE="$profile_dir" >&2 &&
    cmake --build build-pgo -j"${FSGUARD_JOBS:-2}" --target fsguard >&2 &&
    step "profile-guided build: training (tests/bench/pgo_train.mjs)" &&
    node tests/bench/pgo_train.mjs build-pgo/fsguard >&2 &&
    # Written as fsguard exits; CMakeLists.txt refuses a directory without.
    [[ -f "$profile_dir/CMakeFiles#guard.dir#proxy#guard#guard.cpp.gcda" ]] &&
    touch "$profile_stamp"
}
profile_use=""
if [[ "$pgo" == off ]]; then
  step "profile-guided build: off (FSGUARD_PGO=$FSGUARD_PGO)"
elif [[ "$pgo" != retrain && -f "$profile_stamp" ]]; then
  step "profile-guided build: profiles of an earlier training (FSGUARD_PGO=retrain trains again)"
  profile_use="$profile_dir"
elif [[ "$pgo" == earlier ]]; then
  step "profile-guided build: not for --for $purpose (FSGUARD_PGO=1 trains it; it builds" \
    "fsguard twice)"
elif ((!needs_node)); then
  step "profile-guided build: skipped (its training needs node: scripts/setup.sh --for test or demo)"
elif train_profile; then
  profile_use="$profile_dir"
  if [[ -f build/CMakeCache.txt ]]; then
    # The objects built with earlier profiles do not depend on the
    # profile files: the new ones take effect only in a clean build.
    step "profile-guided build: new profiles, so build/ is built again from clean"
    cmake --build build --target clean >&2 || die "cleaning build/ failed"
  fi
else
  rm -rf "$profile_dir"
  step "warning: the profile-guided training failed (see above): building without it," \
    "correct but slower"
fi

step "configuring (cmake, RelWithDebInfo${tests[*]:+, ${tests[*]#-D}}${profile_use:+, profile-guided})"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tests[@]}" \
  -DFSGUARD_PROFILE_USE="$profile_use" >&2 ||
  die "cmake configure failed"
step "building (cmake --build build -j${FSGUARD_JOBS:-2}${target[*]:+ ${target[*]}})"
cmake --build build -j"${FSGUARD_JOBS:-2}" "${target[@]}" >&2 || die "build failed"
[[ -x build/fsguard ]] || die "build finished but build/fsguard is missing"
step "done: build/fsguard"
