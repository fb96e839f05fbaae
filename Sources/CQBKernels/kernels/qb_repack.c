// Four-row interleaved GGML blocks for decode, and Q4_K's, Q6_K's and Q4_0's 16-row groups
// (layouts in qb_repack.h; Q4_K's and Q6_K's products are in qb_dot_kquant.c, Q4_0's in
// qb_matvec_tiles.c). The
// scalar code is the definition; the AVX2 kernels and the AVX-512 set's 16-row tiles
// (qb_tile16.h) are the fast ones and are tested equal to it.
#include "qb_repack.h"
#include "qb_q6k_x16.h"
#include "qb_scalar.h"
#include "qb_tile16.h"
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif


// The four-row layout's types.
static int x4_type(int32_t type) {
    return type == QB_Q4_0 || type == QB_Q4_1 || type == QB_Q5_0 || type == QB_Q5_1 || type == QB_Q8_0;
}

int32_t qb_repack_group_rows(int32_t type, int64_t rows) {
    if (type == QB_Q4_K) return QB_Q4K_X16_ROWS;
#if defined(__AVX2__)
    // The AVX-512 and AVX2 sets have the sixteen-row Q6_K and Q4_0 kernels in vector code;
    // the portable set keeps Q6_K's plain rows and Q4_0's four-row layout (and reads these
    // by their definitions).
    if (type == QB_Q6_K) return QB_Q6K_X16_ROWS;
    if (type == QB_Q4_0 && rows % QB_Q40_X16_ROWS == 0) return QB_Q40_X16_ROWS;
#else
    (void)rows;
#endif
    return x4_type(type) ? 4 : 0;
}

int qb_repack_supported(int32_t type, int64_t rows, int64_t cols) {
    int64_t g = qb_repack_group_rows(type, rows), per = type == QB_Q4_K || type == QB_Q6_K ? 256 : 32;
    return g > 0 && rows > 0 && rows % g == 0 && cols > 0 && cols % per == 0;
}

int64_t qb_repack_bytes(int32_t type, int64_t rows, int64_t cols) {
    if (type == QB_Q4_K) return rows / QB_Q4K_X16_ROWS * (cols / 256) * QB_Q4K_X16_BYTES;
    if (type == QB_Q6_K) return rows / QB_Q6K_X16_ROWS * (cols / 256) * QB_Q6K_X16_BYTES;
    return rows / 4 * (cols / 32) * qb_x4_bytes(type);
}

// Q4_K's 16-row layout (qb_repack.h): group-block `o` from plain super-block b of each row.
static void repack_q4k(const uint8_t *src, uint8_t *dst, int64_t g0, int64_t g1, int64_t nb) {
    for (int64_t g = g0; g < g1; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *o = dst + (g * nb + b) * QB_Q4K_X16_BYTES;
            for (int r = 0; r < QB_Q4K_X16_ROWS; r++) {
                const uint8_t *blk = src + ((QB_Q4K_X16_ROWS * g + r) * nb + b) * 144;
                memcpy(o + 2 * r, blk, 2);
                memcpy(o + QB_Q4K_X16_DMIN + 2 * r, blk + 2, 2);
                uint32_t hi = 0;
                for (int j = 0; j < 8; j++) {
                    uint8_t sc, mn;
                    get_scale_min_k4(j, blk + 4, &sc, &mn);
                    o[QB_Q4K_X16_LO + 16 * j + r] = (uint8_t)((sc & 0xF) | (mn & 0xF) << 4);
                    hi |= (uint32_t)(sc >> 4) << (2 * j) | (uint32_t)(mn >> 4) << (16 + 2 * j);
                    const uint8_t *q = blk + 16 + 32 * (j / 2);
                    int shift = 4 * (j & 1);
                    uint8_t *v = o + QB_Q4K_X16_QS + 256 * j + 4 * r;
                    for (int t = 0; t < 4; t++)
                        for (int k = 0; k < 4; k++)
                            v[64 * t + k] = (uint8_t)(((q[4 * t + k] >> shift) & 0xF) | (((q[16 + 4 * t + k] >> shift) & 0xF) << 4));
                }
                memcpy(o + QB_Q4K_X16_HI + 4 * r, &hi, 4);
            }
        }
    }
}

// Row `r`'s super-block b of Q4_K's 16-row layout back to its plain 144 bytes: the 6-bit
// packing of the scales is a bijection, undone exactly.
static void unpack_q4k_block(const uint8_t *w, int64_t r, int64_t b, int64_t nb, uint8_t *out) {
    const uint8_t *g = w + ((r / QB_Q4K_X16_ROWS) * nb + b) * QB_Q4K_X16_BYTES;
    int rr = (int)(r % QB_Q4K_X16_ROWS);
    memcpy(out, g + 2 * rr, 2);
    memcpy(out + 2, g + QB_Q4K_X16_DMIN + 2 * rr, 2);
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; j++) q4k_x16_scale_min(g, j, rr, sc + j, mn + j);
    q4k_pack_scales(sc, mn, out + 4);
    memset(out + 16, 0, 128);
    for (int j = 0; j < 8; j++) {
        uint8_t *q = out + 16 + 32 * (j / 2);
        int shift = 4 * (j & 1);
        const uint8_t *v = g + QB_Q4K_X16_QS + 256 * j + 4 * rr;
        for (int t = 0; t < 4; t++)
            for (int k = 0; k < 4; k++) {
                q[4 * t + k] |= (uint8_t)((v[64 * t + k] & 0xF) << shift);
                q[16 + 4 * t + k] |= (uint8_t)((v[64 * t + k] >> 4) << shift);
            }
    }
}

