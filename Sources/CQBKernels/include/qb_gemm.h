#ifndef QB_GEMM_H
#define QB_GEMM_H
#include <stdint.h>
#include "qb_activation.h"
#include "qb_formats.h"

// Prefill products of quantized weights on int8 dot products. Every format taken here is,
// per 32 values of a row, w = D * q + M with q unsigned (Q4_0: q in 0..15, D = d, M = -8d;
// Q5_0: q in 0..31 (nibble + 16 x fifth bit), D = d, M = -16d; Q5_1: likewise, M = m;
// Q4_K: D = d * sc, M = -dmin * m; MLX: D = scale, M = bias; Q8_0: q = stored + 128,
// M = -128d). A tile of 16 rows is unpacked once per product into `QB_TILE_BLOCK_BYTES`
// per 32 columns: D[16] and M[16] as f32, then 8 steps of 64 bytes, step s holding values
// 4s..4s+3 of rows 0..15 (4 bytes per row). One unsigned x signed byte dot-accumulate
// (VNNI) covers four values of sixteen rows against four broadcast bytes of an activation
// row, and the sixteen lanes of the result are the sixteen rows.
#define QB_TILE_ROWS 16
#define QB_TILE_BLOCK_BYTES 640

// Whether the set has vector code for values wider than 4 bits (Q5_0, Q5_1, Q8_0, 8-bit
// MLX): VNNI accumulates in 32 bits; the AVX2 code widens its 16-bit sums per value width
// (qb_gemm.c). The portable set's scalar tiles are slower than dequantizing for sgemm.
int qb_gemm_wide_values(void);

// Without VNNI (the avx2 set) 8-bit values (Q8_0, 8-bit MLX) are tiled as 16-bit ones, for
// vpmaddwd: per 32 columns D[16] and M[16] as above, then 16 steps of 64 bytes, step s
// holding values 2s and 2s + 1 of rows 0..15 (two int16 per row).
#define QB_TILE16_BLOCK_BYTES 1152
// Bytes per 32 columns of the active set's tile of `bits`-bit values: QB_TILE_BLOCK_BYTES,
// or QB_TILE16_BLOCK_BYTES for 8-bit values on the avx2 set.
int64_t qb_gemm_tile_block_bytes(int32_t bits);

// Unpacks rows [r0, r0 + 16) of a Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or Q4_K (plain rows when
// `interleaved` is 0, else the decode layout of qb_repack.h with that many rows per group:
// 4, or 16 for Q4_K and Q4_0), Q5_K, IQ4_NL or IQ4_XS matrix into a tile of cols / 32
// blocks (each qb_gemm_tile_block_bytes long; Q4_K where qb_gemm_activation_block gives 256,
// cols / 256 super-blocks of QB_TILE4K_BYTES).
void qb_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
// Likewise for 4- or 8-bit MLX rows (scales and biases of dtype `sdtype`, cols / group per row).
void qb_pack_tile_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases,
                      int32_t sdtype, int64_t r0, int64_t cols, uint8_t *tile);
// Likewise for MLX rows in the 16-row decode layout (qb_repack_mlx_x16; r0 a multiple of 16):
// the same tile as the plain rows give.
void qb_pack_tile_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, int64_t r0, int64_t cols,
                          uint8_t *tile);
// For the symmetric formats (Q4_0, Q5_0, Q8_0 as tiled; Q6_K and Q3_K but on the avx2 set): 1 with the offset k the
// packers' values carry (w = D * (q + k)) and the values per offset (32; Q6_K and Q3_K 16), the
// arguments qb_q8a_offsets takes for the products below; for Q2_K, whose minimums meet the
// activations' plain sums per 16 values, 1 with width 16 and k = 1; 0 for the other formats.
int qb_tile_offset(int32_t type, int32_t *width, int32_t *k);
// `tiles` tiles side by side, tile t at tile + t x cols / 32 x qb_gemm_tile_block_bytes(bits):
// y[c * ystride + 16 t + j] = row j of tile t dotted with activation row c, for c < count;
// the activations are q8a blocks, cols / 32 per row. The tile's values have at most `bits` bits
// (4: Q4_0, Q4_K, 4-bit MLX; 5: Q5_0, Q5_1; 8: Q8_0, 8-bit MLX); the AVX2 code sums 4- and
// 5-bit values in 16-bit lanes only as far as that width allows, and takes 8-bit values
// from their 16-bit tiles. For the symmetric formats (M = k x D: Q4_0, Q5_0, Q8_0) `offs`
// holds the activations' offsets (qb_q8a_offsets, width 32, cols / 32 per row): each block's
// integer sum then takes its offset and is rounded once, acc = fmaf(sum + off, D x d, acc),
// and M is not read; NULL adds M x s in f32 instead (the other formats). Each output is the
// same whatever `tiles` and `count` (the AVX-512 code takes neighbouring tiles in pairs, each
// activation load serving both).
void qb_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count,
                   int64_t cols, float *y, int64_t ystride);

