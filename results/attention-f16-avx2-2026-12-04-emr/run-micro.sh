#!/bin/sh
# Alternating old (ce11f35) and new (88996ae) avx2 f16 head passes: binaries from
# `OUT=… sh ../attention-q8-2026-11-30-emr/build.sh CHECKOUT old|new` (micro.txt run 2; run 1 took 300 passes).
cd "${OUT:-/tmp/att8}"
echo "# from L2: att8-X-avx2 64 4 4096 1 3000 out f16, 7 alternating pairs (old first in odd pairs)"
for i in 1 2 3 4 5 6 7; do
  if [ $((i % 2)) = 1 ]; then echo "old $(./att8-old-avx2 64 4 4096 1 3000 oa f16)"; echo "new $(./att8-new-avx2 64 4 4096 1 3000 ob f16)";
  else echo "new $(./att8-new-avx2 64 4 4096 1 3000 ob f16)"; echo "old $(./att8-old-avx2 64 4 4096 1 3000 oa f16)"; fi
done
cmp oa ob && echo "outputs: the same bytes"
echo "# from memory: att8-X-avx2 64 4 4096 128 20 out f16 (128 KV heads, 128 MiB), 5 alternating pairs"
for i in 1 2 3 4 5; do
  if [ $((i % 2)) = 1 ]; then echo "old $(./att8-old-avx2 64 4 4096 128 20 oa f16)"; echo "new $(./att8-new-avx2 64 4 4096 128 20 ob f16)";
  else echo "new $(./att8-new-avx2 64 4 4096 128 20 ob f16)"; echo "old $(./att8-old-avx2 64 4 4096 128 20 oa f16)"; fi
done
cmp oa ob && echo "outputs: the same bytes"