// Row `r`'s super-block b of Q6_K's 16-row layout to its plain 210 bytes (`to_plain`) or the
// plain block `blk` into it: d and the scales copied, the values moved.
static void move_q6k_x16(int to_plain, void *w, int64_t r, int64_t b, int64_t nb, uint8_t *blk) {
    uint8_t *g = (uint8_t *)w + ((r / QB_Q6K_X16_ROWS) * nb + b) * QB_Q6K_X16_BYTES;
    const int rr = (int)(r % QB_Q6K_X16_ROWS);
    uint8_t q[256];
    if (to_plain) {
        const qb_half d = q6k_x16_row(g, rr, q, (int8_t *)(blk + 192));
        memcpy(blk + 208, &d, 2);
        q6k_put_values(blk, q);
    } else {
        memcpy(g + 2 * rr, blk + 208, 2);
        for (int j = 0; j < 16; j++) g[q6k_x16_sc(j) + rr] = blk[192 + j];
        q6k_values(blk, q);
        q6k_x16_put(g, rr, q);
    }
}

// Row `r`'s block b of Q4_0's 16-row layout to its plain 18 bytes (`to_plain`) or the
// plain block `blk` into it: the scale, and quant bytes 4t..4t+3 as dword r of vector t.
static void move_q40_x16(int to_plain, void *w, int64_t r, int64_t b, int64_t nb, uint8_t *blk) {
    uint8_t *g = (uint8_t *)w + ((r / QB_Q40_X16_ROWS) * nb + b) * QB_Q40_X16_BYTES;
    const int64_t rr = r % QB_Q40_X16_ROWS;
    for (int t = 0; t < 5; t++) {  // t = 4: the scale
        uint8_t *at = t < 4 ? g + QB_Q40_X16_QS + 64 * t + 4 * rr : g + 2 * rr, *plain = t < 4 ? blk + 2 + 4 * t : blk;
        const size_t n = t < 4 ? 4 : 2;
        if (to_plain) memcpy(plain, at, n);
        else memcpy(at, plain, n);
    }
}

// Row `r`'s block b of a four-row matrix (`interleaved`) or a plain one, written as the
// other layout stores it: every field is copied, nothing recomputed.
static void move_block(int32_t type, int interleaved, const void *src, int64_t r, int64_t b, int64_t nb, uint8_t *out) {
    qb_half d, m;
    uint32_t qh;
    const uint8_t *q = qb_q32_block(type, interleaved, src, r, b, nb, &d, &m, &qh);
    const int64_t qbytes = qb_q32_quant_bytes(type);
    if (interleaved) {  // to the plain block
        memcpy(out, &d, 2);
        out += 2;
        if (qb_q32_has_min(type)) memcpy(out, &m, 2), out += 2;
        if (qb_q32_has_fifth(type)) memcpy(out, &qh, 4), out += 4;
        memcpy(out, q, (size_t)qbytes);
        return;
    }
    const int64_t k = r % 4;  // `out` is the group-block
    memcpy(out + 2 * k, &d, 2);
    if (qb_q32_has_min(type)) memcpy(out + QB_X4_MIN + 2 * k, &m, 2);
    if (qb_q32_has_fifth(type)) {  // the fifth bits of values 0..15, then of 16..31
        memcpy(out + qb_x4_qh(type) + 2 * k, &qh, 2);
        memcpy(out + qb_x4_qh(type) + 8 + 2 * k, (const uint8_t *)&qh + 2, 2);
    }
    memcpy(out + qb_x4_qs(type) + qbytes * k, q, (size_t)qbytes);
}

void qb_repack(int32_t type, int32_t group, const void *src, void *dst, int64_t g0, int64_t g1, int64_t cols) {
    if (type == QB_Q4_K) return repack_q4k(src, dst, g0, g1, cols / 256);
    if (type == QB_Q6_K) {
        const int64_t nb = cols / 256;
        for (int64_t r = QB_Q6K_X16_ROWS * g0; r < QB_Q6K_X16_ROWS * g1; r++)
            for (int64_t b = 0; b < nb; b++) move_q6k_x16(0, dst, r, b, nb, (uint8_t *)src + (r * nb + b) * 210);
        return;
    }
    const int64_t nb = cols / 32, gbb = qb_x4_bytes(type);
    if (type == QB_Q4_0 && group == QB_Q40_X16_ROWS) {
        for (int64_t r = QB_Q40_X16_ROWS * g0; r < QB_Q40_X16_ROWS * g1; r++)
            for (int64_t b = 0; b < nb; b++) move_q40_x16(0, dst, r, b, nb, (uint8_t *)src + (r * nb + b) * 18);
        return;
    }
    for (int64_t g = g0; g < g1; g++)
        for (int64_t b = 0; b < nb; b++)
            for (int r = 0; r < 4; r++) move_block(type, 0, src, 4 * g + r, b, nb, (uint8_t *)dst + (g * nb + b) * gbb);
}

void qb_unpack_repacked(int32_t type, int32_t group, const void *src, void *dst, int64_t r0, int64_t r1, int64_t cols) {
    if (type == QB_Q4_K) {
        int64_t nb = cols / 256;
        for (int64_t r = r0; r < r1; r++)
            for (int64_t b = 0; b < nb; b++) unpack_q4k_block(src, r, b, nb, (uint8_t *)dst + ((r - r0) * nb + b) * 144);
        return;
    }
    if (type == QB_Q6_K) {
        int64_t nb = cols / 256;
        for (int64_t r = r0; r < r1; r++)
            for (int64_t b = 0; b < nb; b++) move_q6k_x16(1, (void *)src, r, b, nb, (uint8_t *)dst + ((r - r0) * nb + b) * 210);
        return;
    }
    const int64_t nb = cols / 32, bb = qb_q32_block_bytes(type);
    for (int64_t r = r0; r < r1; r++)
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *out = (uint8_t *)dst + ((r - r0) * nb + b) * bb;
            if (type == QB_Q4_0 && group == QB_Q40_X16_ROWS) move_q40_x16(1, (void *)src, r, b, nb, out);
            else move_block(type, 1, src, r, b, nb, out);
        }
}