// On the vector sets (avx2, avx512) Q4_K's products take the activations per 256 values with
// a power-of-two step per 32 (qb_q8s; qb_gemm_activation_block): each sub-block's integer
// sum, shifted to the super-block's finest step, meets its integer scale (and the minimums)
// in integers, and the f32 work is per 256 values; both sets compute the same integers and
// round them alike, so their outputs agree bit for bit. Q4_K's tiles on those sets are per
// super-block (QB_TILE4K_BYTES): the rows' d[16] and -dmin[16] as f32; then for each
// sub-block j and shift s in 0..3 (the activations' q8s shift) the rows' scales sc << s as
// dwords (rows 0..15 at 128 + 256 j + 64 s): on the avx2 set in both 16-bit halves (its
// vpmaddwd takes them against pairs of 16-bit sums), on the avx512 set alone (its vpdpwssd
// takes the low half against sums within int16); then for each pair k of sub-blocks the rows'
// minimums (m_2k, m_2k+1) as int16 pairs (at 2176 + 64 k); then sub-block j's 8 steps of
// values as in the tiles above (at 2432 + 512 j). qb_pack_tile_ggml writes it for Q4_K on such a set, from plain rows or the
// 16-row decode layout alike; the portable set keeps the tiles above for Q4_K.
#define QB_TILE4K_BYTES 6528
// Values per activation block of the set's prefill product for GGML type `type`: 256 where
// it takes qb_gemm_tiles_q8s (Q4_K on the vector sets), else 32.
int32_t qb_gemm_activation_block(int32_t type);
// `tiles` such Q4_K tiles (cols / 256 x QB_TILE4K_BYTES apart) against `count` activation
// rows of cols / 256 q8s blocks; outputs as qb_gemm_tiles'. Per row and super-block:
// d x S - dmin x M, S = sum over sub-blocks j of 2^shift[j] x sc_j x (values . activations)
// and M = sum of mn_j x sums[j], both exact integers, times the activations' d.
void qb_gemm_tiles_q8s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y,
                       int64_t ystride);
// How the avx512 set's qb_gemm_tiles_q8s meets each sub-block's sums with its scale: on each
// 16 values' sum by a vpdpwssd (1), or on the 32 values' by a vpmulld and a vpaddd (0). The
// integers and outputs are the same either way; the cost is not: Intel's cores split a
// vpmulld in two, AMD's Zen 4 does not. qb_dispatch.c sets it for the CPU when it first
// chooses a set (1 on Intel's CPUs); the other sets ignore it. Returns the setting it
// replaces.
int32_t qb_set_q4k_dpwssd(int32_t on);

// Q6_K tiles: per 32 columns, D[2][16] as f32 (one per 16 values: D = d * sc), then the 8
// steps of 6-bit values (0..63) as above. Products take the activations' offsets per 16
// values (`offs16`: qb_q8a_offsets with width 16 and k = -32, cols / 16 per row), as
// qb_gemm_tiles' symmetric formats do per 32; `tiles` of them side by side as there. The
// packer reads plain rows (`interleaved` 0) or the 16-row decode layout (16, qb_repack.h;
// r0 a multiple of 16), and gives the same tile from either.
#define QB_TILE6_BLOCK_BYTES 640
// Without VNNI (the avx2 set) Q6_K's and Q3_K's tiles hold signed values instead: per 32
// columns the rows' d[16] as f32, their two 16-value scales as int16 pairs sc[16][2], K[16]
// as int32 (-128 x the sum over the two halves of sc x the half's values: the products take
// their activations as unsigned bytes, x + 128, and start each sum at K), then the 8 steps
// of values (Q6_K q - 32, Q3_K q - 4) as int8; the products take no offsets (qb_tile_offset
// gives none).
#define QB_TILE6S_BLOCK_BYTES 704
// Bytes per 32 columns of the active set's tile for Q6_K, Q3_K or Q2_K (`type`).
int64_t qb_gemm_tile6_block_bytes(int32_t type);
void qb_pack_tile_q6k(const void *w, int32_t interleaved, int64_t r0, int64_t cols, uint8_t *tile);
// Q3_K rows (plain) into the same tiles: D = d x sc per 16 values, the values unsigned (0..7,
// w = D (q - 4)), so the products take offsets with width 16 and k = -4 (qb_tile_offset;
// on the avx2 set signed values and no offsets, as Q6_K's).
// qb_gemm_tiles_q3k multiplies them as qb_gemm_tiles6 does, with the same outputs; on AVX2
// it widens the 16-bit sums half as often, which the values' 3 bits allow.
void qb_pack_tile_q3k(const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_gemm_tiles_q3k(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count,
                       int64_t cols, float *y, int64_t ystride);
// Q2_K tiles: Q6_K's D[2][16] (d x (sc & 15)) and steps of 2-bit values, then the minimums
// M[2][16] = dmin x (sc >> 4), one per 16 values of each row. The products start each
// 16-value sum at 0 and subtract M x d x S, S the activations' integer sum over those 16
// values (`sums16`: qb_q8a_offsets with width 16 and k = 1, cols / 16 per row).
#define QB_TILE2K_BLOCK_BYTES 768
void qb_pack_tile_q2k(const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_gemm_tiles_q2k(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *sums16, int64_t count,
                       int64_t cols, float *y, int64_t ystride);
void qb_gemm_tiles6(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count,
                    int64_t cols, float *y, int64_t ystride);

// Prefill products of dense weights (QB_F32, QB_F16 or QB_BF16, row-major [rows][cols]) with
// f32 activations: y[c * ystride + r] = dot(W[r], x[c]) for rows [r0, r1) (r1 - r0 a
// multiple of 4) and activation rows c < count. Each product is summed in one fixed order
// whatever the row range. Returns 0 when this CPU has no kernel for it (the portable set).
int qb_gemm_dense(int32_t type, const void *w, int64_t r0, int64_t r1, int64_t cols, const float *x, int64_t count,
                  float *y, int64_t ystride);

#endif
