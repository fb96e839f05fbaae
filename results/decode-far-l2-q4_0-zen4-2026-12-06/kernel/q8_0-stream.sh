#!/bin/sh
# Builds ./q8_0-stream (in the current folder): ../../x4-avx2-one-stream-2026-12-01/micro/x4.c
# with its three kernels replaced by four variants of the AVX-512 set's one-row Q8_0 stream
# (q8_0x4_512), each a unit of TREE (a8768eb's Sources/CQBKernels with ../tried/q8_0-far-l2.diff
# applied) under its own prefix: off (the engine's setting on AMD), its own prefetches, and far
# L2 hints 12 or 24 KiB ahead; the read probe over the same bytes as before. Run:
#   TREE=... sh q8_0-stream.sh && ./q8_0-stream q8_0 21 1
set -e
here=$(cd "$(dirname "$0")" && pwd)
: "${TREE:?the kernels tree}"
tmp=$(mktemp -d)
sed -e 's/^SET(two2) SET(one2) SET(t512)$/SET(u512) SET(t512) SET(f512) SET(g512)\
#define PF(p) int32_t qb_##p##_set_stream_prefetch(int32_t);\
PF(u512) PF(t512) PF(f512) PF(g512)/' \
    -e 's/{"avx2, two groups (base)", qb_two2_matvec_repacked},/{"avx512, off (AMD'"'"'s setting)", qb_u512_matvec_repacked},\
    {"avx512, own prefetches", qb_t512_matvec_repacked},/' \
    -e 's/{"avx2, one group (tree)", qb_one2_matvec_repacked},/{"avx512, far L2 12 KiB", qb_f512_matvec_repacked},/' \
    -e 's/{"avx512 (tree)", qb_t512_matvec_repacked},/{"avx512, far L2 24 KiB", qb_g512_matvec_repacked},/' \
    -e 's/^    pthread_t th;$/    qb_u512_set_stream_prefetch(0); qb_t512_set_stream_prefetch(1);\
    qb_f512_set_stream_prefetch(0); qb_g512_set_stream_prefetch(0);\
    pthread_t th;/' \
    "$here/../../x4-avx2-one-stream-2026-12-01/micro/x4.c" > "$tmp/q8_0-stream.c"
grep -q 'qb_g512_set_stream_prefetch(0)' "$tmp/q8_0-stream.c"
P="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
unit() {  # prefix, flags
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on $2 -I"$TREE/Sources/CQBKernels/kernels" -I"$TREE/Sources/CQBKernels/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit u512 "$P"
unit t512 "$P"
unit f512 "$P -DQ8FAR=12288 -DQ8LINES=3"
unit g512 "$P -DQ8FAR=24576 -DQ8LINES=3"
clang -O2 -march=x86-64-v3 -I"$TREE/Sources/CQBKernels/include" "$tmp/q8_0-stream.c" "$tmp"/u_*.o -lpthread -lm -o q8_0-stream
rm -rf "$tmp"