// Each block moved back to its plain bytes and dequantized by the plain definition: the
// same values, bit for bit.
void qb_dequantize_repacked(int32_t type, int32_t group, const void *w, float *dst, int64_t r0, int64_t r1, int64_t cols) {
    uint8_t blk[210];
    const int64_t per = type == QB_Q4_K || type == QB_Q6_K ? 256 : 32, nb = cols / per;
    for (int64_t r = r0; r < r1; r++, dst += cols)
        for (int64_t b = 0; b < nb; b++) {
            if (type == QB_Q4_K) unpack_q4k_block(w, r, b, nb, blk);
            else if (type == QB_Q6_K) move_q6k_x16(1, (void *)w, r, b, nb, blk);
            else if (type == QB_Q4_0 && group == QB_Q40_X16_ROWS) move_q40_x16(1, (void *)w, r, b, nb, blk);
            else move_block(type, 1, w, r, b, nb, blk);
            qb_dequantize_row(type, blk, dst + per * b, per);
        }
}

// The definition: one row at a time, integer sums per block, as the plain dot products
// (symmetric types: the signed values; Q4_1, Q5_1: d x sum + m x the activations' sum).
static void matvec_scalar(int32_t type, const uint8_t *w, int64_t g, const qb_q8a *x, float *y, int64_t nb) {
    const int k = qb_q32_offset(type);
    for (int r = 0; r < 4; r++) {
        float s = 0;
        for (int64_t b = 0; b < nb; b++) {
            qb_half hd, hm;
            uint32_t qh;
            const uint8_t *q = qb_q32_block(type, 1, w, 4 * g + r, b, nb, &hd, &hm, &qh);
            int sum = 0;
            if (type == QB_Q8_0) {
                for (int j = 0; j < 32; j++) sum += (int8_t)q[j] * x[b].qs[j];
            } else {
                for (int j = 0; j < 16; j++)
                    sum += ((q[j] & 0xF) + (int)((qh >> j) & 1) * 16 + k) * x[b].qs[j] +
                           ((q[j] >> 4) + (int)((qh >> (j + 16)) & 1) * 16 + k) * x[b].qs[j + 16];
            }
            s += h2f(hd) * x[b].d * (float)sum;
            if (qb_q32_has_min(type)) s += h2f(hm) * x[b].s;
        }
        y[r] = s;
    }
}

#if defined(__AVX2__)
// Software prefetch this far ahead of the stream: the hardware prefetcher alone leaves a
// single core at ~12 GB/s on these loops, with it they reach ~17 GB/s (measured on Zen 3,
// 8192 x 8192 matrices, interleaved medians of 15).
enum { PREFETCH_Q4 = 4096, PREFETCH_Q8 = 2048 };

// The AVX2 set's decode of Q4_0, Q4_1, Q5_0 and Q5_1 (`type`, a constant) in four-row groups,
// one activation row a group at a time, several two groups at a time: each row's block sums
// stay exact integers (one per row and block) until each meets its block's scales, so every
// row's float arithmetic is the same short sequence however its integer was formed:
// acc = fma(I, d x dx, acc), then acc = fma(c, sx, acc), c the row's offset times d (Q4_0 -8,
// Q5_0 -16: exact) or its minimum (Q4_1, Q5_1). The one-row kernel and the batched one below
// form I differently (for one activation row, per group; for several, per step of four
// values shared by all rows) and agree bit for bit. The batched kernel's eight rows sit in
// the lanes in the order 0, 2, 4, 6, 1, 3, 5, 7 (rows 4-7 are the second group's 0-3), which
// the in-lane shuffles give for free, and are put back in order once at the end.

// One group-block's values as bytes (the fifth bits ORed on): v[0] values 0..15 of rows 0
// (low lane) and 1 (high lane), v[1] of rows 2 and 3, v[2] and v[3] values 16..31 of the same.
static inline __attribute__((always_inline)) void x4_values(const uint8_t *g, const int32_t type, __m256i v[4]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const int64_t qs = qb_x4_qs(type);
    const __m256i q01 = _mm256_loadu_si256((const __m256i *)(g + qs)), q23 = _mm256_loadu_si256((const __m256i *)(g + qs + 32));
    v[0] = _mm256_and_si256(q01, m4);
    v[1] = _mm256_and_si256(q23, m4);
    v[2] = _mm256_and_si256(_mm256_srli_epi16(q01, 4), m4);
    v[3] = _mm256_and_si256(_mm256_srli_epi16(q23, 4), m4);
    if (qb_q32_has_fifth(type)) {
        // Words 0..3 of the fifth bits: v[0], v[1], v[2], v[3]'s.
        __m256i bits = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(g + qb_x4_qh(type))));
        v[0] = _mm256_or_si256(v[0], q5_fifth_bits_at(bits, 0));
        v[1] = _mm256_or_si256(v[1], q5_fifth_bits_at(bits, 1));
        v[2] = _mm256_or_si256(v[2], q5_fifth_bits_at(bits, 2));
        v[3] = _mm256_or_si256(v[3], q5_fifth_bits_at(bits, 3));
    }
}

