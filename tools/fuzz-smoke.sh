#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (separate build tree) and runs each
# briefly over its seed corpus. Targets register themselves in CMake with the
# name prefix `fuzz_`; corpora live next to them in `<dir>/corpus/<target>/`.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DXCPLAB_FUZZ=ON >/dev/null
cmake --build "$build" --target fuzz_targets
shopt -s nullglob
targets=("$build"/fuzz/fuzz_*)
if [ ${#targets[@]} -eq 0 ]; then echo "fuzz-smoke: no fuzz targets built" >&2; exit 1; fi
for t in "${targets[@]}"; do
  [[ "$t" == *.corpus ]] && continue  # corpus-path side files, not targets
  name=$(basename "$t")
  corpus_src=$(cat "$t.corpus" 2>/dev/null || true)
  work=$(mktemp -d)
  [ -n "$corpus_src" ] && [ -d "$corpus_src" ] && cp -r "$corpus_src"/. "$work"/
  echo "fuzz-smoke: $name for ${seconds}s"
  "$t" -max_total_time="$seconds" -seed=1 -print_final_stats=1 "$work" 2>&1 | tail -n 4
  rm -rf "$work"
done
