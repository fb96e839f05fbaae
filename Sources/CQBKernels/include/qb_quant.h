#ifndef QB_QUANT_H
#define QB_QUANT_H
#include <stdint.h>

// Block-quantized weight formats, bit-compatible with GGML's (GGUF files) and MLX's.
// Type ids are GGML's.
enum {
    QB_F32 = 0, QB_F16 = 1, QB_Q4_0 = 2, QB_Q4_1 = 3, QB_Q5_0 = 6, QB_Q5_1 = 7, QB_Q8_0 = 8,
    QB_Q4_K = 12, QB_Q5_K = 13, QB_Q6_K = 14, QB_IQ4_XS = 23, QB_BF16 = 30,
};

// Elements per block and bytes per block of a GGML type (0 for unknown types).
int64_t qb_block_size(int32_t type);
int64_t qb_block_bytes(int32_t type);

// Activations quantized for integer dot products: one block per 32 values,
// x[i] ~= d * qs[i], with s = d * sum(qs) (for formats with an offset term).
typedef struct {
    float d;
    float s;
    int8_t qs[32];
} qb_q8a;

void qb_quantize_q8a(const float *x, qb_q8a *y, int64_t n);

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

// Values per activation block a GGML type is dotted with: 256 (q8k) for Q4_K and Q6_K,
// 32 (q8a) for the others.
int32_t qb_activation_block(int32_t type);

// Widens `n` elements (a whole number of blocks) of GGML type `type` to f32.
void qb_dequantize_row(int32_t type, const void *src, float *dst, int64_t n);

// y[r] = dot(W[r], x) for rows [r0, r1) of a GGML-typed matrix whose rows are
// `cols` wide; x is given quantized (q8a, cols/32 blocks). Not for Q4_K and Q6_K (NaN).
void qb_matvec_ggml(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols);
// The same for Q4_K and Q6_K against q8k activations (cols/256 blocks).
void qb_matvec_kquant(int32_t type, const void *w, const qb_q8k *x, float *y, int64_t r0, int64_t r1, int64_t cols);
// One row by the portable C version of qb_matvec_kquant's kernel (for tests).
float qb_dot_kquant_portable(int32_t type, const void *w, const qb_q8k *x, int64_t cols);

// MLX affine quantization: w = scale * q + bias per group of `group` values along a row;
// q packed little-endian into uint32 words, low bits first. Scales and biases have
// dtype `sdtype` (QB_F32, QB_F16 or QB_BF16), cols/group per row.
void qb_dequantize_row_mlx(int32_t bits, int64_t group, const uint32_t *q, const void *scales, const void *biases,
                           int32_t sdtype, float *dst, int64_t n);
void qb_matvec_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                   const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols);

// Weight quantizers (GGML's reference algorithms for Q8_0/Q4_0/Q4_1/Q5_0/Q5_1; Q4_K by
// per-sub-block min/max with 6-bit scales), `n` a multiple of the block size.
void qb_quantize_row(int32_t type, const float *x, void *dst, int64_t n);
// MLX's affine quantizer (as mlx.core.quantize); bits 4 or 8, group 32/64/128.
void qb_quantize_row_mlx(int32_t bits, int64_t group, const float *x, uint32_t *q, float *scales, float *biases, int64_t n);

#endif