// The eight rows' f16 at offset `at` of two group-blocks, as f32 in the lanes' row order.
static inline __m256 x8_halves(const uint8_t *g0, const uint8_t *g1, int64_t at) {
    __m128i h = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(g0 + at)), _mm_loadl_epi64((const __m128i *)(g1 + at)));
    return _mm256_permutevar8x32_ps(_mm256_cvtph_ps(h), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

// A block's scales d and what meets the activations' block sums, c (see above).
static inline __attribute__((always_inline)) void x8_scales(const uint8_t *g0, const uint8_t *g1, const int32_t type,
                                                            __m256 *d, __m256 *c) {
    *d = x8_halves(g0, g1, 0);
    *c = qb_q32_has_min(type) ? x8_halves(g0, g1, QB_X4_MIN) : _mm256_mul_ps(*d, _mm256_set1_ps((float)qb_q32_offset(type)));
}

// Both groups' streams: `lines` cache lines `near` bytes ahead into L1, and as many
// QB_L2_AHEAD ahead into L2.
static inline __attribute__((always_inline)) void x8_prefetch(const uint8_t *g0, const uint8_t *g1, int64_t near, const int lines) {
    for (int l = 0; l < lines; l++) {
        _mm_prefetch((const char *)g0 + near + 64 * l, _MM_HINT_T0);
        _mm_prefetch((const char *)g1 + near + 64 * l, _MM_HINT_T0);
    }
    qb_prefetch_l2(g0, lines);
    qb_prefetch_l2(g1, lines);
}

// The eight sums back in row order; `rows` (8, or 4 for a lone group) stored.
static inline void x8_store(__m256 acc, float *y, const int rows) {
    acc = _mm256_permutevar8x32_ps(acc, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (rows == 8) _mm256_storeu_ps(y, acc);
    else _mm_storeu_ps(y, _mm256_castps256_ps128(acc));
}

// One activation row against one four-row group: one stream, where two groups at a time
// read two (q8_0x4 below has the figures). Two rows share one 32-byte load, each half of the
// activations broadcast to both lanes; pairs of products stay within 2 x 31 x 128. Each
// row's eight 16-bit partial sums (four products each) go to four (eight products: at most
// 8 x 31 x 128), to two 32-bit ones (lanes [0, 0, 2, 2 | 1, 1, 3, 3] by row), to one per row
// in row order.
static inline __attribute__((always_inline)) void nibbles_x4(const uint8_t *g, const qb_q8a *x, float *y, int64_t nb,
                                                             const int32_t type) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t step = qb_x4_bytes(type);
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += step, x++) {
        _mm_prefetch((const char *)g + PREFETCH_Q4, _MM_HINT_T0);
        qb_prefetch_l2(g, 1);
        const __m256i xlo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)x->qs));
        const __m256i xhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x->qs + 16)));
        __m256i v[4];
        x4_values(g, type, v);
        const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(v[0], xlo), _mm256_maddubs_epi16(v[2], xhi));
        const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(v[1], xlo), _mm256_maddubs_epi16(v[3], xhi));
        const __m256i m = _mm256_madd_epi16(_mm256_hadd_epi16(p01, p23), ones);
        const __m128i is = _mm_shuffle_epi32(_mm_hadd_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1)),
                                             _MM_SHUFFLE(3, 1, 2, 0));
        const __m128 d = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)g));
        const __m128 c = qb_q32_has_min(type) ? _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(g + QB_X4_MIN)))
                                              : _mm_mul_ps(d, _mm_set1_ps((float)qb_q32_offset(type)));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(is), _mm_mul_ps(d, _mm_set1_ps(x->d)), acc);
        acc = _mm_fmadd_ps(c, _mm_set1_ps(x->s), acc);
    }
    _mm_storeu_ps(y, acc);
}

// Activation rows per pass of the batched kernels (each pass reads the two groups from L1):
// five rows in one pass took 15-22% less time than four and one (2048 x 8192 Q4_0, Intel
// Xeon), eight the same as two passes of four.
enum { X8_AVX2_BATCH = 8 };

// R activation rows (2..X8_AVX2_BATCH, batched decode) against groups g0 and g1, each
// output's integer sums and float sequence nibbles_x4's. The two groups' values are moved
// once per block into eight steps of four values of all eight rows (32-bit in-lane unpacks),
// so each activation row takes one broadcast of four bytes and one vpmaddubsw per step, its
// pairs summed in 16-bit lanes as far as the values' width lets them (4 bits all eight
// steps: 8 x 2 x 15 x 128 = 30720; 5 bits four: 4 x 2 x 31 x 128 = 31744).
static inline __attribute__((always_inline)) void nibbles_x8_rows(const uint8_t *g0, const uint8_t *g1, const qb_q8a *const *xs,
                                                                  float *const *ys, int64_t nb, const int R, const int rows,
                                                                  const int32_t type) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t step = qb_x4_bytes(type);
    __m256 acc[X8_AVX2_BATCH];
    for (int k = 0; k < R; k++) acc[k] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g0 += step, g1 += step) {
        x8_prefetch(g0, g1, PREFETCH_Q4, 1);
        __m256i va[4], vb[4], s[8];
        x4_values(g0, type, va);
        x4_values(g1, type, vb);
        for (int h = 0; h < 2; h++) {
            __m256i t0 = _mm256_unpacklo_epi32(va[2 * h], va[2 * h + 1]), t1 = _mm256_unpackhi_epi32(va[2 * h], va[2 * h + 1]);
            __m256i t2 = _mm256_unpacklo_epi32(vb[2 * h], vb[2 * h + 1]), t3 = _mm256_unpackhi_epi32(vb[2 * h], vb[2 * h + 1]);
            s[4 * h] = _mm256_unpacklo_epi64(t0, t2);
            s[4 * h + 1] = _mm256_unpackhi_epi64(t0, t2);
            s[4 * h + 2] = _mm256_unpacklo_epi64(t1, t3);
            s[4 * h + 3] = _mm256_unpackhi_epi64(t1, t3);
        }
        __m256 d, c;
        x8_scales(g0, g1, type, &d, &c);
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            __m256i is = _mm256_setzero_si256();
            for (int part = 0; part < (qb_q32_has_fifth(type) ? 2 : 1); part++) {
                const int n = qb_q32_has_fifth(type) ? 4 : 8, s0 = 4 * part;
                __m256i p = _mm256_setzero_si256();
                for (int t = s0; t < s0 + n; t++) {
                    int32_t v;
                    memcpy(&v, x->qs + 4 * t, 4);
                    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(s[t], _mm256_set1_epi32(v)));
                }
                is = _mm256_add_epi32(is, _mm256_madd_epi16(p, ones));
            }
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(d, _mm256_set1_ps(x->d)), acc[k]);
            acc[k] = _mm256_fmadd_ps(c, _mm256_set1_ps(x->s), acc[k]);
        }
    }
    for (int k = 0; k < R; k++) x8_store(acc[k], ys[k], rows);
}

