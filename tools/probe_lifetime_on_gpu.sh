set -u
nv=/usr/local/cuda
cmake -S tests/conformance -B /tmp/conf-build -DCONFORMANCE_CUDA_INCLUDE=$nv/include -DCONFORMANCE_CUDA_LIBDIR=$nv/lib64/stubs >/dev/null && cmake --build /tmp/conf-build -j16 >/dev/null || exit 1
for t in $(/tmp/conf-build/cucpu_conformance --list | grep -E "Lifetime|GraphQueriesRefuseANullCountPointer"); do
  timeout 60 /tmp/conf-build/cucpu_conformance --exact $t > /tmp/one.txt 2>&1; rc=$?
  grep -v "INFO driver" /tmp/one.txt | grep -v "passed,"; echo "== $t rc=$rc"
done 2>&1 | tee $OUT/lifetime-nvidia.txt
