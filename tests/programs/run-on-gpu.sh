#!/bin/sh
# On the GPU machine: builds the runtime-API programs with nvcc and runs each
# against NVIDIA's driver and against cucpu (CUCPU_LIB_DIR: the folder with
# cucpu's libcuda.so.1), printing one row per program. Outputs go to $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/programs-out}
lib=${CUCPU_LIB_DIR:?set CUCPU_LIB_DIR to cucpu\'s lib folder}
mkdir -p "$out"
bin=$(mktemp -d)
"$here/build.sh" "$bin" > "$out/programs-build.txt" 2>&1 || { cat "$out/programs-build.txt"; exit 1; }
verdict() { grep -q ': PASS$' "$1" && echo PASS || echo FAIL; }
echo "| program | NVIDIA | cucpu |"
echo "|---|---|---|"
for p in "$bin"/*; do
  name=$(basename "$p")
  nv_args="" cu_args=""
  [ "$name" = sass_only ] && cu_args=--no-image
  timeout 120 "$p" $nv_args > "$out/$name.nvidia.out" 2> "$out/$name.nvidia.err"
  nv_rc=$?
  LD_LIBRARY_PATH="$lib" timeout 120 "$p" $cu_args > "$out/$name.cucpu.out" 2> "$out/$name.cucpu.err"
  cu_rc=$?
  echo "| $name | $(verdict "$out/$name.nvidia.out") (rc $nv_rc) | $(verdict "$out/$name.cucpu.out") (rc $cu_rc) |"
done