// Q8_0: each row's block sum one exact integer, then acc = fma(I, d x dx, acc), for one
// activation row a group at a time, for several two groups at a time as the nibble types
// above (eight rows to a vector in row order). The signed quants meet the activations
// through their magnitudes (|w| exact even for -128) with the sign moved onto the
// activations, pairs of products at most 2 x 128 x 127, so every vpmaddubsw is widened
// (vpmaddwd) before the next is added.

// One activation row against one four-row group: each row's 32 quants against the 32
// activations, then the four rows' eight partial sums to one each. A group at a time, the
// weights are one linear stream; two groups at a time (as the batched kernel below takes
// them) they were two, and one Zen 4 core read the 1B's Q8_0 layers from memory at 17.9 GB/s
// that way against 26.7 this way (Q5_0 by nibbles_x4: 11.1 against 15.5; the read probe
// 29.1 and 29.0; results/x4-avx2-one-stream-2026-12-01/).
static inline __attribute__((always_inline)) void q8_0x4(const uint8_t *g, const qb_q8a *x, float *y, int64_t nb) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += QB_X4_Q8_BYTES, x++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)g + PREFETCH_Q8 + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(g, 3);
        const __m256i xv = _mm256_loadu_si256((const __m256i *)x->qs);
        __m256i p[4];
        for (int r = 0; r < 4; r++) {
            const __m256i w = _mm256_loadu_si256((const __m256i *)(g + QB_X4_QS + 32 * r));
            p[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(xv, w)), ones);
        }
        // The four rows' sums of each 128-bit half in lanes 0-3 | 4-7, then the halves added.
        const __m256i q = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
        const __m128i is = _mm_add_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        const __m128 d = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)g));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(is), _mm_mul_ps(d, _mm_set1_ps(x->d)), acc);
    }
    _mm_storeu_ps(y, acc);
}

// R activation rows (2..X8_AVX2_BATCH) against groups g0 and g1, each output's integer sums
// and float sequence q8_0x4's: the eight rows' quants transposed once per block into eight
// steps of four values of all eight rows (and their magnitudes), so each activation row takes
// one broadcast of four bytes, one sign, one vpmaddubsw and one vpmaddwd per step.
static inline __attribute__((always_inline)) void q8_0x8_rows(const uint8_t *g0, const uint8_t *g1, const qb_q8a *const *xs,
                                                              float *const *ys, int64_t nb, const int R, const int rows) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[X8_AVX2_BATCH];
    for (int k = 0; k < R; k++) acc[k] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g0 += QB_X4_Q8_BYTES, g1 += QB_X4_Q8_BYTES) {
        x8_prefetch(g0, g1, PREFETCH_Q8, 3);
        __m256i w[8], t[8], s[8], m[8];
        for (int r = 0; r < 8; r++) w[r] = _mm256_loadu_si256((const __m256i *)((r < 4 ? g0 : g1) + QB_X4_QS + 32 * (r & 3)));
        // 8 x 8 words: t holds steps {0, 4}, {1, 5}, ... of rows 0-3 (t[0..3]) and 4-7 (t[4..7]).
        for (int h = 0; h < 2; h++) {
            const __m256i *v = w + 4 * h;
            __m256i a = _mm256_unpacklo_epi32(v[0], v[1]), c = _mm256_unpackhi_epi32(v[0], v[1]);
            __m256i e = _mm256_unpacklo_epi32(v[2], v[3]), f = _mm256_unpackhi_epi32(v[2], v[3]);
            t[4 * h] = _mm256_unpacklo_epi64(a, e);
            t[4 * h + 1] = _mm256_unpackhi_epi64(a, e);
            t[4 * h + 2] = _mm256_unpacklo_epi64(c, f);
            t[4 * h + 3] = _mm256_unpackhi_epi64(c, f);
        }
        for (int j = 0; j < 4; j++) {
            s[j] = _mm256_permute2x128_si256(t[j], t[4 + j], 0x20);
            s[4 + j] = _mm256_permute2x128_si256(t[j], t[4 + j], 0x31);
        }
        for (int j = 0; j < 8; j++) m[j] = _mm256_sign_epi8(s[j], s[j]);
        const __m256 d = _mm256_cvtph_ps(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)g0), _mm_loadl_epi64((const __m128i *)g1)));
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            __m256i is = _mm256_setzero_si256();
            for (int j = 0; j < 8; j++) {
                int32_t v;
                memcpy(&v, x->qs + 4 * j, 4);
                is = _mm256_add_epi32(is, _mm256_madd_epi16(_mm256_maddubs_epi16(m[j], _mm256_sign_epi8(_mm256_set1_epi32(v), s[j])), ones));
            }
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(d, _mm256_set1_ps(x->d)), acc[k]);
        }
    }
    for (int k = 0; k < R; k++) {
        if (rows == 8) _mm256_storeu_ps(ys[k], acc[k]);
        else _mm_storeu_ps(ys[k], _mm256_castps256_ps128(acc[k]));
    }
}

