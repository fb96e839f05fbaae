#ifndef QB_ACTIVATION_H
#define QB_ACTIVATION_H
#include <stdint.h>

// Activations quantized for integer dot products: one block per 32 values,
// x[i] ~= d * qs[i], with s = d * sum(qs) (for formats with an offset term).
typedef struct {
    float d;
    float s;
    int8_t qs[32];
} qb_q8a;

void qb_quantize_q8a(const float *x, qb_q8a *y, int64_t n);

// The integer offset terms of symmetric formats (w = d * (q + k) with q unsigned: Q4_0 k = -8,
// Q5_0 -16, Q8_0 stored + 128 with -128, Q6_K -32): offs[j] = k * (sum of the j-th run of
// `width` quants) for the blocks' 32 / width runs each, in order. Added to a block's integer
// sum, the offset leaves the exact sum of w / d times the activations, rounded once.
void qb_q8a_offsets(const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs);

// Activations for K-quant weights (GGML's Q8_K): one block per 256 values, x[i] ~= d * qs[i],
// with the sums of qs per 16 values (for the formats' offsets and minimums).
typedef struct {
    float d;
    int16_t s16[16];
    int8_t qs[256];
    // qs again, sub-blocks in the order a 64-byte load of Q4_K quants pairs them with
    // (0, 2, 1, 3, 4, 6, 5, 7): laid out once per input, not once per row range.
    int8_t qs_q4k[256];
} qb_q8k;

void qb_quantize_q8k(const float *x, qb_q8k *y, int64_t n);

// Prefill activations for the products that meet a K-quant super-block's integer scales in
// integers (qb_gemm_tiles_q8s): one step per 256 values as q8k, D = max|x| / 127, but each
// 32-value sub-block j is rounded at D / 2^k_j, k_j in 0..3 the largest with
// max|x over j| x 2^k_j <= max|x|, so a quiet sub-block beside a loud one keeps up to 3 more
// bits (a single step per 256 costs a K-quant file ~0.3% perplexity). With d = D / 8 and
// shift[j] = 3 - k_j: x[i] ~= d x 2^shift[j] x qs[i], and sums[j] = 2^shift[j] x (the sum of
// sub-block j's qs), within int16 (4064 x 8).
typedef struct {
    float d;
    int32_t shift[8];
    int16_t sums[8];
    int8_t qs[256];
} qb_q8s;

void qb_quantize_q8s(const float *x, qb_q8s *y, int64_t n);

// Values per activation block a GGML type is dotted with: 256 (q8k) for the formats with
// 256-value super-blocks (Q2_K to Q6_K, IQ4_XS), 32 (q8a) for the others.
int32_t qb_activation_block(int32_t type);

#endif
