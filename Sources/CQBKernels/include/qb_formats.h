#ifndef QB_FORMATS_H
#define QB_FORMATS_H
#include <stdint.h>

// Block-quantized weight formats, bit-compatible with GGML's (GGUF files) and MLX's.
// Type ids are GGML's.
enum {
    QB_F32 = 0, QB_F16 = 1, QB_Q4_0 = 2, QB_Q4_1 = 3, QB_Q5_0 = 6, QB_Q5_1 = 7, QB_Q8_0 = 8,
    QB_Q2_K = 10, QB_Q3_K = 11, QB_Q4_K = 12, QB_Q5_K = 13, QB_Q6_K = 14, QB_IQ4_NL = 20, QB_IQ4_XS = 23,
    QB_BF16 = 30,
};

// Elements per block and bytes per block of a GGML type (0 for unknown types).
int64_t qb_block_size(int32_t type);
int64_t qb_block_bytes(int32_t type);

// Widens `n` elements (a whole number of blocks) of GGML type `type` to f32.
void qb_dequantize_row(int32_t type, const void *src, float *dst, int64_t n);

// MLX affine quantization: w = scale * q + bias per group of `group` values along a row;
// q packed little-endian into uint32 words, low bits first. Scales and biases have
// dtype `sdtype` (QB_F32, QB_F16 or QB_BF16), cols/group per row.
void qb_dequantize_row_mlx(int32_t bits, int64_t group, const uint32_t *q, const void *scales, const void *biases,
                           int32_t sdtype, float *dst, int64_t n);

#endif