// Groups [g0, g1) of a four-row matrix `w` against n activation rows, two groups at a time
// (a lone last group alone; a lone Q8_0 activation row a group at a time, q8_0x4), the rows
// X8_AVX2_BATCH at a time, each count a constant.
static inline __attribute__((always_inline)) void x8_groups(const uint8_t *w, const qb_q8a *const *xs, float *const *ys,
                                                            int64_t n, int64_t g0, int64_t g1, int64_t nb, const int32_t type) {
    const int64_t gb = nb * qb_x4_bytes(type);
    for (int64_t g = g0; g < g1; g += 2) {
        const uint8_t *a = w + g * gb, *b = g + 1 < g1 ? a + gb : a;
        const int rows = g + 1 < g1 ? 8 : 4;
        for (int64_t i = 0; i < n; i += X8_AVX2_BATCH) {
            const qb_q8a *const *x = xs + i;
            float *y[X8_AVX2_BATCH];
            int64_t m = n - i < X8_AVX2_BATCH ? n - i : X8_AVX2_BATCH;
            for (int64_t r = 0; r < m; r++) y[r] = ys[i + r] + 4 * g;
            switch (m) {
#define QB_X8_PASS(R)                                                                                   \
    if (type == QB_Q8_0) q8_0x8_rows(a, b, x, y, nb, R, rows);                                          \
    else nibbles_x8_rows(a, b, x, y, nb, R, rows, type);                                               \
    break;
            case 8: QB_X8_PASS(8)
            case 7: QB_X8_PASS(7)
            case 6: QB_X8_PASS(6)
            case 5: QB_X8_PASS(5)
            case 4: QB_X8_PASS(4)
            case 3: QB_X8_PASS(3)
            case 2: QB_X8_PASS(2)
#undef QB_X8_PASS
            default:
                // One activation row: a group at a time (q8_0x4 says why).
                for (int k = 0; k < rows / 4; k++) {
                    if (type == QB_Q8_0) q8_0x4(k ? b : a, x[0], y[0] + 4 * k, nb);
                    else nibbles_x4(k ? b : a, x[0], y[0] + 4 * k, nb, type);
                }
                break;
            }
        }
    }
}
#if !defined(QB_AVX512)
static void q4_0x8(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    x8_groups(w, xs, ys, n, g0, g1, nb, QB_Q4_0);
}
static void q4_1x8(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    x8_groups(w, xs, ys, n, g0, g1, nb, QB_Q4_1);
}
static void q5_0x8(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    x8_groups(w, xs, ys, n, g0, g1, nb, QB_Q5_0);
}
static void q5_1x8(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    x8_groups(w, xs, ys, n, g0, g1, nb, QB_Q5_1);
}
static void q8_0x8g(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    x8_groups(w, xs, ys, n, g0, g1, nb, QB_Q8_0);
}

// The four-row types' eight-row function, or NULL.
typedef void (*x8_fn)(const uint8_t *, const qb_q8a *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
static x8_fn x8_fn_for(int32_t type) {
    switch (type) {
    case QB_Q4_0: return q4_0x8;
    case QB_Q4_1: return q4_1x8;
    case QB_Q5_0: return q5_0x8;
    case QB_Q5_1: return q5_1x8;
    case QB_Q8_0: return q8_0x8g;
    default: return NULL;
    }
}
#endif

#endif

#if defined(QB_AVX512)
// Sums of each group of four lanes: [row 0, row 1, row 2, row 3].
static inline __m128 sum_quads(__m512 v) {
    float t[16], o[4];
    _mm512_storeu_ps(t, v);
    for (int r = 0; r < 4; r++) o[r] = (t[4 * r] + t[4 * r + 1]) + (t[4 * r + 2] + t[4 * r + 3]);
    return _mm_loadu_ps(o);
}

// Q4_0 four rows on 64-byte vectors against R activation rows (1..4) at once: the four
// rows' 16 quant bytes fill the four 128-bit lanes; low nibbles (values 0..15) and high
// nibbles (16..31) each meet their half of the activations broadcast to every lane,
// unsigned x signed (vpdpbusd), and the offset is added at the end through the
// activations' block sums. The group's quants are loaded and split once per block for all
// R rows, each row's arithmetic the same whatever R. Decode takes interleaved Q4_0 on the
// 16-row tiles (qb_matvec_tiles.c); this is the four-row kernel kept for side-by-side
// timing (Linear.BatchKernel.fourRow). The other types take the tiles here (one Q8_0 row
// the single-stream kernel below).
static inline __attribute__((always_inline)) void q4_0x4_512_rows(const uint8_t *g, const qb_q8a *const *xs, float *const *ys,
                                                                  int64_t nb, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i quads = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    __m512 acc0[4], acc1[4];
    __m128 off[4];
    for (int r = 0; r < R; r++) {
        acc0[r] = _mm512_setzero_ps();
        acc1[r] = _mm512_setzero_ps();
        off[r] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += QB_X4_Q4_BYTES) {
        _mm_prefetch((const char *)g + PREFETCH_Q4, _MM_HINT_T0);
        qb_prefetch_l2(g, 1);
        __m512i q = _mm512_loadu_si512((const void *)(g + QB_X4_QS));
        __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        __m128 d = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)g));
        for (int r = 0; r < R; r++) {
            const qb_q8a *x = xs[r] + b;
            __m512i xlo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)x->qs));
            __m512i xhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(x->qs + 16)));
            __m512i p = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, xlo), hi, xhi);
            off[r] = _mm_fmadd_ps(d, _mm_set1_ps(x->s), off[r]);
            __m512 dd = _mm512_permutexvar_ps(quads, _mm512_castps128_ps512(_mm_mul_ps(d, _mm_set1_ps(x->d))));
            if (b & 1) acc1[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), dd, acc1[r]);
            else acc0[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), dd, acc0[r]);
        }
    }
    for (int r = 0; r < R; r++)
        _mm_storeu_ps(ys[r], _mm_add_ps(sum_quads(_mm512_add_ps(acc0[r], acc1[r])), _mm_mul_ps(off[r], _mm_set1_ps((float)qb_q32_offset(QB_Q4_0)))));
}
static void q4_0x4_512(const uint8_t *g, const qb_q8a *x, float *y, int64_t nb) { q4_0x4_512_rows(g, &x, &y, nb, 1); }

