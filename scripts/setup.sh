#!/usr/bin/env bash
# Install what fsguard needs (Debian packages, the pinned npm packages of the
# integration tests) and build it into build/. Safe to run again: each step
# does nothing when its work is already done.
#
# Environment:
#   FSGUARD_JOBS   parallel build jobs (default 2)
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

# ---------------------------------------------------------------- apt
apt_packages=(
  cmake g++ make pkg-config
  libboost1.81-dev libboost-filesystem1.81-dev
  nlohmann-json3-dev doctest-dev libxxhash-dev libutf8proc-dev libgit2-dev
  clang libclang-rt-14-dev dpkg-dev valgrind
)
# node and npm may come from outside Debian (e.g. /usr/bin/node + a global
# npm); only ask apt for them when the commands are missing.
command -v node >/dev/null 2>&1 || apt_packages+=(nodejs)
command -v npm >/dev/null 2>&1 || apt_packages+=(npm)

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

command -v node >/dev/null 2>&1 || die "node is still missing after installing nodejs"
command -v npm >/dev/null 2>&1 || die "npm is still missing after installing npm"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 18)) || die "node $(node --version) is too old; the MCP SDK needs node >= 18"

# ---------------------------------------------------------------- npm
# tests/integration: the SDK client and the MCP servers the tests run.
# tests/profiles: third-party filesystem servers for the profile tests
# (installed with scripts disabled by its .npmrc).
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
install_npm_folder tests/integration
install_npm_folder tests/profiles

# ---------------------------------------------------------------- build
[[ -f CMakeLists.txt ]] || die "CMakeLists.txt is missing at the repository root"
step "configuring (cmake, RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2 ||
  die "cmake configure failed"
step "building (cmake --build build -j${FSGUARD_JOBS:-2})"
cmake --build build -j"${FSGUARD_JOBS:-2}" >&2 || die "build failed"
[[ -x build/fsguard ]] || die "build finished but build/fsguard is missing"
step "done: build/fsguard"
