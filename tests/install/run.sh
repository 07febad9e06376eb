#!/bin/sh
# Installs a build into a fresh prefix, then checks that the installed
# launcher finds the installed library and that a CMake project finds the
# package.   usage: run.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
"$prefix/bin/cucpu" --version
"$prefix/bin/cucpu" --help > /dev/null
cmake -S "$(dirname "$0")/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$prefix/consumer" > /dev/null
out=$("$prefix/bin/cucpu" run -- "$prefix/consumer/count_devices")
echo "$out"
case "$out" in *"device(s): cucpu"*) ;; *) echo "the installed program did not run on cucpu" >&2; exit 1 ;; esac
