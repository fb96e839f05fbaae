// Every public function of the kernel sources in this folder: they are compiled once per
// instruction set (qb_isa_unit.h) and reached through one table of pointers per set
// (qb_dispatch.c), so this list is what the sets, the table and the public entry points
// are all built from. A function missing here fails the link (its unprefixed name is then
// defined once per set), so the list cannot silently fall behind the headers.
//
//   R(return type, name without "qb_", (parameters), (arguments))   returns a value
//   V(name without "qb_", (parameters), (arguments))                returns nothing
#ifndef QB_KERNEL_LIST_H
#define QB_KERNEL_LIST_H
#include "../include/qb_activation.h"
#include "../include/qb_attention.h"
#include "../include/qb_dense.h"
#include "../include/qb_dot_ggml.h"
#include "../include/qb_dot_kquant.h"
#include "../include/qb_dot_mlx.h"
#include "../include/qb_formats.h"
#include "../include/qb_gemm.h"
#include "../include/qb_matvec_tiles.h"
#include "../include/qb_ops.h"
#include "../include/qb_quantizer.h"
#include "../include/qb_repack.h"
#include "../include/qb_roofline.h"

#define QB_KERNEL_LIST(R, V)                                                                                         \
    /* qb_activation.h */                                                                                            \
    V(quantize_q8a, (const float *x, qb_q8a *y, int64_t n), (x, y, n))                                               \
    V(quantize_q8k, (const float *x, qb_q8k *y, int64_t n), (x, y, n))                                               \
    V(quantize_q8s, (const float *x, qb_q8s *y, int64_t n), (x, y, n))                                               \
    R(int32_t, activation_block, (int32_t type), (type))                                                             \
    V(q8a_offsets, (const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs), (x, blocks, width, k, offs)) \
    /* qb_attention.h */                                                                                             \
    V(attention_head,                                                                                                \
      (const float *q, const float *k, const float *v, int64_t first, int64_t n, int64_t head_dim, float scale,      \
       float *scores, float *out),                                                                                   \
      (q, k, v, first, n, head_dim, scale, scores, out))                                                             \
    V(store_kv_f16, (const float *src, uint16_t *dst, int64_t head_dim), (src, dst, head_dim))                       \
    V(store_kv_q8_0, (const float *src, void *dst, int64_t head_dim), (src, dst, head_dim))                          \
    V(attention_head_f16,                                                                                            \
      (const float *q, const uint16_t *k, const uint16_t *v, int64_t first, int64_t n, int64_t head_dim, float scale, \
       float *scores, float *out),                                                                                   \
      (q, k, v, first, n, head_dim, scale, scores, out))                                                             \
    V(attention_head_q8_0,                                                                                           \
      (const float *q, const void *k, const void *v, int64_t first, int64_t n, int64_t head_dim, float scale,        \
       float *scores, float *out),                                                                                   \
      (q, k, v, first, n, head_dim, scale, scores, out))                                                             \
    V(attention_group,                                                                                               \
      (int32_t type, const float *q, const void *k, const void *v, int64_t first, int64_t n, int64_t head_dim,       \
       int64_t group, float scale, float *scores, float *out),                                                       \
      (type, q, k, v, first, n, head_dim, group, scale, scores, out))                                                \
    V(attention_rows,                                                                                                \
      (int32_t type, const float *q, int64_t qstride, int64_t npos, const void *k, const void *v, int64_t end0,      \
       int64_t window, int64_t head_dim, int64_t group, float scale, float *scores, float *out, int64_t ostride),     \
      (type, q, qstride, npos, k, v, end0, window, head_dim, group, scale, scores, out, ostride))                     \
    /* qb_dense.h */                                                                                                 \
    V(matvec_f32, (const float *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols),      \
      (w, x, y, row_begin, row_end, cols))                                                                           \
    V(matvec_f16, (const uint16_t *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols),   \
      (w, x, y, row_begin, row_end, cols))                                                                           \
    V(matvec_bf16, (const uint16_t *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols),  \
      (w, x, y, row_begin, row_end, cols))                                                                           \
    V(f16_to_f32, (const uint16_t *src, float *dst, int64_t n), (src, dst, n))                                       \
    V(bf16_to_f32, (const uint16_t *src, float *dst, int64_t n), (src, dst, n))                                      \
    V(f32_to_f16, (const float *src, uint16_t *dst, int64_t n), (src, dst, n))                                       \
    V(f32_to_bf16, (const float *src, uint16_t *dst, int64_t n), (src, dst, n))                                      \
    R(float, dot_f32, (const float *a, const float *b, int64_t n), (a, b, n))                                        \
    V(axpy_f32, (float a, const float *x, float *y, int64_t n), (a, x, y, n))                                        \
    /* qb_dot_ggml.h, qb_dot_kquant.h, qb_dot_mlx.h */                                                               \
    V(matvec_ggml, (int32_t type, const void *w, const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols),   \
      (type, w, x, y, r0, r1, cols))                                                                                 \
    V(matvec_kquant, (int32_t type, const void *w, const qb_q8k *x, float *y, int64_t r0, int64_t r1, int64_t cols), \
      (type, w, x, y, r0, r1, cols))                                                                                 \
    V(matvec_kquant_rows,                                                                                            \
      (int32_t type, const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t r0, int64_t r1,    \
       int64_t cols),                                                                                                \
      (type, w, xs, ys, n, r0, r1, cols))                                                                            \
    R(float, dot_kquant_portable, (int32_t type, const void *w, const qb_q8k *x, int64_t cols), (type, w, x, cols))  \
    V(matvec_q4_k_x16, (const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols),           \
      (w, x, y, g0, g1, cols))                                                                                       \
    V(matvec_q4_k_x16_rows,                                                                                          \
      (const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t cols),   \
      (w, xs, ys, n, g0, g1, cols))                                                                                  \
    V(matvec_q6_k_x16, (const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols),           \
      (w, x, y, g0, g1, cols))                                                                                       \
    V(matvec_q6_k_x16_rows,                                                                                          \
      (const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t cols),   \
      (w, xs, ys, n, g0, g1, cols))                                                                                  \
    V(matvec_mlx,                                                                                                    \
      (int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,       \
       const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols),                                             \
      (bits, group, w, scales, biases, sdtype, x, y, r0, r1, cols))                                                  \
    V(matvec_mlx_x16,                                                                                                \
      (int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *x, float *y, int64_t g0, int64_t g1,  \
       int64_t cols),                                                                                                \
      (bits, group, sdtype, w, x, y, g0, g1, cols))                                                                  \
    V(matvec_mlx_x16_rows,                                                                                           \
      (int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *const *xs, float *const *ys,        \
       int64_t n, int64_t g0, int64_t g1, int64_t cols),                                                             \
      (bits, group, sdtype, w, xs, ys, n, g0, g1, cols))                                                             \
    /* qb_formats.h */                                                                                               \
    R(int64_t, block_size, (int32_t type), (type))                                                                   \
    R(int64_t, block_bytes, (int32_t type), (type))                                                                  \
    V(dequantize_row, (int32_t type, const void *src, float *dst, int64_t n), (type, src, dst, n))                   \
    V(dequantize_row_mlx,                                                                                            \
      (int32_t bits, int64_t group, const uint32_t *q, const void *scales, const void *biases, int32_t sdtype,       \
       float *dst, int64_t n),                                                                                       \
      (bits, group, q, scales, biases, sdtype, dst, n))                                                              \
    /* qb_gemm.h */                                                                                                  \
    R(int, gemm_wide_values, (void), ())                                                                             \
    R(int64_t, gemm_tile_block_bytes, (int32_t bits), (bits))                                                        \
    R(int64_t, gemm_tile6_block_bytes, (int32_t type), (type))                                                       \
    R(int32_t, gemm_activation_block, (int32_t type), (type))                                                        \
    R(int, tile_offset, (int32_t type, int32_t *width, int32_t *k), (type, width, k))                                \
    V(pack_tile_ggml, (int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile),   \
      (type, interleaved, w, r0, cols, tile))                                                                        \
    V(pack_tile_mlx,                                                                                                 \
      (int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,       \
       int64_t r0, int64_t cols, uint8_t *tile),                                                                     \
      (bits, group, w, scales, biases, sdtype, r0, cols, tile))                                                      \
    V(pack_tile_mlx_x16,                                                                                             \
      (int32_t bits, int64_t group, int32_t sdtype, const void *w, int64_t r0, int64_t cols, uint8_t *tile),         \
      (bits, group, sdtype, w, r0, cols, tile))                                                                      \
    V(gemm_tiles,                                                                                                    \
      (const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count,         \
       int64_t cols, float *y, int64_t ystride),                                                                     \
      (tile, tiles, bits, x, offs, count, cols, y, ystride))                                                         \
    V(pack_tile_q6k, (const void *w, int32_t interleaved, int64_t r0, int64_t cols, uint8_t *tile),                   \
      (w, interleaved, r0, cols, tile))                                                                              \
    V(pack_tile_q3k, (const void *w, int64_t r0, int64_t cols, uint8_t *tile), (w, r0, cols, tile))                  \
    V(pack_tile_q2k, (const void *w, int64_t r0, int64_t cols, uint8_t *tile), (w, r0, cols, tile))                  \
    V(gemm_tiles_q2k,                                                                                                \
      (const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *sums16, int64_t count, int64_t cols,      \
       float *y, int64_t ystride),                                                                                   \
      (tile, tiles, x, sums16, count, cols, y, ystride))                                                             \
    V(gemm_tiles_q3k,                                                                                                \
      (const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count, int64_t cols,       \
       float *y, int64_t ystride),                                                                                   \
      (tile, tiles, x, offs16, count, cols, y, ystride))                                                             \
    V(gemm_tiles_q8s,                                                                                                \
      (const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y, int64_t ystride),  \
      (tile, tiles, x, count, cols, y, ystride))                                                                     \
    R(int32_t, set_q4k_dpwssd, (int32_t on), (on))                                                                   \
    V(gemm_tiles6,                                                                                                   \
      (const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count, int64_t cols,       \
       float *y, int64_t ystride),                                                                                   \
      (tile, tiles, x, offs16, count, cols, y, ystride))                                                             \
    R(int, gemm_dense,                                                                                               \
      (int32_t type, const void *w, int64_t r0, int64_t r1, int64_t cols, const float *x, int64_t count,             \
       float *y, int64_t ystride),                                                                                   \
      (type, w, r0, r1, cols, x, count, y, ystride))                                                                 \
    /* qb_matvec_tiles.h */                                                                                          \
    R(int, matvec_q4_0_tiles_fast, (void), ())                                                                       \
    V(matvec_q4_0_tiles,                                                                                             \
      (const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys, int64_t n, int64_t g0,   \
       int64_t g1, int64_t cols),                                                                                    \
      (w, xs, offs, ys, n, g0, g1, cols))                                                                            \
    V(matvec_q4_0_x16,                                                                                               \
      (const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys, int64_t n, int64_t g0,  \
       int64_t g1, int64_t cols),                                                                                    \
      (w, xs, offs, ys, n, g0, g1, cols))                                                                            \
    R(int32_t, set_stream_prefetch, (int32_t on), (on))                                                              \
    /* qb_ops.h */                                                                                                   \
    V(rmsnorm, (const float *x, const float *weight, float *out, int64_t n, float eps), (x, weight, out, n, eps))     \
    V(softmax, (float *x, int64_t n), (x, n))                                                                        \
    R(int64_t, argmax_f32, (const float *x, int64_t n), (x, n))                                                      \
    R(int32_t, all_finite_f32, (const float *x, int64_t n), (x, n))                                                  \
    V(swiglu, (float *gate, const float *up, int64_t n), (gate, up, n))                                              \
    V(geglu, (float *gate, const float *up, int64_t n), (gate, up, n))                                               \
    /* qb_quantizer.h */                                                                                             \
    R(int64_t, first_beyond, (const float *x, int64_t n, float limit), (x, n, limit))                                \
    V(quantize_row, (int32_t type, const float *x, void *dst, int64_t n), (type, x, dst, n))                         \
    V(quantize_row_mlx,                                                                                              \
      (int32_t bits, int64_t group, const float *x, uint32_t *q, float *scales, float *biases, int64_t n),           \
      (bits, group, x, q, scales, biases, n))                                                                        \
    /* qb_repack.h */                                                                                                \
    R(int, repack_supported, (int32_t type, int64_t rows, int64_t cols), (type, rows, cols))                         \
    R(int32_t, repack_group_rows, (int32_t type, int64_t rows), (type, rows))                                        \
    R(int64_t, repack_bytes, (int32_t type, int64_t rows, int64_t cols), (type, rows, cols))                         \
    V(repack, (int32_t type, int32_t group, const void *src, void *dst, int64_t g0, int64_t g1, int64_t cols),       \
      (type, group, src, dst, g0, g1, cols))                                                                         \
    V(unpack_repacked,                                                                                               \
      (int32_t type, int32_t group, const void *src, void *dst, int64_t r0, int64_t r1, int64_t cols),               \
      (type, group, src, dst, r0, r1, cols))                                                                         \
    V(dequantize_repacked,                                                                                           \
      (int32_t type, int32_t group, const void *w, float *dst, int64_t r0, int64_t r1, int64_t cols),                \
      (type, group, w, dst, r0, r1, cols))                                                                           \
    R(int, mlx_x16_supported, (int32_t bits, int64_t group, int64_t rows, int64_t cols), (bits, group, rows, cols))  \
    R(int64_t, mlx_x16_block_bytes, (int32_t bits, int64_t group, int32_t sdtype), (bits, group, sdtype))            \
    R(int64_t, mlx_x16_bytes, (int32_t bits, int64_t group, int32_t sdtype, int64_t rows, int64_t cols),             \
      (bits, group, sdtype, rows, cols))                                                                             \
    V(repack_mlx_x16,                                                                                                \
      (int32_t bits, int64_t group, int32_t sdtype, const uint32_t *w, const void *scales, const void *biases,       \
       void *dst, int64_t g0, int64_t g1, int64_t cols),                                                             \
      (bits, group, sdtype, w, scales, biases, dst, g0, g1, cols))                                                   \
    V(dequantize_mlx_x16,                                                                                            \
      (int32_t bits, int64_t group, int32_t sdtype, const void *w, float *dst, int64_t r0, int64_t r1, int64_t cols), \
      (bits, group, sdtype, w, dst, r0, r1, cols))                                                                   \
    V(matvec_repacked, (int32_t type, const void *w, const qb_q8a *x, float *y, int64_t g0, int64_t g1, int64_t cols), \
      (type, w, x, y, g0, g1, cols))                                                                                 \
    V(matvec_repacked_rows,                                                                                          \
      (int32_t type, const void *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1,    \
       int64_t cols),                                                                                                \
      (type, w, xs, ys, n, g0, g1, cols))                                                                            \
    /* qb_roofline.h */                                                                                              \
    R(uint64_t, read_bandwidth_kernel, (const void *p, int64_t bytes), (p, bytes))                                   \
    R(double, fma_peak_kernel, (int64_t iterations, float *sink), (iterations, sink))                                \
    R(double, int8_peak_kernel, (int64_t iterations, int32_t *sink), (iterations, sink))

// One set's entry points.
#define QB_KERNEL_FIELD_R(ret, name, params, args) ret(*name) params;
#define QB_KERNEL_FIELD_V(name, params, args) void(*name) params;
typedef struct qb_kernel_table {
    QB_KERNEL_LIST(QB_KERNEL_FIELD_R, QB_KERNEL_FIELD_V)
} qb_kernel_table;

#endif