// One activation row against interleaved Q8_0, group after group: a single long stream,
// where the tile's four shorter ones left two-thread decode of the 1B Q8_0 up to 5-10%
// slower in some processes (serve --bench-batch 1, Intel Xeon; one thread alone within
// 3%). Each row's block sum is one exact integer and its float arithmetic the tile's
// (qb_tile16.h), so a row's outputs are bitwise what the tile gives it in a batch. The
// quants meet the activations stored + 128 as there; the two halves of each row's partial
// sums are added, then each row's four. With `pf` it prefetches its stream itself; on AMD's
// Zen 4 the hardware prefetcher alone read it 1.27x as fast from one core
// (results/x4-avx2-one-stream-2026-12-01/, qb_set_stream_prefetch).
static inline __attribute__((always_inline)) void q8_0x4_512(const uint8_t *g, const qb_q8a *x, float *y, int64_t nb,
                                                             const int pf) {
    const __m512i sign = _mm512_set1_epi8((char)0x80);
    const __m512i firsts = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += QB_X4_Q8_BYTES, x++) {
        if (pf) {
            for (int l = 0; l < 3; l++) _mm_prefetch((const char *)g + PREFETCH_Q8 + 64 * l, _MM_HINT_T0);
            qb_prefetch_l2(g, 3);
        }
        // Rows 0-1 and 2-3, each row's 32 quants over two lanes; the activations in both halves.
        const __m512i w01 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(g + QB_X4_QS)), sign);
        const __m512i w23 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(g + QB_X4_QS + 64)), sign);
        const __m512i xv = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)x->qs));
        const __m512i p01 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w01, xv);
        const __m512i p23 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w23, xv);
        __m512i v = _mm512_add_epi32(_mm512_shuffle_i64x2(p01, p23, 0x88), _mm512_shuffle_i64x2(p01, p23, 0xDD));
        v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_BADC));
        v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_CDAB));
        const __m128i is = _mm512_castsi512_si128(_mm512_permutexvar_epi32(firsts, v));
        const __m128 d = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)g));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(is), _mm_mul_ps(d, _mm_set1_ps(x->d)), acc);
        acc = _mm_fmadd_ps(_mm_mul_ps(d, _mm_set1_ps(-128.0f)), _mm_set1_ps(x->s), acc);
    }
    _mm_storeu_ps(y, acc);
}

// Q4_1, Q5_0, Q5_1 and Q8_0 on the 16-row tiles (qb_tile16.h), alone and batched alike.
#define QB_TILES_FN(name, T)                                                                                   \
    TILE_SCHEDULE static void name(const uint8_t *w, const qb_q8a *const *xs, float *const *ys, int64_t n, int64_t g0, \
                                   int64_t g1, int64_t nb) {                                                       \
        tile_groups(w, xs, NULL, ys, n, g0, g1, nb, T);                                                            \
    }
QB_TILES_FN(q4_1_tiles, QB_Q4_1)
QB_TILES_FN(q5_0_tiles, QB_Q5_0)
QB_TILES_FN(q5_1_tiles, QB_Q5_1)
QB_TILES_FN(q8_0_tiles, QB_Q8_0)
#undef QB_TILES_FN

// The tiled types' function, or NULL.
typedef void (*tiles_fn)(const uint8_t *, const qb_q8a *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
static tiles_fn tiles_fn_for(int32_t type) {
    switch (type) {
    case QB_Q4_1: return q4_1_tiles;
    case QB_Q5_0: return q5_0_tiles;
    case QB_Q5_1: return q5_1_tiles;
    case QB_Q8_0: return q8_0_tiles;
    default: return NULL;
    }
}

// The four-row Q4_0 kernel, up to four activation rows per pass.
enum { X4_BATCH = 4 };
static inline __attribute__((always_inline)) void q4_0x4_512_m(const uint8_t *g, const qb_q8a *const *x, float *const *y, int64_t nb,
                                                               int64_t m) {
    switch (m) {
    case 4: q4_0x4_512_rows(g, x, y, nb, 4); break;
    case 3: q4_0x4_512_rows(g, x, y, nb, 3); break;
    case 2: q4_0x4_512_rows(g, x, y, nb, 2); break;
    default: q4_0x4_512_rows(g, x, y, nb, 1); break;
    }
}
#endif

void qb_matvec_repacked_rows(int32_t type, const void *w, const qb_q8a *const *xs, float *const *ys, int64_t n,
                             int64_t g0, int64_t g1, int64_t cols) {
#if defined(__AVX2__) && !defined(QB_AVX512)
    x8_fn f = x8_fn_for(type);
    if (f) { f((const uint8_t *)w, xs, ys, n, g0, g1, cols / 32); return; }
#endif
#if defined(QB_AVX512)
    tiles_fn t = tiles_fn_for(type);
    if (t) { t((const uint8_t *)w, xs, ys, n, g0, g1, cols / 32); return; }
    if (type == QB_Q4_0) {
        const int64_t nb = cols / 32, gbb = qb_x4_bytes(type);
        for (int64_t g = g0; g < g1; g++) {
            const uint8_t *grp = (const uint8_t *)w + g * nb * gbb;
            for (int64_t i = 0; i < n; i += X4_BATCH) {
                const qb_q8a *x[X4_BATCH];
                float *y[X4_BATCH];
                int64_t m = n - i < X4_BATCH ? n - i : X4_BATCH;
                for (int64_t r = 0; r < m; r++) { x[r] = xs[i + r]; y[r] = ys[i + r] + 4 * g; }
                q4_0x4_512_m(grp, x, y, nb, m);
            }
        }
        return;
    }
#endif
    for (int64_t g = g0; g < g1; g++)
        for (int64_t i = 0; i < n; i++) qb_matvec_repacked(type, w, xs[i], ys[i], g, g + 1, cols);
}

void qb_matvec_repacked(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t g0, int64_t g1, int64_t cols) {
#if defined(__AVX2__) && !defined(QB_AVX512)
    x8_fn f = x8_fn_for(type);
    if (f) { f((const uint8_t *)w, &x, &y, 1, g0, g1, cols / 32); return; }
#endif
#if defined(QB_AVX512)
    tiles_fn t = type == QB_Q8_0 ? NULL : tiles_fn_for(type);
    if (t) { t((const uint8_t *)w, &x, &y, 1, g0, g1, cols / 32); return; }
#endif
    int64_t nb = cols / 32, gbb = qb_x4_bytes(type);
#if defined(QB_AVX512)
    const int pf = qb_stream_prefetch();
#endif
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = (const uint8_t *)w + g * nb * gbb;
#if defined(QB_AVX512)
        if (type == QB_Q4_0) { q4_0x4_512(grp, x, y + 4 * g, nb); continue; }
        if (type == QB_Q8_0) {
            if (pf) q8_0x4_512(grp, x, y + 4 * g, nb, 1);
            else q8_0x4_512(grp, x, y + 4 * g, nb, 0);
            continue;
        }
#endif
        matvec_scalar(type, w, g, x, y + 4 * g, nb);
    }
}

