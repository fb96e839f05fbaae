#!/bin/sh
# Builds ./x5 (in the current directory): x4.c with its three kernels replaced by variants of
# ROOT's AVX-512 unit for one-row Q8_0 (q8_0x4_512): without its own prefetches, calling the
# AVX2 set's q8_0x4 instead, and as built. A lead for the next change, not this one's.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=${ROOT:-$here/../../..}
tmp=$(mktemp -d)
for v in base nopf k2; do
    mkdir -p "$tmp/$v"
    cp -r "$root/Sources/CQBKernels/kernels" "$root/Sources/CQBKernels/include" "$tmp/$v/"
done
perl -0pi -e 's/(static void q8_0x4_512\(.*?)for \(int l = 0; l < 3; l\+\+\) _mm_prefetch\(\(const char \*\)g \+ PREFETCH_Q8 \+ 64 \* l, _MM_HINT_T0\);\n\s*qb_prefetch_l2\(g, 3\);/$1/s' "$tmp/nopf/kernels/qb_repack.c"
if cmp -s "$tmp/base/kernels/qb_repack.c" "$tmp/nopf/kernels/qb_repack.c"; then echo "the prefetch patch did not apply" >&2; exit 1; fi
sed -i 's/if (type == QB_Q8_0) { q8_0x4_512(grp, x, y + 4 \* g, nb); continue; }/if (type == QB_Q8_0) { q8_0x4(grp, x, y + 4 * g, nb); continue; }/' "$tmp/k2/kernels/qb_repack.c"
grep -q 'q8_0x4(grp' "$tmp/k2/kernels/qb_repack.c"
sed -e 's/"avx2, two groups (base)"/"avx512, no prefetches"/' -e 's/"avx2, one group (tree)"/"avx512 unit, AVX2 q8_0x4"/' \
    -e 's/"avx512 (tree)"/"avx512 as built"/' "$here/x4.c" > "$tmp/x5.c"
avx512="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
unit() {  # prefix, tree
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on $avx512 -I"$2/kernels" -I"$2/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit t512 "$tmp/base"
unit two2 "$tmp/nopf"
unit one2 "$tmp/k2"
clang -O2 -march=x86-64-v3 -I"$tmp/base/include" "$tmp/x5.c" "$tmp"/u_*.o -lpthread -lm -o x5
rm -rf "$tmp"
