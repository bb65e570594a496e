#!/usr/bin/env bash
# Smoke test of the single executable (npm run build:exe) on a PATH that holds no `node`: its checksum, --version,
# probe --sim with its HTML report, a video created, waited for and downloaded from a `gw sim` the executable
# started itself, a one-second load run with its HTML report, and doctor. Used by .ci/run.
#
#   scripts/smoke-exe.sh [dist/exe/gw]
set -euo pipefail
cd "$(dirname "$0")/.."
exe=$(realpath "${1:-dist/exe/gw}")
version=$(grep -o '"version": *"[^"]*"' package.json | grep -o '[0-9][^"]*')
work=$(mktemp -d)
sim_pid=
cleanup() {
  [ -z "$sim_pid" ] || kill "$sim_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The tools this script uses, and nothing else: no node, no npm.
mkdir "$work/bin"
for tool in cat grep rm sha256sum sleep; do ln -s "$(command -v "$tool")" "$work/bin/$tool"; done
export PATH="$work/bin" HOME="$work/home" NO_COLOR=1
unset GW_BASE_URL GW_TOKEN GW_PROFILE GW_CONFIG_DIR GW_STATE_DIR NODE_OPTIONS
if command -v node >/dev/null; then
  echo "smoke: node is on the PATH ($(command -v node))" >&2
  exit 1
fi
step() { printf 'smoke: %s\n' "$*" >&2; }

step "checksum"
(cd "${exe%/*}" && sha256sum --quiet -c gw.sha256)

step "gw --version"
[ "$("$exe" --version)" = "$version" ]

step "gw probe --sim --html"
# Off a terminal the table is stdout's and the verdict line stderr's.
"$exe" probe --sim --html "$work/probe.html" >"$work/probe.txt" 2>"$work/probe.err"
grep -q '^models' "$work/probe.txt"
grep -q '^OK: ' "$work/probe.err"
grep -qi '<html' "$work/probe.html"

step "gw sim (started by the executable)"
"$exe" --json sim --port 0 >"$work/sim.json" &
sim_pid=$!
for ((i = 0; i < 100; i++)); do
  grep -q baseUrl "$work/sim.json" 2>/dev/null && break
  sleep 0.1
done
base=$(grep -o '"baseUrl":"[^"]*"' "$work/sim.json" | grep -o 'http[^"]*')
export GW_BASE_URL="$base" GW_TOKEN=sk-sim-local-0000

step "gw video create | wait | download"
id=$("$exe" video create "a red fox in snow" -m clip-1.1-t2v --seconds 3 --resolution 720p)
"$exe" video wait "$id" --timeout 2m >/dev/null
"$exe" video download "$id" -o "$work/fox.mp4" >/dev/null
[ -s "$work/fox.mp4" ]

step "gw load for a second --html"
"$exe" load -m chat-3.7-plus --duration 1s --json --html "$work/load.html" >"$work/load.json"
grep -q '"requests"' "$work/load.json"
grep -qi '<html' "$work/load.html"

step "gw doctor"
"$exe" doctor >"$work/doctor.txt"
grep -q 'node: v' "$work/doctor.txt"

step "ok: $exe ($version) ran without node on the PATH"
