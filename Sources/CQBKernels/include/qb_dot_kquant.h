#ifndef QB_DOT_KQUANT_H
#define QB_DOT_KQUANT_H
#include <stdint.h>
#include "qb_activation.h"

// y[r] = dot(W[r], x) for rows [r0, r1) of a Q2_K, Q3_K, Q4_K, Q5_K, Q6_K or IQ4_XS matrix whose rows are `cols`
// wide, against q8k activations (cols/256 blocks).
void qb_matvec_kquant(int32_t type, const void *w, const qb_q8k *x, float *y, int64_t r0, int64_t r1, int64_t cols);
// Batched decode: ys[i][r] for rows [r0, r1) against xs[i] for i < n, each bitwise what
// qb_matvec_kquant gives for xs[i] alone; each super-block's values are unpacked once for up
// to four activation rows at a time (Q4_K to IQ4_XS on the AVX2 and AVX-512 sets; Q2_K, Q3_K
// and the portable set take them one by one while the row is in cache).
void qb_matvec_kquant_rows(int32_t type, const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t r0,
                           int64_t r1, int64_t cols);
// y[16g..16g+15] for row groups [g0, g1) of a Q4_K matrix in the 16-row decode layout of
// qb_repack.h, against q8k activations.
void qb_matvec_q4_k_x16(const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols);
// Batched decode: ys[i][16g..16g+15] = the groups [g0, g1) against xs[i] for i < n, each
// output bitwise what qb_matvec_q4_k_x16 gives for xs[i] alone; each group is loaded and
// unpacked once for up to eight rows at a time (AVX2 and AVX-512 sets), or read row by row
// while in cache (portable set).
void qb_matvec_q4_k_x16_rows(const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1,
                             int64_t cols);
// y[16g..16g+15] for row groups [g0, g1) of a Q6_K matrix in the 16-row decode layout of
// qb_repack.h, against q8k activations (vector code on the AVX-512 set, the only one that
// repacks Q6_K; the others read it by its definition).
void qb_matvec_q6_k_x16(const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols);
// Batched decode, as qb_matvec_q4_k_x16_rows: up to eight rows at a time on the AVX-512 set.
void qb_matvec_q6_k_x16_rows(const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1,
                             int64_t cols);
// One row by the portable C version of qb_matvec_kquant's kernel (for tests).
float qb_dot_kquant_portable(int32_t type, const void *w, const qb_q8k *x, int64_t cols);

#endif