// ---------------------------------------------------------------------------------------
// MLX rows in groups of 16 (qb_repack.h). MLX packs values from the low bits of each 32-bit
// word up: 4-bit value 2i in the low nibble of byte i and 2i + 1 in the high one, 8-bit
// value i in byte i.

int qb_mlx_x16_supported(int32_t bits, int64_t group, int64_t rows, int64_t cols) {
    return (bits == 4 || bits == 8) && (group == 32 || group == 64 || group == 128) && rows > 0 && rows % QB_MLX_X16_ROWS == 0 &&
           cols > 0 && cols % group == 0;
}

int64_t qb_mlx_x16_block_bytes(int32_t bits, int64_t group, int32_t sdtype) {
    return QB_MLX_X16_ROWS * (2 * mlx_scale_bytes(sdtype) + group * bits / 8);
}

int64_t qb_mlx_x16_bytes(int32_t bits, int64_t group, int32_t sdtype, int64_t rows, int64_t cols) {
    return rows / QB_MLX_X16_ROWS * (cols / group) * qb_mlx_x16_block_bytes(bits, group, sdtype);
}

// Where value i (< 32) of a row's 32-value block sits in the block's vectors: the byte
// offset from the row's first byte (4 x row) and, for 4 bits, the shift of its nibble.
static inline int64_t mlx_x16_at(int32_t bits, int i, int *shift) {
    if (bits == 8) {
        *shift = 0;
        return 64 * (i / 4) + i % 4;
    }
    *shift = i >= 16 ? 4 : 0;
    return 64 * ((i % 16) / 4) + i % 4;
}

void qb_repack_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const uint32_t *w, const void *scales, const void *biases,
                       void *dst, int64_t g0, int64_t g1, int64_t cols) {
    int64_t groups = cols / group, sz = mlx_scale_bytes(sdtype), bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    for (int64_t g = g0; g < g1; g++)
        for (int64_t j = 0; j < groups; j++) {
            uint8_t *o = (uint8_t *)dst + (g * groups + j) * bb;
            memset(o + 2 * QB_MLX_X16_ROWS * sz, 0, (size_t)(bb - 2 * QB_MLX_X16_ROWS * sz));
            for (int r = 0; r < QB_MLX_X16_ROWS; r++) {
                int64_t row = QB_MLX_X16_ROWS * g + r;
                memcpy(o + sz * r, (const uint8_t *)scales + (row * groups + j) * sz, (size_t)sz);
                memcpy(o + QB_MLX_X16_ROWS * sz + sz * r, (const uint8_t *)biases + (row * groups + j) * sz, (size_t)sz);
                const uint8_t *q = (const uint8_t *)(w + row * (cols * bits / 32)) + j * group * bits / 8;
                for (int64_t s = 0; s < group / 32; s++) {
                    const uint8_t *qs = q + 4 * bits * s;
                    uint8_t *v = o + 2 * QB_MLX_X16_ROWS * sz + 64 * bits * s + 4 * r;
                    for (int i = 0; i < 32; i++) {
                        int shift;
                        int64_t at = mlx_x16_at(bits, i, &shift);
                        uint8_t value = bits == 8 ? qs[i] : (uint8_t)((qs[i / 2] >> (4 * (i & 1))) & 0xF);
                        v[at] |= (uint8_t)(value << shift);
                    }
                }
            }
        }
}

// The values (one per byte), scale and bias of row `r`'s 32-value block `b`.
static void mlx_x16_block(int32_t bits, int64_t group, int32_t sdtype, const void *w, int64_t r, int64_t b, int64_t cols,
                          uint8_t v[32], float *scale, float *bias) {
    int64_t groups = cols / group, sz = mlx_scale_bytes(sdtype), bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    int64_t j = 32 * b / group, s = b % (group / 32);
    const uint8_t *o = (const uint8_t *)w + ((r / QB_MLX_X16_ROWS) * groups + j) * bb;
    int rr = (int)(r % QB_MLX_X16_ROWS);
    *scale = load_scale(o, sdtype, rr);
    *bias = load_scale(o + QB_MLX_X16_ROWS * sz, sdtype, rr);
    const uint8_t *q = o + 2 * QB_MLX_X16_ROWS * sz + 64 * bits * s + 4 * rr;
    for (int i = 0; i < 32; i++) {
        int shift;
        int64_t at = mlx_x16_at(bits, i, &shift);
        v[i] = (uint8_t)(bits == 8 ? q[at] : (q[at] >> shift) & 0xF);
    }
}

void qb_dequantize_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, float *dst, int64_t r0, int64_t r1,
                           int64_t cols) {
    uint32_t words[32];  // one group's plain words (128 8-bit values at most)
    uint8_t v[32];
    for (int64_t r = r0; r < r1; r++, dst += cols)
        for (int64_t j = 0; j < cols / group; j++) {
            uint8_t *q = (uint8_t *)words;
            float scale = 0, bias = 0;
            memset(words, 0, sizeof words);
            for (int64_t s = 0; s < group / 32; s++) {
                mlx_x16_block(bits, group, sdtype, w, r, j * (group / 32) + s, cols, v, &scale, &bias);
                for (int i = 0; i < 32; i++) {
                    if (bits == 8) q[32 * s + i] = v[i];
                    else q[16 * s + i / 2] |= (uint8_t)(v[i] << (4 * (i & 1)));
                }
            }
            // The plain dequantizer on the group's own words, scale and bias (f32 widened
            // exactly from the stored type): the same arithmetic.
            qb_dequantize_row_mlx(bits, group, words, &scale, &bias, QB_F32, dst + group * j, group);
        }
}
