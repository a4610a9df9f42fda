#!/usr/bin/env bash
# Builds the .deb with CPack and checks it: the files it installs, that
# every package it depends on exists in Debian (apt-cache), and that the
# binary unpacked from it runs, answers --version and validates the
# example config it ships. Usage: check_deb.sh <build dir>
set -euo pipefail
build="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$build" && cpack -G DEB -B "$work/out" >/dev/null)
deb=$(ls "$work"/out/fsguard_*.deb)
echo "package: $(basename "$deb")"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for expected in ./usr/bin/fsguard ./usr/share/man/man1/fsguard.1 \
  ./usr/share/fsguard/fsguard.schema.json ./usr/share/fsguard/fsguard.example.json \
  ./usr/share/fsguard/claude_desktop_config.json ./usr/share/fsguard/codex.config.toml \
  ./usr/share/doc/fsguard/copyright ./usr/share/doc/fsguard/CHANGELOG.md \
  ./usr/share/doc/fsguard/README.md ./usr/share/doc/fsguard/docs/clients.md; do
  grep -qx -- "$expected" <<<"$contents" || { echo "missing from the package: $expected" >&2; exit 1; }
done
# Every document the man page's SEE ALSO names is installed where it says.
see_also=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$(dirname "$0")/../../proxy/app/fsguard.1" |
  grep -o '\\fI[A-Za-z/]*\.md\\fR' | sed 's/^\\fI//;s/\\fR$//' | sort -u)
[[ -n "$see_also" ]] || { echo "the man page's SEE ALSO names no document" >&2; exit 1; }
grep -q '/usr/share/doc/fsguard/' "$(dirname "$0")/../../proxy/app/fsguard.1" ||
  { echo "the man page does not say where the docs are installed" >&2; exit 1; }
for doc in $see_also; do
  grep -qx -- "./usr/share/doc/fsguard/$doc" <<<"$contents" ||
    { echo "the man page names $doc, which the package does not install" >&2; exit 1; }
done
echo "docs: $(grep -c '^\./usr/share/doc/fsguard/.' <<<"$contents") files in /usr/share/doc/fsguard," \
  "the man page's $(wc -w <<<"$see_also") among them"

depends=$(dpkg-deb -f "$deb" Depends)
echo "depends: $depends"
IFS=',' read -ra packages <<<"$depends"
for entry in "${packages[@]}"; do
  name=$(awk '{print $1}' <<<"$entry")
  apt-cache show "$name" >/dev/null 2>&1 || { echo "dependency not in the archive: $name" >&2; exit 1; }
done

dpkg-deb -x "$deb" "$work/root"
if readelf -S "$work/root/usr/bin/fsguard" | grep -q '\.debug_info'; then
  echo "the packaged binary carries debug info; it should be stripped" >&2
  exit 1
fi
echo "binary: $(stat -c %s "$work/root/usr/bin/fsguard") bytes, stripped"
"$work/root/usr/bin/fsguard" --version | head -1
"$work/root/usr/bin/fsguard" --check-config "$work/root/usr/share/fsguard/fsguard.example.json"
man -l "$work/root/usr/share/man/man1/fsguard.1" >/dev/null 2>&1 || \
  groff -man -Tutf8 "$work/root/usr/share/man/man1/fsguard.1" >/dev/null 2>&1 || \
  echo "note: neither man nor groff can render the page here"
echo "1 passed, 0 failed"
