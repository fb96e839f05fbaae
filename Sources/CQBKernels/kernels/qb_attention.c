// Attention of query heads over a KV cache of f32, f16 or Q8_0 rows, and the stores that
// fill the cache.
#include "qb_attention.h"
#include "qb_dense.h"
#include "qb_formats.h"
#include "qb_ops.h"
#include "qb_quantizer.h"
#include "qb_scalar.h"
#include <math.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

// A window's first position moves the rows' start and shortens the count: the cache is laid
// out [position][row], so positions first ..< n are themselves a cache of n - first rows,
// and every kernel below (tiles included) runs on them unchanged. first = 0 is the plain
// causal pass, at the same speed.
// The first cached row a position whose rows end at `end` attends to: `window` rows back
// on a sliding-window layer (window > 0), else row 0.
static inline int64_t window_first(int64_t end, int64_t window) { return window > 0 && end > window ? end - window : 0; }

void qb_attention_head(const float *q, const float *k, const float *v, int64_t first, int64_t n, int64_t hd,
                       float scale, float *scores, float *out) {
    k += first * hd;
    v += first * hd;
    n -= first;
    for (int64_t j = 0; j < n; j++) scores[j] = dot_f32(q, k + j * hd, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) axpy_f32(scores[j], v + j * hd, out, hd);
}

// ---------------------------------------------------------------------------------------
// Narrow KV caches. Keys are widened while dotted with the query; values while
// accumulated: each cached value is read once per step, so the cache's bytes, not the
// conversion, bound the cost at depth.


void qb_store_kv_f16(const float *src, uint16_t *dst, int64_t hd) { qb_f32_to_f16(src, dst, hd); }

void qb_store_kv_q8_0(const float *src, void *dst, int64_t hd) { qb_quantize_row(QB_Q8_0, src, dst, hd); }

static float dot_f16_f32(const uint16_t *a, const float *b, int64_t n) {
    QB_REASSOC
    const _Float16 *h = (const _Float16 *)a;
    float s = 0;
    QB_UNROLL
    for (int64_t i = 0; i < n; i++) s += (float)h[i] * b[i];
    return s;
}

static void axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const _Float16 *h = (const _Float16 *)x;
    for (int64_t i = 0; i < n; i++) y[i] += a * (float)h[i];
}

void qb_attention_head_f16(const float *q, const uint16_t *k, const uint16_t *v, int64_t first, int64_t n,
                           int64_t hd, float scale, float *scores, float *out) {
    k += first * hd;
    v += first * hd;
    n -= first;
    for (int64_t j = 0; j < n; j++) scores[j] = dot_f16_f32(k + j * hd, q, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) axpy_f16(scores[j], v + j * hd, out, hd);
}

// A Q8_0 block: f16 scale then 32 int8 (34 bytes).
static float dot_q8_0_f32(const uint8_t *blocks, const float *b, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++, blocks += 34) {
        _Float16 d;
        memcpy(&d, blocks, 2);
        const int8_t *qs = (const int8_t *)(blocks + 2);
        float t = 0;
        {
            QB_REASSOC
            QB_UNROLL
            for (int j = 0; j < 32; j++) t += (float)qs[j] * b[i * 32 + j];
        }
        s += (float)d * t;
    }
    return s;
}

static void axpy_q8_0(float a, const uint8_t *blocks, float *y, int64_t n) {
    for (int64_t i = 0; i < n / 32; i++, blocks += 34) {
        _Float16 d;
        memcpy(&d, blocks, 2);
        const int8_t *qs = (const int8_t *)(blocks + 2);
        float ad = a * (float)d;
        for (int j = 0; j < 32; j++) y[i * 32 + j] += ad * (float)qs[j];
    }
}

// Widens `count` cached rows (f16 or Q8_0 blocks) to f32, row after row.
static void widen_rows(int32_t type, const void *src, float *dst, int64_t count, int64_t hd) {
#if defined(__AVX2__)
    if (type == QB_F16) {
        const uint16_t *h = (const uint16_t *)src;
        for (int64_t i = 0; i < count * hd; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
        return;
    }
    const uint8_t *b = (const uint8_t *)src;
    for (int64_t i = 0; i < count * hd / 32; i++, b += 34, dst += 32) {
        uint16_t dh;
        memcpy(&dh, b, 2);
        __m256 d = _mm256_cvtph_ps(_mm_set1_epi16((short)dh));
        __m128i lo = _mm_loadu_si128((const __m128i *)(b + 2)), hi = _mm_loadu_si128((const __m128i *)(b + 18));
        _mm256_storeu_ps(dst, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
        _mm256_storeu_ps(dst + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
        _mm256_storeu_ps(dst + 16, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
        _mm256_storeu_ps(dst + 24, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
    }
#else
    if (type == QB_F16) {
        const _Float16 *h = (const _Float16 *)src;
        for (int64_t i = 0; i < count * hd; i++) dst[i] = (float)h[i];
        return;
    }
    const uint8_t *b = (const uint8_t *)src;
    for (int64_t i = 0; i < count * hd / 32; i++, b += 34) {
        _Float16 d;
        memcpy(&d, b, 2);
        for (int j = 0; j < 32; j++) dst[32 * i + j] = (float)d * (float)(int8_t)b[2 + j];
    }
#endif
}

// Positions per tile: their widened rows (at most 8 x 512 floats) stay in L1 while every
// head of the group uses them.
enum { ATT_TILE = 8 };

// The most query heads per KV head the integer Q8_0 kernels take (their queries' quants are
// kept on the stack); larger groups go to the float kernels, which round otherwise.
enum { ATT_Q8_GROUP = 16 };

// The group's queries rounded to Q8_0 as the integer kernels take them: block b's 32 quants
// in dwords 8b ..< 8b + 8 of qd[g] (zeros after the last block, so a 64-byte load of a
// pair sees a zero second block) and its scale in dq[g][b].
static inline void quantize_queries_q8(const float *q, int64_t group, int64_t hd, int32_t qd[][8 * 16], float dq[][16]) {
    for (int64_t g = 0; g < group; g++) {
        uint8_t blocks[16 * 34];
        qb_quantize_row(QB_Q8_0, q + g * hd, blocks, hd);
        memset(qd[g], 0, sizeof(qd[g]));
        for (int64_t b = 0; b < hd / 32; b++) {
            dq[g][b] = h2f((qb_half)(blocks[34 * b] | blocks[34 * b + 1] << 8));
            memcpy(qd[g] + 8 * b, blocks + 34 * b + 2, 32);
        }
    }
}

#if defined(__AVX2__)
// The eight sums of eight vectors, in order.
static inline __m256 hsum8x8(const __m256 a[8]) {
    __m256 h01 = _mm256_hadd_ps(a[0], a[1]), h23 = _mm256_hadd_ps(a[2], a[3]);
    __m256 h45 = _mm256_hadd_ps(a[4], a[5]), h67 = _mm256_hadd_ps(a[6], a[7]);
    __m256 lo = _mm256_hadd_ps(h01, h23), hi = _mm256_hadd_ps(h45, h67);
    return _mm256_add_ps(_mm256_permute2f128_ps(lo, hi, 0x20), _mm256_permute2f128_ps(lo, hi, 0x31));
}

// The scores of one query against a widened tile of 8 rows: each row's products summed down
// the columns, then across lanes by hsum8x8 (the same tree for every lane, so a score does
// not depend on where its row falls in a tile), times `scale`. (The f16 kernels give it a
// last partial tile padded with zero rows; the generic path sums that tile row by row,
// dot_f32.)
static inline __attribute__((always_inline)) void score_tile8(const float *w, const float *qg, int64_t hd, float scale,
                                                              float *dst) {
    __m256 acc[8];
    for (int p = 0; p < 8; p++) acc[p] = _mm256_setzero_ps();
    for (int64_t c = 0; c < hd; c += 8) {
        __m256 qv = _mm256_loadu_ps(qg + c);
        for (int p = 0; p < 8; p++) acc[p] = _mm256_fmadd_ps(_mm256_loadu_ps(w + p * hd + c), qv, acc[p]);
    }
    _mm256_storeu_ps(dst, _mm256_mul_ps(hsum8x8(acc), _mm256_set1_ps(scale)));
}

// The four sums of four vectors, each by hsum8x8's tree (pairs, then pairs of pairs within
// each 128-bit half, then the halves), so a score is the same whichever routine sums it.
static inline __m128 hsum4x8(const __m256 a[4]) {
    __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

// score_tile8 for `n` (2 or 3) queries at once, four rows at a time: every score is the
// same chain of multiply-adds and the same sum as score_tile8's, and each key load serves
// all n queries. Why three: score_tile8's eight chains wait on the multiply-add latency (four
// cycles at two a cycle wants eight in flight and no stall); with two queries (eight chains,
// a third fewer loads) a 256-position prefill's attention took 2-4% less time, with three
// (twelve chains) 12-14% less (results/attention-queries-2026-11-30/).
static inline __attribute__((always_inline)) void score_tile8xn(const float *w, const float *const *qs, int64_t hd,
                                                                float scale, float *const *ds, const int n) {
    for (int half = 0; half < 2; half++) {
        const float *wh = w + 4 * half * hd;
        __m256 a[3][4];
        for (int j = 0; j < n; j++)
            for (int p = 0; p < 4; p++) a[j][p] = _mm256_setzero_ps();
        for (int64_t c = 0; c < hd; c += 8) {
            __m256 x[3];
            for (int j = 0; j < n; j++) x[j] = _mm256_loadu_ps(qs[j] + c);
            for (int p = 0; p < 4; p++) {
                __m256 k = _mm256_loadu_ps(wh + p * hd + c);
                for (int j = 0; j < n; j++) a[j][p] = _mm256_fmadd_ps(k, x[j], a[j][p]);
            }
        }
        for (int j = 0; j < n; j++) _mm_storeu_ps(ds[j] + 4 * half, _mm_mul_ps(hsum4x8(a[j]), _mm_set1_ps(scale)));
    }
}

// Columns [c0, hd) of accumulate_values8's sums, past its 64-column blocks.
static inline void values_tail(const float *pg, const float *w, int64_t p0, int64_t p1, float *og, int64_t c0, int64_t hd) {
    for (; c0 < hd; c0++)
        for (int64_t p = p0; p < p1; p++) og[c0] += pg[p] * w[p * hd + c0];
}

// og += the probabilities pg[p0 ..< p1] times the widened value rows w[p0 ..< p1], one row
// after another, 64 columns at a time in registers.
static inline __attribute__((always_inline)) void accumulate_values8(const float *pg, const float *w, int64_t p0,
                                                                     int64_t p1, float *og, int64_t hd) {
    int64_t c0 = 0;
    for (; c0 + 64 <= hd; c0 += 64) {
        __m256 acc[8];
        for (int c = 0; c < 8; c++) acc[c] = _mm256_loadu_ps(og + c0 + 8 * c);
        for (int64_t p = p0; p < p1; p++) {
            __m256 pv = _mm256_set1_ps(pg[p]);
            for (int c = 0; c < 8; c++) acc[c] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(w + p * hd + c0 + 8 * c), acc[c]);
        }
        for (int c = 0; c < 8; c++) _mm256_storeu_ps(og + c0 + 8 * c, acc[c]);
    }
    values_tail(pg, w, p0, p1, og, c0, hd);
}

// accumulate_values8 for `n` (2 or 3) queries' probabilities over the same rows, 32 columns
// at a time: each output column is the same sequence of multiply-adds, row by row, as
// accumulate_values8 makes, with 4n chains side by side where it has eight (see
// score_tile8xn) and each value load serving all n outputs.
static inline __attribute__((always_inline)) void accumulate_values8xn(const float *const *pg, const float *w, int64_t p0,
                                                                       int64_t p1, float *const *og, int64_t hd, const int n) {
    int64_t c0 = 0;
    for (; c0 + 64 <= hd; c0 += 64)
        for (int64_t cc = c0; cc < c0 + 64; cc += 32) {
            __m256 a[3][4];
            for (int j = 0; j < n; j++)
                for (int c = 0; c < 4; c++) a[j][c] = _mm256_loadu_ps(og[j] + cc + 8 * c);
            for (int64_t p = p0; p < p1; p++) {
                __m256 b[3];
                for (int j = 0; j < n; j++) b[j] = _mm256_set1_ps(pg[j][p]);
                for (int c = 0; c < 4; c++) {
                    __m256 v = _mm256_loadu_ps(w + p * hd + cc + 8 * c);
                    for (int j = 0; j < n; j++) a[j][c] = _mm256_fmadd_ps(b[j], v, a[j][c]);
                }
            }
            for (int j = 0; j < n; j++)
                for (int c = 0; c < 4; c++) _mm256_storeu_ps(og[j] + cc + 8 * c, a[j][c]);
        }
    for (int j = 0; j < n; j++) values_tail(pg[j], w, p0, p1, og[j], c0, hd);
}

// og[j] += pg[j][p0 ..< p1] times the value rows, for n (1 to 3) outputs at once.
static inline __attribute__((always_inline)) void accumulate_values8_some(const float *const *pg, const float *w,
                                                                          int64_t p0, int64_t p1, float *const *og,
                                                                          int64_t hd, int n) {
    if (n == 3) accumulate_values8xn(pg, w, p0, p1, og, hd, 3);
    else if (n == 2) accumulate_values8xn(pg, w, p0, p1, og, hd, 2);
    else accumulate_values8(pg[0], w, p0, p1, og[0], hd);
}

// The scores of query rows [0, rows) against a tile of `t` widened keys (zeros past them),
// three queries at a time, then two, then one: row m's query at q + m / group * qstride +
// m % group * hd (a prefill chunk's positions times their heads), its scores at scores +
// m * span + j0, only the first t when the tile is partial. (The decode group kernel keeps
// one query at a time: for one position's four heads, three and one showed no gain beyond
// the spread of the unchanged kernel's own runs, results/attention-queries-2026-11-30/.)
static inline __attribute__((always_inline)) void score_rows8(const float *w, int64_t t, const float *q, int64_t qstride,
                                                              int64_t group, int64_t hd, float scale, int64_t rows,
                                                              float *scores, int64_t span, int64_t j0) {
    float lanes[3][ATT_TILE];  // a partial tile's: the next row's scores follow this one's
    for (int64_t m = 0; m < rows;) {
        int n = rows - m >= 3 ? 3 : (int)(rows - m);
        const float *qs[3];
        float *ds[3];
        for (int j = 0; j < n; j++) {
            qs[j] = q + (m + j) / group * qstride + (m + j) % group * hd;
            ds[j] = t == ATT_TILE ? scores + (m + j) * span + j0 : lanes[j];
        }
        if (n == 3) score_tile8xn(w, qs, hd, scale, ds, 3);
        else if (n == 2) score_tile8xn(w, qs, hd, scale, ds, 2);
        else score_tile8(w, qs[0], hd, scale, ds[0]);
        if (t < ATT_TILE)
            for (int j = 0; j < n; j++) memcpy(scores + (m + j) * span + j0, lanes[j], (size_t)t * sizeof(float));
        m += n;
    }
}
#endif

#if defined(__AVX2__)
// A cache read at depth comes from memory, and the attention loops alone do not keep enough
// reads in flight: the tile ATT_PREFETCH_ROWS rows ahead of `j0` is fetched while this one
// is computed. Without it a 4096-position AVX-512 Q8_0 head pass took 52 us from memory
// and 21 us from L2. On the AVX2 set, one thread on an Intel Xeon (Emerald Rapids), it took
// that pass from memory from 143.8 to 110.9 us for Q8_0 (102.9 from L2) and from 202 to
// 154 us for f16 (results/depth-q8-avx2-2026-11-30-emr/attention-timing.txt). The AVX-512
// f16 kernel gained nothing from it on Zen 4 and 1.13x at depth 4096 on the Emerald Rapids
// Xeon, whose single core keeps fewer reads in flight.
enum { ATT_PREFETCH_ROWS = 128 };

// Part `part` of `parts` of the lines of that tile of `tile` rows. An AVX-512 f16 tile (16
// rows) is 32 lines: issued at once, they outnumber the core's line-fill buffers and the
// core waits for the first lines back before it computes on; spread over the tile's work
// they keep the stream and the arithmetic overlapping: 1.15x on a 4096-position f16 head
// pass from memory on one core of the Intel Xeon (results/attention-f16-2026-11-28/). The
// AVX-512 f16 keys go a line per step of the scores' loop (score_quad16), the values a part
// per position; the AVX2 f16 keys (8-row tiles, 16 lines) a part per head, which took that
// kernel's pass from memory to 0.93-0.95x (results/attention-quad-2026-12-05-emr/). The
// AVX-512 Q8_0 loop (17 lines a tile) showed no difference either way; it and the AVX2
// Q8_0 and value loops fetch their tiles whole (the AVX2 f16 values a part per 16 columns
// showed no difference).
static inline void prefetch_part(const uint8_t *rows, int64_t j0, int64_t tile, int64_t n, int64_t row, int64_t part,
                                 int64_t parts) {
    if (j0 + ATT_PREFETCH_ROWS + tile > n) return;
    const char *at = (const char *)rows + (j0 + ATT_PREFETCH_ROWS) * row;
    int64_t lines = (tile * row + 63) / 64;
    for (int64_t l = lines * part / parts; l < lines * (part + 1) / parts; l++) _mm_prefetch(at + 64 * l, _MM_HINT_T0);
}
static inline void prefetch_tile(const uint8_t *rows, int64_t j0, int64_t tile, int64_t n, int64_t row) {
    prefetch_part(rows, j0, tile, n, row, 0, 1);
}

// The 16-bit words at the start of rows 0 ..< t (t <= 8) of `row` bytes each (a Q8_0 block's
// f16 scale), zeros past t. Inserted lane by lane: eight 2-byte stores read back as one
// 16-byte load cannot be forwarded from the store buffer, and that wait cost the AVX-512
// Q8_0 kernel 14-18% and the AVX2 one ~5% of a depth-4096 head pass from L2 on an Intel
// Xeon (Emerald Rapids). A vpgatherdd of the rows' dwords did as well there but was not
// kept: Ice Lake, which these sessions also land on, is among the CPUs whose Downfall (GDS)
// microcode fix slows gathers (not measured here).
static inline __m128i row_halves8(const uint8_t *at, int64_t row, int64_t t) {
    __m128i h = _mm_setzero_si128();
    uint16_t w;
#define QB_LANE(p) if (p < t) { memcpy(&w, at + p * row, 2); h = _mm_insert_epi16(h, w, p); }
    QB_LANE(0) QB_LANE(1) QB_LANE(2) QB_LANE(3) QB_LANE(4) QB_LANE(5) QB_LANE(6) QB_LANE(7)
#undef QB_LANE
    return h;
}

#endif

#if defined(__AVX512F__)
// AVX-512: tiles of 16 positions, widened with 64-byte conversions. A score tile is the dot
// products of up to four heads' queries with 16 key rows, the heads side by side in each
// vector (score_quad16), or for wide heads one head's with 16 rows summed across lanes
// together (score_tile16, hsum16x16).
enum { ATT_TILE16 = 16 };

static void widen_rows16(int32_t type, const uint8_t *src, float *dst, int64_t count, int64_t hd) {
    if (type == QB_F16) {
        const uint16_t *h = (const uint16_t *)src;
        for (int64_t i = 0; i < count * hd; i += 16)
            _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(h + i))));
        return;
    }
    for (int64_t i = 0; i < count * hd / 32; i++, src += 34, dst += 32) {
        uint16_t dh;
        memcpy(&dh, src, 2);
        __m512 d = _mm512_cvtph_ps(_mm256_set1_epi16((short)dh));
        __m128i lo = _mm_loadu_si128((const __m128i *)(src + 2)), hi = _mm_loadu_si128((const __m128i *)(src + 18));
        _mm512_storeu_ps(dst, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(lo))));
        _mm512_storeu_ps(dst + 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(hi))));
    }
}

// The sixteen sums of sixteen vectors, in order: halves of pairs added (512 -> 256 bits per
// vector), then quarters (-> 128), then a transposing add within 128-bit lanes twice, which
// leaves lane j holding the sums of vectors j, 8 + j, 4 + j and 12 + j; one permute orders them.
static inline __m512 hsum16x16(const __m512 v[16]) {
    __m512 u[8], w[4], x[2];
    for (int i = 0; i < 8; i++)
        u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44), _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
    for (int i = 0; i < 4; i++)
        w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0x88), _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0xDD));
    for (int i = 0; i < 2; i++)
        x[i] = _mm512_add_ps(_mm512_unpacklo_ps(w[2 * i], w[2 * i + 1]), _mm512_unpackhi_ps(w[2 * i], w[2 * i + 1]));
    __m512 y = _mm512_add_ps(_mm512_unpacklo_ps(x[0], x[1]), _mm512_unpackhi_ps(x[0], x[1]));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(order, y);
}

// The scores of one query against a widened tile of 16 rows: each the row's products
// summed down the columns in order, then across lanes by hsum16x16 (the same tree for every
// lane, so a score does not depend on where its row falls in a tile), times `scale`; the
// lanes in `keep` stored. Columns outer, rows inner: 16 independent multiply-add chains (a
// chain per row runs at the adds' latency, a quarter of their rate, unless the head
// dimension is a constant the compiler can interleave).
static inline __attribute__((always_inline)) void score_tile16(const float *w, const float *qg, int64_t hd, float scale,
                                                               float *dst, __mmask16 keep) {
    __m512 acc[16];
    __m512 q0 = _mm512_loadu_ps(qg);
    for (int p = 0; p < 16; p++) acc[p] = _mm512_mul_ps(_mm512_loadu_ps(w + p * hd), q0);
    for (int64_t c = 16; c < hd; c += 16) {
        __m512 qc = _mm512_loadu_ps(qg + c);
        for (int p = 0; p < 16; p++) acc[p] = _mm512_fmadd_ps(_mm512_loadu_ps(w + p * hd + c), qc, acc[p]);
    }
    _mm512_mask_storeu_ps(dst, keep, _mm512_mul_ps(hsum16x16(acc), _mm512_set1_ps(scale)));
}

// og += the probabilities pg[p0 ..< p1] times the widened value rows w[p0 ..< p1], one row
// after another, up to 256 columns at a time in registers: one broadcast probability per
// row for all of them (a broadcast per 16 columns left the loads, not the multiply-adds, to
// bound the loop).
static inline __attribute__((always_inline)) void accumulate_values16(const float *pg, const float *w, int64_t p0,
                                                                      int64_t p1, float *og, int64_t hd) {
    for (int64_t c0 = 0; c0 < hd; c0 += 256) {
        int64_t nu = (hd - c0) / 16 < 16 ? (hd - c0) / 16 : 16;
        __m512 acc[16];
        for (int64_t u = 0; u < nu; u++) acc[u] = _mm512_loadu_ps(og + c0 + 16 * u);
        for (int64_t p = p0; p < p1; p++) {
            __m512 pv = _mm512_set1_ps(pg[p]);
            for (int64_t u = 0; u < nu; u++) acc[u] = _mm512_fmadd_ps(pv, _mm512_loadu_ps(w + p * hd + c0 + 16 * u), acc[u]);
        }
        for (int64_t u = 0; u < nu; u++) _mm512_storeu_ps(og + c0 + 16 * u, acc[u]);
    }
}

// The scores of two queries (qa, qb) against 8 widened rows: each row's products summed
// down the columns and across lanes exactly as score_tile16 sums them (a chain per lane in
// column order, then hsum16x16's tree, which is the same for every vector it sums), so each
// score is bitwise the group kernel's. Each loaded row vector feeds both queries'
// multiply-adds: half the loads of one query at a time.
static inline __attribute__((always_inline)) void score_pair8(const float *w, int64_t hd, const float *qa, const float *qb,
                                                              __m512 scale, float *da, float *db, __mmask8 keep) {
    __m512 acc[16];
    __m512 a = _mm512_loadu_ps(qa), b = _mm512_loadu_ps(qb);
    for (int r = 0; r < 8; r++) {
        __m512 x = _mm512_loadu_ps(w + r * hd);
        acc[r] = _mm512_mul_ps(x, a);
        acc[8 + r] = _mm512_mul_ps(x, b);
    }
    for (int64_t c = 16; c < hd; c += 16) {
        a = _mm512_loadu_ps(qa + c);
        b = _mm512_loadu_ps(qb + c);
        for (int r = 0; r < 8; r++) {
            __m512 x = _mm512_loadu_ps(w + r * hd + c);
            acc[r] = _mm512_fmadd_ps(x, a, acc[r]);
            acc[8 + r] = _mm512_fmadd_ps(x, b, acc[8 + r]);
        }
    }
    __m512 s = _mm512_mul_ps(hsum16x16(acc), scale);
    _mm256_mask_storeu_ps(da, keep, _mm512_castps512_ps256(s));
    _mm256_mask_storeu_ps(db, keep, _mm512_extractf32x8_ps(s, 1));
}

// Up to four heads' queries packed for score_quad16, heads past `heads` zero: vector j (16
// floats at qp + 16 * j) holds columns 4j ..< 4j + 4 of each head, head h in lanes 4h ..< 4h + 4.
static inline void pack_queries4(const float *q, int64_t hd, int64_t heads, float *qp) {
    for (int64_t j = 0; j < hd / 4; j++)
        for (int64_t h = 0; h < 4; h++)
            for (int64_t c = 0; c < 4; c++) qp[16 * j + 4 * h + c] = h < heads ? q[h * hd + 4 * j + c] : 0.0f;
}

// The scores of up to four heads (queries packed by pack_queries4) against a widened tile of
// 16 rows, times `scale`: head h's to dst + h * stride, the lanes in `keep`. A row's four
// columns at a time are broadcast to the four heads; lane (h, c) of the row's accumulator
// sums head h's products of columns c, c + 4, c + 8, ... in order, and its four lanes are
// then added (c0 + c1) + (c2 + c3). A head's score is thus the same sum whatever lanes it has
// and whatever the other lanes hold, and whatever tile its row falls in: bitwise the same in
// a group of any size, alone or split across threads, and in the prefill rows kernel. The
// four heads' sums across lanes take 44 shuffles and adds a tile, where summing each head's
// 16-lane vectors took 46 per head (a Llama 3.2 1B head pass from L2 took 0.91x the time).
// With `pf`, line i of the tile there is fetched at column step i: a tile's f16 rows are
// exactly one line per step, so the fetches spread over the arithmetic instead of queueing
// for the line-fill buffers at once (results/attention-quad-2026-12-05-emr/).
static inline __attribute__((always_inline)) void score_quad16(const float *w, const float *qp, int64_t hd, __m512 scale,
                                                               float *dst, int64_t stride, int64_t heads, __mmask16 keep,
                                                               const char *pf) {
    __m512 s[16];
    for (int half = 0; half < 16; half += 8) {
        const char *line = pf ? pf + 64 * (half / 8) * (hd / 4) : NULL;
        __m512 acc[8];
        __m512 q0 = _mm512_loadu_ps(qp);
        if (line) _mm_prefetch(line, _MM_HINT_T0);
        for (int p = 0; p < 8; p++) acc[p] = _mm512_mul_ps(_mm512_broadcast_f32x4(_mm_loadu_ps(w + (half + p) * hd)), q0);
        for (int64_t j = 1; j < hd / 4; j++) {
            __m512 qj = _mm512_loadu_ps(qp + 16 * j);
            if (line) _mm_prefetch(line + 64 * j, _MM_HINT_T0);
            for (int p = 0; p < 8; p++)
                acc[p] = _mm512_fmadd_ps(_mm512_broadcast_f32x4(_mm_loadu_ps(w + (half + p) * hd + 4 * j)), qj, acc[p]);
        }
        for (int p = 0; p < 8; p++) s[half + p] = acc[p];
    }
    // Rows in pairs: lanes (c0, c2) and (c1, c3) of both added, then pairs of those, leaving
    // 128-bit lane h of u[i] with head h's scores of rows 4i ..< 4i + 4; a 4 x 4 transpose of
    // the 128-bit lanes gives each head its 16.
    __m512 t[8], u[4];
    for (int i = 0; i < 8; i++)
        t[i] = _mm512_add_ps(_mm512_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int i = 0; i < 4; i++)
        u[i] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    __m512 x0 = _mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0));
    __m512 x1 = _mm512_shuffle_f32x4(u[2], u[3], _MM_SHUFFLE(1, 0, 1, 0));
    __m512 x2 = _mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2));
    __m512 x3 = _mm512_shuffle_f32x4(u[2], u[3], _MM_SHUFFLE(3, 2, 3, 2));
    __m512 head[4] = {_mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(3, 1, 3, 1)),
                      _mm512_shuffle_f32x4(x2, x3, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(x2, x3, _MM_SHUFFLE(3, 1, 3, 1))};
    for (int64_t h = 0; h < heads; h++) _mm512_mask_storeu_ps(dst + h * stride, keep, _mm512_mul_ps(head[h], scale));
}

// oa += pa[p0 ..< p1] times the widened value rows w[p0 ..< p1], and ob with pb, one row
// after another, 128 columns of both at a time in registers: each loaded value vector feeds
// both heads (accumulate_values16 loads one per multiply-add). Per output, the same
// multiply-adds in the same order as accumulate_values16.
static inline __attribute__((always_inline)) void accumulate_values_pair(const float *pa, const float *pb, const float *w,
                                                                         int64_t p0, int64_t p1, float *oa, float *ob,
                                                                         int64_t hd) {
    for (int64_t c0 = 0; c0 < hd; c0 += 128) {
        int64_t nu = (hd - c0) / 16 < 8 ? (hd - c0) / 16 : 8;
        __m512 acc[16];
        for (int64_t u = 0; u < nu; u++) {
            acc[u] = _mm512_loadu_ps(oa + c0 + 16 * u);
            acc[8 + u] = _mm512_loadu_ps(ob + c0 + 16 * u);
        }
        for (int64_t p = p0; p < p1; p++) {
            __m512 va = _mm512_set1_ps(pa[p]), vb = _mm512_set1_ps(pb[p]);
            for (int64_t u = 0; u < nu; u++) {
                __m512 x = _mm512_loadu_ps(w + p * hd + c0 + 16 * u);
                acc[u] = _mm512_fmadd_ps(va, x, acc[u]);
                acc[8 + u] = _mm512_fmadd_ps(vb, x, acc[8 + u]);
            }
        }
        for (int64_t u = 0; u < nu; u++) {
            _mm512_storeu_ps(oa + c0 + 16 * u, acc[u]);
            _mm512_storeu_ps(ob + c0 + 16 * u, acc[8 + u]);
        }
    }
}

// accumulate_values16 for `group` heads over the same widened rows: head g's probabilities
// at pg + g * stride, its outputs at og + g * hd; two heads per value load, the odd one alone.
static inline __attribute__((always_inline)) void accumulate_values_heads(const float *pg, int64_t stride, const float *w,
                                                                          int64_t p0, int64_t p1, float *og, int64_t hd,
                                                                          int64_t group) {
    int64_t g = 0;
    for (; g + 1 < group; g += 2)
        accumulate_values_pair(pg + g * stride, pg + (g + 1) * stride, w, p0, p1, og + g * hd, og + (g + 1) * hd, hd);
    if (g < group) accumulate_values16(pg + g * stride, w, p0, p1, og + g * hd, hd);
}

// One f16 value row widened in registers (nc vectors) for every unit at once: unit i, 16
// columns from col[i] of a head, takes prob[i][p] times them (the same products as through
// a widened buffer, without its stores and loads).
static inline __attribute__((always_inline)) void value_row16(const uint16_t *vrow, int64_t nc, const float *const *prob,
                                                              int64_t p, const int64_t *col, int64_t units, __m512 *acc) {
    __m512 wv[16];
    for (int64_t c = 0; c < nc; c++) wv[c] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(vrow + 16 * c)));
    for (int64_t i = 0; i < units; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(prob[i][p]), wv[col[i] / 16], acc[i]);
}

// Probabilities j0 ..< j0 + t of each head scaled by its 1 / sum, as qb_softmax's last pass
// does to the whole row (the same products), a tile at a time just before its values use them.
static inline void normalize_tile16(float *scores, int64_t n, int64_t group, int64_t j0, int64_t t, const float *inv) {
    const __mmask16 keep = t == ATT_TILE16 ? (__mmask16)0xFFFF : (__mmask16)((1u << t) - 1);
    for (int64_t g = 0; g < group; g++) {
        float *x = scores + g * n + j0;
        _mm512_mask_storeu_ps(x, keep, _mm512_mul_ps(_mm512_maskz_loadu_ps(keep, x), _mm512_set1_ps(inv[g])));
    }
}

// The softmax is qb_softmax's, its passes folded into the loops: each head's maximum taken as
// its scores are made, the exponentials and their sum in one pass (exp_sum), and the division
// by the sum applied per tile of values (normalize_tile16). Max is exact and the products are
// the same, so the probabilities are bitwise qb_softmax's, with two passes over the scores fewer.
// At most ATT_GROUP16 heads (qb_attention_group takes larger groups in parts). Heads of up to
// ATT_QUAD_HD columns are scored four to a vector (score_quad16), wider ones one to a vector
// (score_tile16, score_pair8): the head size is the model's, so a head's sums are the same in
// every part of its group either way.
enum { ATT_GROUP16 = 16, ATT_QUAD_HD = 128 };
static inline __attribute__((always_inline)) void attention_group16(
    int32_t type, const float *q, const void *k, const void *v, int64_t n, int64_t hd, int64_t group, float scale,
    float *scores, float *out) {
    int64_t row = type == QB_F16 ? hd * 2 : hd / 32 * 34, quads = (group + 3) / 4;
    float w[ATT_TILE16 * 512], qp[ATT_GROUP16 * ATT_QUAD_HD];
    const __m512 vscale = _mm512_set1_ps(scale);
    __m512 vmax[group];
    float inv[group];
    for (int64_t g = 0; g < group; g++) vmax[g] = _mm512_set1_ps(-INFINITY);
    if (hd <= ATT_QUAD_HD)
        for (int64_t g = 0; g < group; g += 4) pack_queries4(q + g * hd, hd, group - g < 4 ? group - g : 4, qp + g * hd);
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE16) {
        int64_t t = n - j0 < ATT_TILE16 ? n - j0 : ATT_TILE16;
        widen_rows16(type, (const uint8_t *)k + j0 * row, w, t, hd);
        // A last partial tile takes the same path with its missing rows zero: each score is
        // the same sum in the same order wherever its position falls, and the remainder
        // costs one tile, not a horizontal sum per position and head.
        if (t < ATT_TILE16) memset(w + t * hd, 0, (size_t)((ATT_TILE16 - t) * hd) * sizeof(float));
        const __mmask16 keep = t == ATT_TILE16 ? (__mmask16)0xFFFF : (__mmask16)((1u << t) - 1);
        // f16 tiles fetched ahead by the first four heads' steps (score_quad16); Q8_0 rows
        // (the float path of wide groups) by parts, a part per four heads.
        const char *ahead = type == QB_F16 && j0 + ATT_PREFETCH_ROWS + ATT_TILE16 <= n
                                ? (const char *)k + (j0 + ATT_PREFETCH_ROWS) * row
                                : NULL;
        int64_t g = 0;
        for (; hd <= ATT_QUAD_HD && g < group; g += 4) {
            if (type != QB_F16) prefetch_part((const uint8_t *)k, j0, 16, n, row, g / 4, quads);
            score_quad16(w, qp + g * hd, hd, vscale, scores + g * n + j0, n, group - g < 4 ? group - g : 4, keep,
                         g == 0 ? ahead : NULL);
        }
        // Wider heads one to a vector: their sums across lanes are a smaller part of the
        // work, and split groups (Gemma 3's four heads per KV head in parts of two at two
        // threads) would leave half of score_quad16's lanes empty. Heads of 256 columns and
        // more two at a time (score_pair8: each key vector loaded once for both), as the
        // prefill chunks' queries: one position at depth 4096 alone, 256 x 4 0.82x the time,
        // 256 x 2 0.88x.
        for (; hd >= 256 && g + 1 < group; g += 2) {
            prefetch_part((const uint8_t *)k, j0, 16, n, row, g, group);
            prefetch_part((const uint8_t *)k, j0, 16, n, row, g + 1, group);
            float *da = scores + g * n + j0, *db = da + n;
            score_pair8(w, hd, q + g * hd, q + (g + 1) * hd, vscale, da, db, (__mmask8)keep);
            if (t > 8) score_pair8(w + 8 * hd, hd, q + g * hd, q + (g + 1) * hd, vscale, da + 8, db + 8, (__mmask8)(keep >> 8));
        }
        for (; g < group; g++) {
            prefetch_part((const uint8_t *)k, j0, 16, n, row, g, group);
            score_tile16(w, q + g * hd, hd, scale, scores + g * n + j0, keep);
        }
        // max_ps keeps its second operand where either is NaN, as qb_softmax's loop.
        for (g = 0; g < group; g++)
            vmax[g] = _mm512_mask_max_ps(vmax[g], keep, _mm512_maskz_loadu_ps(keep, scores + g * n + j0), vmax[g]);
    }
    for (int64_t g = 0; g < group; g++) inv[g] = 1.0f / exp_sum(scores + g * n, n, _mm512_reduce_max_ps(vmax[g]));
    // Values: the outputs of the group, 16 columns per unit (16 independent multiply-add
    // chains; each widened value row is loaded once for all the heads). Up to 16 units stay
    // in registers for the whole pass.
    int64_t nc = hd / 16, units = group * nc;
    if (units <= 16) {
        __m512 acc[16];
        // Each unit's probabilities and columns, found once (a division per multiply-add
        // cost more than the multiply-add where the head dimension is not a constant).
        const float *prob[16];
        int64_t col[16];
        for (int64_t i = 0; i < units; i++) {
            acc[i] = _mm512_setzero_ps();
            prob[i] = scores + i / nc * n;
            col[i] = 16 * (i % nc);
        }
        for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE16) {
            int64_t t = n - j0 < ATT_TILE16 ? n - j0 : ATT_TILE16;
            normalize_tile16(scores, n, group, j0, t, inv);
            if (type == QB_F16) {
                for (int64_t p = j0; p < j0 + t; p++) {
                    prefetch_part((const uint8_t *)v, j0, 16, n, row, p - j0, ATT_TILE16);
                    value_row16((const uint16_t *)v + p * hd, nc, prob, p, col, units, acc);
                }
                continue;
            }
            prefetch_tile((const uint8_t *)v, j0, 16, n, row);
            widen_rows16(type, (const uint8_t *)v + j0 * row, w, t, hd);
            for (int64_t p = 0; p < t; p++)
                for (int64_t i = 0; i < units; i++)
                    acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(prob[i][j0 + p]), _mm512_loadu_ps(w + p * hd + col[i]), acc[i]);
        }
        for (int64_t i = 0; i < units; i++) _mm512_storeu_ps(out + 16 * i, acc[i]);
        return;
    }
    // More units: each tile of values is widened once and each head's partial sums pass
    // through `out` between tiles (the same sums in the same order; widening the values
    // again per 16 units cost as much as the multiply-adds), two heads per value load.
    for (int64_t i = 0; i < units; i++) _mm512_storeu_ps(out + 16 * i, _mm512_setzero_ps());
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE16) {
        int64_t t = n - j0 < ATT_TILE16 ? n - j0 : ATT_TILE16;
        normalize_tile16(scores, n, group, j0, t, inv);
        widen_rows16(type, (const uint8_t *)v + j0 * row, w, t, hd);
        accumulate_values_heads(scores + j0, n, w, 0, t, out, hd, group);
    }
}
#endif

#if defined(QB_AVX512)
// Q8_0 caches on VNNI: the queries are rounded to Q8_0 (as GGML does before a dot with Q8_0
// keys) and dotted with the cached int8 keys by vpdpbusd, which wants one unsigned operand:
// keys are offset by 128 (xor 0x80), which the accumulator's start (-128 x the query's
// sums) cancels exactly. A tile's 16 key rows, 64 bytes (two blocks) at a time, are
// transposed once for the whole group, so that each vpdpbusd takes four bytes of all 16
// positions against one broadcast dword of the query: the lanes are the positions' scores,
// with no horizontal sums. Values are widened without their scale, which goes into the
// probabilities (one multiply per block and position instead of per value).

// The f16 scales of block `b` of 16 consecutive Q8_0 rows of `row` bytes, as floats.
static inline __m512 row_scales16(const uint8_t *rows, int64_t row, int64_t b) {
    rows += 34 * b;
    __m128i lo = row_halves8(rows, row, 8), hi = row_halves8(rows + 8 * row, row, 8);
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// The int8 quants of blocks b and b + 1 (zero when b + 1 is past nb) of a Q8_0 row.
static inline __m512i q8_pair(const uint8_t *rowp, int64_t b, int64_t nb) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(rowp + 34 * b + 2));
    __m256i hi = b + 1 < nb ? _mm256_loadu_si256((const __m256i *)(rowp + 34 * (b + 1) + 2)) : _mm256_setzero_si256();
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

static inline __attribute__((always_inline)) void attention_group_q8(
    const float *q, const uint8_t *k, const uint8_t *v, int64_t n, int64_t hd, int64_t group, float scale,
    float *scores, float *out) {
    int64_t nb = hd / 32, row = nb * 34, pairs = (nb + 1) / 2;
    // The group's queries as Q8_0: quants 64 bytes per pair of blocks, scales, and the
    // accumulator start per pair (-128 x the sum of each lane's four quants).
    // For the transposed tiles: the quants as dwords and -128 x each block's sum.
    __m512i qv[ATT_Q8_GROUP][8], start[ATT_Q8_GROUP][8];
    int32_t qd[ATT_Q8_GROUP][8 * 16], bstart[ATT_Q8_GROUP][16];
    float dq[ATT_Q8_GROUP][16];
    quantize_queries_q8(q, group, hd, qd, dq);
    for (int64_t g = 0; g < group; g++) {
        for (int64_t b = 0; b < nb; b++) {
            const int8_t *qs = (const int8_t *)(qd[g] + 8 * b);
            int32_t sum = 0;
            for (int i = 0; i < 32; i++) sum += qs[i];
            bstart[g][b] = -128 * sum;
        }
        for (int64_t c = 0; c < pairs; c++) {
            qv[g][c] = _mm512_loadu_si512((const void *)(qd[g] + 16 * c));
            start[g][c] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)0x80), qv[g][c]));
        }
    }
    // Softmax as the scores are made: their maxima here, exponentials after, and the
    // division by the sums folded into the value scales below.
    __m512 vmax[ATT_Q8_GROUP];
    float mx[ATT_Q8_GROUP], inv[ATT_Q8_GROUP];
    for (int64_t g = 0; g < group; g++) { vmax[g] = _mm512_set1_ps(-INFINITY); mx[g] = -INFINITY; }
    int64_t full = n / 16 * 16;
    for (int64_t j0 = 0; j0 < full; j0 += 16) {
        const uint8_t *kt = k + j0 * row;
        prefetch_tile(k, j0, 16, n, row);
        __m512 sc[ATT_Q8_GROUP];
        for (int64_t g = 0; g < group; g++) sc[g] = _mm512_setzero_ps();
        for (int64_t c = 0; c < pairs; c++) {
            __m512i keys[16];
            for (int p = 0; p < 16; p++) keys[p] = _mm512_xor_si512(q8_pair(kt + p * row, 2 * c, nb), _mm512_set1_epi8((char)0x80));
            transpose16x16_epi32(keys);
            __m512 dka = row_scales16(kt, row, 2 * c);
            __m512 dkb = 2 * c + 1 < nb ? row_scales16(kt, row, 2 * c + 1) : _mm512_setzero_ps();
            for (int64_t g = 0; g < group; g++) {
                const int32_t *qw = qd[g] + 16 * c;
                // Two chains per block: vpdpbusd waits on its accumulator.
                __m512i sa = _mm512_set1_epi32(bstart[g][2 * c]), sa2 = _mm512_setzero_si512();
                for (int d = 0; d < 8; d += 2) {
                    sa = _mm512_dpbusd_epi32(sa, keys[d], _mm512_set1_epi32(qw[d]));
                    sa2 = _mm512_dpbusd_epi32(sa2, keys[d + 1], _mm512_set1_epi32(qw[d + 1]));
                }
                sc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sa, sa2)), _mm512_mul_ps(dka, _mm512_set1_ps(dq[g][2 * c])), sc[g]);
                if (2 * c + 1 < nb) {
                    __m512i sb = _mm512_set1_epi32(bstart[g][2 * c + 1]), sb2 = _mm512_setzero_si512();
                    for (int d = 8; d < 16; d += 2) {
                        sb = _mm512_dpbusd_epi32(sb, keys[d], _mm512_set1_epi32(qw[d]));
                        sb2 = _mm512_dpbusd_epi32(sb2, keys[d + 1], _mm512_set1_epi32(qw[d + 1]));
                    }
                    sc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sb, sb2)), _mm512_mul_ps(dkb, _mm512_set1_ps(dq[g][2 * c + 1])), sc[g]);
                }
            }
        }
        for (int64_t g = 0; g < group; g++) {
            __m512 x = _mm512_mul_ps(sc[g], _mm512_set1_ps(scale));
            vmax[g] = _mm512_max_ps(x, vmax[g]);
            _mm512_storeu_ps(scores + g * n + j0, x);
        }
    }
    // The last positions one by one, in the same integer arithmetic.
    for (int64_t j = full; j < n; j++) {
        const uint8_t *kr = k + j * row;
        for (int64_t g = 0; g < group; g++) {
            float s = 0;
            for (int64_t c = 0; c < pairs; c++) {
                __m512i acc = _mm512_dpbusd_epi32(start[g][c], _mm512_xor_si512(q8_pair(kr, 2 * c, nb), _mm512_set1_epi8((char)0x80)), qv[g][c]);
                s += (float)_mm512_mask_reduce_add_epi32(0x00FF, acc) * h2f((qb_half)(kr[68 * c] | kr[68 * c + 1] << 8)) * dq[g][2 * c];
                if (2 * c + 1 < nb)
                    s += (float)_mm512_mask_reduce_add_epi32(0xFF00, acc) * h2f((qb_half)(kr[68 * c + 34] | kr[68 * c + 35] << 8)) * dq[g][2 * c + 1];
            }
            scores[g * n + j] = s * scale;
            mx[g] = s * scale > mx[g] ? s * scale : mx[g];
        }
    }
    for (int64_t g = 0; g < group; g++) {
        float m = _mm512_reduce_max_ps(vmax[g]);
        inv[g] = 1.0f / exp_sum(scores + g * n, n, m > mx[g] ? m : mx[g]);
    }
    // Values: the group's outputs in registers, 16 columns per unit, 16 units per pass, as
    // attention_group16; a pass takes `per` 16-column chunks for every head of the group
    // (group <= ATT_Q8_GROUP = 16, so at least one), so each chunk of a position is widened
    // once for all the heads. Each position's probabilities are scaled by its block's value
    // scales. (Passes of 16 units head after head widened each chunk once per head and found
    // a unit's head and column by divisions in the inner loop, which the compiler removes
    // only for the head size 64 compiled on its own: heads of 256 columns, Gemma 3's, took
    // 2.5x this time and 128-column heads in groups of 8 3.1x, results/attention-q8-2026-11-30-emr/.)
    int64_t nc = hd / 16, per = 16 / group;
    float pd[ATT_Q8_GROUP][16][16];
    for (int64_t c0 = 0; c0 < nc; c0 += per) {
        int64_t c1 = c0 + per < nc ? c0 + per : nc, b0 = c0 / 2, b1 = (c1 + 1) / 2;
        __m512 acc[16];
        for (int64_t i = 0; i < 16; i++) acc[i] = _mm512_setzero_ps();
        for (int64_t j0 = 0; j0 < n; j0 += 16) {
            int64_t t = n - j0 < 16 ? n - j0 : 16;
            const uint8_t *vt = v + j0 * row;
            prefetch_tile(v, j0, 16, n, row);
            if (t == 16) {
                for (int64_t b = b0; b < b1; b++) {
                    __m512 dv = row_scales16(vt, row, b);
                    for (int64_t g = 0; g < group; g++)
                        _mm512_storeu_ps(pd[g][b], _mm512_mul_ps(_mm512_mul_ps(dv, _mm512_set1_ps(inv[g])), _mm512_loadu_ps(scores + g * n + j0)));
                }
            } else {
                for (int64_t p = 0; p < t; p++)
                    for (int64_t b = b0; b < b1; b++) {
                        float dv = h2f((qb_half)(vt[p * row + 34 * b] | vt[p * row + 34 * b + 1] << 8));
                        for (int64_t g = 0; g < group; g++) pd[g][b][p] = dv * inv[g] * scores[g * n + j0 + p];
                    }
            }
            for (int64_t p = 0; p < t; p++) {
                const uint8_t *vr = vt + p * row;
                for (int64_t c = c0; c < c1; c++) {
                    __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(vr + 34 * (c / 2) + 2 + 16 * (c % 2)))));
                    __m512 *a = acc + (c - c0) * group;
                    for (int64_t g = 0; g < group; g++) a[g] = _mm512_fmadd_ps(_mm512_set1_ps(pd[g][c / 2][p]), x, a[g]);
                }
            }
        }
        for (int64_t c = c0; c < c1; c++)
            for (int64_t g = 0; g < group; g++) _mm512_storeu_ps(out + g * hd + 16 * c, acc[(c - c0) * group + g]);
    }
}
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
// Q8_0 caches on AVX2: integer scores without VNNI. As on VNNI, the queries are rounded to
// Q8_0 and each block's dot product is exact in int32; vpmaddubsw wants one unsigned
// operand, so it takes |key| against the query's bytes given the key's signs (vpsignb).
// Both come from the Q8_0 quantizer, |x| <= 127, so a pair of products (at most 32,258)
// never saturates its int16 lane; vpmaddwd widens the pairs to int32. A tile's 8 key rows
// are transposed a block at a time (dword d of every row in one vector), so each
// instruction takes four bytes of all 8 positions against one broadcast dword of the query
// and the lanes are the positions' sums: no horizontal sums, and a score does not depend
// on where its row falls in a tile. The sums are scaled by the key's and the query's block
// scales in f32, block after block. Values are widened without their scale, which goes
// into the probabilities with the softmax's division (one multiply per block and position
// instead of one per value).

// The f16 scales of block `b` of rows 0 ..< t of a tile of Q8_0 rows of `row` bytes, as
// floats, zeros past t.
static inline __m256 row_scales8(const uint8_t *rows, int64_t row, int64_t b, int64_t t) {
    return _mm256_cvtph_ps(row_halves8(rows + 34 * b, row, t));
}

// A partial tile's first t scores (of the 8 in `lanes`) stored at dst, their maximum taken
// into *mx (the folded softmax's, as qb_softmax's scalar loop takes it).
static inline void store_partial8(const float *lanes, int64_t t, float *dst, float *mx) {
    for (int64_t p = 0; p < t; p++) {
        dst[p] = lanes[p];
        *mx = lanes[p] > *mx ? lanes[p] : *mx;
    }
}

// The folded softmax's middle pass for each of the group's heads: its maximum (the lanes of
// vmax[g] and mx[g]), its n scores at scores + g * n made exponentials in place (exp_sum), and
// inv[g] the reciprocal of their sum, which the value pass multiplies them by.
static inline void softmax_sums8(const __m256 *vmax, float *mx, float *scores, int64_t n, int64_t group, float *inv) {
    for (int64_t g = 0; g < group; g++) {
        float lanes[8];
        _mm256_storeu_ps(lanes, vmax[g]);
        for (int l = 0; l < 8; l++) mx[g] = lanes[l] > mx[g] ? lanes[l] : mx[g];
        inv[g] = 1.0f / exp_sum(scores + g * n, n, mx[g]);
    }
}

// Positions 0 ..< t of a tile of value rows (Q8_0 blocks or f16, `row` bytes each) into the
// group's outputs: each 16 columns of a position widened in registers once for up to four
// heads, whose sums for those columns stay in registers over the tile. Head g's weight of
// position p in the columns of block b is prob[g * gs + b * bs + p]: for Q8_0 its
// probability times the block's value scale (the values widened without it), for f16 its
// probability. Each output is the same chain of multiply-adds, position after position, as
// when the tile's rows were widened into a buffer first (accumulate_values8 for f16, so
// prefill rows stay bitwise the group kernel's), without that buffer's stores and reloads:
// for Q8_0, with row_halves8, 0.67-0.79x the time of a head pass from L2
// (results/attention-q8-2026-11-30-emr/).
static inline __attribute__((always_inline)) void values_tile8(const int32_t type, const uint8_t *vt, int64_t row,
                                                               int64_t hd, int64_t group, const float *prob, int64_t gs,
                                                               int64_t bs, const int64_t t, float *out) {
    for (int64_t c = 0; c < hd; c += 16)
        for (int64_t g0 = 0; g0 < group; g0 += 4) {
            int64_t gn = group - g0 < 4 ? group - g0 : 4, b = c / 32;
            __m256 acc[4][2];
            for (int64_t i = 0; i < gn; i++)
                for (int h = 0; h < 2; h++) acc[i][h] = _mm256_loadu_ps(out + (g0 + i) * hd + c + 8 * h);
            for (int64_t p = 0; p < t; p++) {
                __m256 x[2];
                for (int h = 0; h < 2; h++) {
                    const uint8_t *at = vt + p * row + (type == QB_F16 ? 2 * (c + 8 * h) : 34 * b + 2 + c % 32 + 8 * h);
                    x[h] = type == QB_F16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)at))
                                          : _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)at)));
                }
                for (int64_t i = 0; i < gn; i++) {
                    __m256 pv = _mm256_set1_ps(prob[(g0 + i) * gs + b * bs + p]);
                    for (int h = 0; h < 2; h++) acc[i][h] = _mm256_fmadd_ps(pv, x[h], acc[i][h]);
                }
            }
            for (int64_t i = 0; i < gn; i++)
                for (int h = 0; h < 2; h++) _mm256_storeu_ps(out + (g0 + i) * hd + c + 8 * h, acc[i][h]);
        }
}

static inline __attribute__((always_inline)) void attention_group_q8x8(
    const float *q, const uint8_t *k, const uint8_t *v, int64_t n, int64_t hd, int64_t group, float scale,
    float *scores, float *out) {
    int64_t nb = hd / 32, row = nb * 34;
    // The group's queries as Q8_0: quants as dwords (broadcast against the transposed
    // keys) and scales.
    int32_t qd[ATT_Q8_GROUP][8 * 16];
    float dq[ATT_Q8_GROUP][16];
    quantize_queries_q8(q, group, hd, qd, dq);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 vmax[ATT_Q8_GROUP];
    float mx[ATT_Q8_GROUP], inv[ATT_Q8_GROUP];
    for (int64_t g = 0; g < group; g++) { vmax[g] = _mm256_set1_ps(-INFINITY); mx[g] = -INFINITY; }
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        int64_t t = n - j0 < 8 ? n - j0 : 8;
        const uint8_t *kt = k + j0 * row;
        prefetch_tile(k, j0, 8, n, row);
        // A last partial tile's rows, zeros after them: the same arithmetic as a full one.
        uint8_t pad[8 * 16 * 34];
        if (t < 8) {
            memset(pad, 0, (size_t)(8 * row));
            memcpy(pad, kt, (size_t)(t * row));
            kt = pad;
        }
        __m256 sc[ATT_Q8_GROUP];
        for (int64_t g = 0; g < group; g++) sc[g] = _mm256_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            __m256i keys[8];
            for (int p = 0; p < 8; p++) keys[p] = _mm256_loadu_si256((const __m256i *)(kt + p * row + 34 * b + 2));
            transpose8x8_epi32(keys);
            __m256i sum[ATT_Q8_GROUP];
            for (int64_t g = 0; g < group; g++) sum[g] = _mm256_setzero_si256();
            for (int d = 0; d < 8; d++) {
                __m256i mag = _mm256_abs_epi8(keys[d]);
                for (int64_t g = 0; g < group; g++) {
                    __m256i x = _mm256_sign_epi8(_mm256_set1_epi32(qd[g][8 * b + d]), keys[d]);
                    sum[g] = _mm256_add_epi32(sum[g], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, x), ones));
                }
            }
            __m256 dk = row_scales8(kt, row, b, 8);
            for (int64_t g = 0; g < group; g++)
                sc[g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[g]), _mm256_mul_ps(dk, _mm256_set1_ps(dq[g][b])), sc[g]);
        }
        for (int64_t g = 0; g < group; g++) {
            __m256 x = _mm256_mul_ps(sc[g], _mm256_set1_ps(scale));
            if (t == 8) {
                vmax[g] = _mm256_max_ps(x, vmax[g]);
                _mm256_storeu_ps(scores + g * n + j0, x);
            } else {
                float lanes[8];
                _mm256_storeu_ps(lanes, x);
                store_partial8(lanes, t, scores + g * n + j0, &mx[g]);
            }
        }
    }
    softmax_sums8(vmax, mx, scores, n, group, inv);
    // Values, a tile at a time (values_tile8).
    for (int64_t d = 0; d < group * hd; d++) out[d] = 0;
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        int64_t t = n - j0 < 8 ? n - j0 : 8;
        const uint8_t *vt = v + j0 * row;
        prefetch_tile(v, j0, 8, n, row);
        float pd[ATT_Q8_GROUP][16][8];
        __m256 dv[16];
        for (int64_t b = 0; b < nb; b++) dv[b] = row_scales8(vt, row, b, t);
        for (int64_t g = 0; g < group; g++) {
            float probs[8] = {0};
            if (t < 8) memcpy(probs, scores + g * n + j0, (size_t)t * sizeof(float));
            __m256 pr = _mm256_mul_ps(_mm256_set1_ps(inv[g]), _mm256_loadu_ps(t < 8 ? probs : scores + g * n + j0));
            for (int64_t b = 0; b < nb; b++) _mm256_storeu_ps(pd[g][b], _mm256_mul_ps(dv[b], pr));
        }
        if (t == 8) values_tile8(QB_Q8_0, vt, row, hd, group, &pd[0][0][0], 16 * 8, 8, 8, out);
        else values_tile8(QB_Q8_0, vt, row, hd, group, &pd[0][0][0], 16 * 8, 8, t, out);
    }
}

// f16 caches on AVX2: the values a tile at a time in registers (values_tile8); the scores as
// the generic path makes them (each tile of keys widened once, score_tile8 per head; a last
// partial tile padded with zero rows, as prefill's attention_rows8 pads its tiles); and
// qb_softmax's passes folded in as attention_group16 folds them: each head's maximum taken
// as its scores are made, the exponentials and their sum in one pass (exp_sum), and the
// division by the sum applied a tile at a time just before its values use it. The maximum
// is exact and the products the same, so the probabilities are bitwise qb_softmax's.
// Against the generic path (widened values, a separate softmax) a 4096-position head pass
// of Llama 3.2 1B's shape took 0.89x the time from L2 and from memory, one thread on an
// Intel Xeon (Emerald Rapids), and two-thread decode at depth 4096 ran 1.04x
// (results/attention-f16-avx2-2026-12-04-emr/). Two heads per key load (score_tile8xn) ran
// 1.07x the time of one at a time there.
static inline __attribute__((always_inline)) void attention_group_f16x8(
    const float *q, const uint16_t *k, const uint16_t *v, int64_t n, int64_t hd, int64_t group, float scale,
    float *scores, float *out) {
    float w[ATT_TILE * 512];
    __m256 vmax[group];
    float mx[group], inv[group];
    for (int64_t g = 0; g < group; g++) { vmax[g] = _mm256_set1_ps(-INFINITY); mx[g] = -INFINITY; }
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE) {
        int64_t t = n - j0 < ATT_TILE ? n - j0 : ATT_TILE;
        widen_rows(QB_F16, k + j0 * hd, w, t, hd);
        // A last partial tile takes the same path with its missing rows zero (score_tile8
        // sums each row alike wherever it falls), its first t scores kept.
        if (t < ATT_TILE) memset(w + t * hd, 0, (size_t)((ATT_TILE - t) * hd) * sizeof(float));
        for (int64_t g = 0; g < group; g++) {
            prefetch_part((const uint8_t *)k, j0, ATT_TILE, n, hd * 2, g, group);
            float *dst = scores + g * n + j0;
            if (t == ATT_TILE) {
                score_tile8(w, q + g * hd, hd, scale, dst);
                // max_ps keeps its second operand where either is NaN, as qb_softmax's loop.
                vmax[g] = _mm256_max_ps(_mm256_loadu_ps(dst), vmax[g]);
                continue;
            }
            float lanes[ATT_TILE];
            score_tile8(w, q + g * hd, hd, scale, lanes);
            store_partial8(lanes, t, dst, &mx[g]);
        }
    }
    softmax_sums8(vmax, mx, scores, n, group, inv);
    for (int64_t d = 0; d < group * hd; d++) out[d] = 0;
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE) {
        int64_t t = n - j0 < ATT_TILE ? n - j0 : ATT_TILE;
        prefetch_tile((const uint8_t *)v, j0, ATT_TILE, n, hd * 2);
        for (int64_t g = 0; g < group; g++) {
            float *x = scores + g * n + j0;
            if (t == ATT_TILE) _mm256_storeu_ps(x, _mm256_mul_ps(_mm256_loadu_ps(x), _mm256_set1_ps(inv[g])));
            else for (int64_t p = 0; p < t; p++) x[p] *= inv[g];
        }
        const uint8_t *vt = (const uint8_t *)(v + j0 * hd);
        if (t == ATT_TILE) values_tile8(QB_F16, vt, hd * 2, hd, group, scores + j0, n, 0, ATT_TILE, out);
        else values_tile8(QB_F16, vt, hd * 2, hd, group, scores + j0, n, 0, t, out);
    }
}
#endif

// Rounds `group` queries through Q8_0 (what the integer kernels dot with a Q8_0 cache), so
// every path computes the same scores.
static void round_queries_q8_0(const float *q, float *rounded, int64_t count) {
    uint8_t blocks[34];
    for (int64_t i = 0; i < count; i += 32) {
        qb_quantize_row(QB_Q8_0, q + i, blocks, 32);
        qb_dequantize_row(QB_Q8_0, blocks, rounded + i, 32);
    }
}

void qb_attention_group(int32_t type, const float *q, const void *k, const void *v, int64_t first, int64_t n,
                        int64_t hd, int64_t group, float scale, float *scores, float *out) {
    // The window's rows as a cache of their own (see qb_attention_head). For Q8_0 the 16-row
    // tiles then start at `first` rather than at a multiple of 16: rows carry no alignment
    // (a Q8_0 row is 34 x hd/32 bytes), so this reads exactly the window, with no tile of
    // masked positions before it.
    int64_t row_bytes = type == QB_F16 ? hd * 2 : hd / 32 * 34;
    k = (const uint8_t *)k + first * row_bytes;
    v = (const uint8_t *)v + first * row_bytes;
    n -= first;
#if defined(QB_AVX512)
    if (type == QB_Q8_0 && hd <= 512 && hd % 32 == 0 && group <= ATT_Q8_GROUP) {
        if (hd == 64 && group == 4) return attention_group_q8(q, k, v, n, 64, 4, scale, scores, out);
        return attention_group_q8(q, k, v, n, hd, group, scale, scores, out);
    }
#elif defined(__AVX2__) && !defined(__AVX512F__)
    if (type == QB_Q8_0 && hd <= 512 && hd % 32 == 0 && group <= ATT_Q8_GROUP) {
        if (hd == 64 && group == 4) return attention_group_q8x8(q, k, v, n, 64, 4, scale, scores, out);
        return attention_group_q8x8(q, k, v, n, hd, group, scale, scores, out);
    }
    if (type == QB_F16 && hd <= 512 && hd % 32 == 0) {
        if (hd == 64 && group == 4) return attention_group_f16x8(q, k, v, n, 64, 4, scale, scores, out);
        return attention_group_f16x8(q, k, v, n, hd, group, scale, scores, out);
    }
#endif
    float rounded[type == QB_Q8_0 && hd % 32 == 0 ? group * hd : 1];
    if (type == QB_Q8_0 && hd % 32 == 0) {
        round_queries_q8_0(q, rounded, group * hd);
        q = rounded;
    }
#if defined(__AVX512F__)
    // Head dimension 64 with four heads per KV head (Llama 3.2 1B), and 64 alone, compiled on
    // their own: the loops unroll and the accumulators stay in registers.
    if (hd == 64 && group == 4) return attention_group16(type, q, k, v, n, 64, 4, scale, scores, out);
    if (hd <= 512 && hd % 32 == 0) {
        // Groups of more than ATT_GROUP16 heads in parts, one after another in the same
        // scores: each head's sums are its own, so a part's heads get the same bits as in one pass.
        for (int64_t g = 0; g < group; g += ATT_GROUP16) {
            int64_t m = group - g < ATT_GROUP16 ? group - g : ATT_GROUP16;
            if (hd == 64) attention_group16(type, q + g * hd, k, v, n, 64, m, scale, scores, out + g * hd);
            else attention_group16(type, q + g * hd, k, v, n, hd, m, scale, scores, out + g * hd);
        }
        return;
    }
#endif
    int64_t row = type == QB_F16 ? hd * 2 : hd / 32 * 34;
    float w[ATT_TILE * 512];
    if (hd > 512 || hd % 32 != 0) return;
    // Scores: each tile of keys widened once, dotted with every query of the group.
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE) {
        int64_t t = n - j0 < ATT_TILE ? n - j0 : ATT_TILE;
#if defined(__AVX2__)
        prefetch_tile((const uint8_t *)k, j0, ATT_TILE, n, row);
#endif
        widen_rows(type, (const uint8_t *)k + j0 * row, w, t, hd);
        for (int64_t g = 0; g < group; g++) {
#if defined(__AVX2__)
            if (t == ATT_TILE) {
                score_tile8(w, q + g * hd, hd, scale, scores + g * n + j0);
                continue;
            }
#endif
            for (int64_t p = 0; p < t; p++) scores[g * n + j0 + p] = dot_f32(w + p * hd, q + g * hd, hd) * scale;
        }
    }
    for (int64_t g = 0; g < group; g++) qb_softmax(scores + g * n, n);
    for (int64_t d = 0; d < group * hd; d++) out[d] = 0;
    // Values: each tile widened once; each head's output accumulates 64 columns at a time
    // in registers across the tile.
    for (int64_t j0 = 0; j0 < n; j0 += ATT_TILE) {
        int64_t t = n - j0 < ATT_TILE ? n - j0 : ATT_TILE;
#if defined(__AVX2__)
        prefetch_tile((const uint8_t *)v, j0, ATT_TILE, n, row);
#endif
        widen_rows(type, (const uint8_t *)v + j0 * row, w, t, hd);
        for (int64_t g = 0; g < group; g++) {
#if defined(__AVX2__)
            accumulate_values8(scores + g * n + j0, w, 0, t, out + g * hd, hd);
#else
            for (int64_t p = 0; p < t; p++) axpy_f32(scores[g * n + j0 + p], w + p * hd, out + g * hd, hd);
#endif
        }
    }
}

void qb_attention_head_q8_0(const float *q, const void *k, const void *v, int64_t first, int64_t n,
                            int64_t hd, float scale, float *scores, float *out) {
    int64_t row = hd / 32 * 34;
    k = (const uint8_t *)k + first * row;
    v = (const uint8_t *)v + first * row;
    n -= first;
    float rounded[hd > 0 ? hd : 1];
    round_queries_q8_0(q, rounded, hd);
    q = rounded;
    for (int64_t j = 0; j < n; j++) scores[j] = dot_q8_0_f32((const uint8_t *)k + j * row, q, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) axpy_q8_0(scores[j], (const uint8_t *)v + j * row, out, hd);
}


#if defined(__AVX2__)
// qb_attention_rows' shared steps. Position i of a chunk attends to cached rows
// [first, end) with end = end0 + i; its keys within a tile of `t` rows starting at row
// `at` are [p0, p1) of the tile (0 when it has none there).
static inline int position_in_tile(int64_t end, int64_t window, int64_t at, int64_t t, int64_t *p0, int64_t *p1) {
    int64_t first = window_first(end, window);
    *p0 = first - at < 0 ? 0 : first - at;
    *p1 = end - at > t ? t : end - at;
    return *p0 < *p1;
}

// Between the score and value passes: the softmax of each of the chunk's npos x group score
// rows (`span` floats each, from cached row `lo`) over its own position's rows, and the
// outputs the value pass accumulates into cleared.
static void attention_rows_normalize(float *scores, int64_t npos, int64_t group, int64_t end0, int64_t window,
                                     int64_t lo, int64_t span, int64_t hd, float *out, int64_t ostride) {
    for (int64_t m = 0; m < npos * group; m++) {
        int64_t end = end0 + m / group, first = window_first(end, window);
        qb_softmax(scores + m * span + (first - lo), end - first);
    }
    for (int64_t i = 0; i < npos; i++) memset(out + i * ostride, 0, (size_t)(group * hd) * sizeof(float));
}
#endif

#if defined(__AVX512F__)
// qb_attention_rows on f16 caches: the chunk's keys and values [lo, hi) in 16-row tiles,
// each widened once for all npos x group queries (at most ATT_GROUP16 heads; larger groups
// come in parts). Per query, the same arithmetic as attention_group16: a score is
// score_quad16's sum, or for heads wider than ATT_QUAD_HD score_tile16's (either the same
// wherever the tile starts), the softmax runs over the position's own range, and the values
// are summed position by position in increasing order from its first (accumulate_values16,
// as the group kernel's wider groups). The scores take a position's heads four at a time,
// their queries packed once for every tile (positions in blocks of as many as `qp` holds),
// wider heads the chunk's queries two at a time (score_pair8); the values a position's
// heads two at a time (accumulate_values_pair), or for Llama 3.2 1B's shape all four in
// registers in one pass over its rows (value_row16, as attention_group16).
static inline __attribute__((always_inline)) void attention_rows16(const float *q, int64_t qstride, int64_t npos,
                                                                   const uint16_t *k, const uint16_t *v, int64_t end0,
                                                                   int64_t window, int64_t hd, int64_t group, float scale,
                                                                   float *scores, float *out, int64_t ostride) {
    int64_t lo = window_first(end0, window), span = end0 + npos - 1 - lo;
    const __m512 vscale = _mm512_set1_ps(scale);
    float w[ATT_TILE16 * 512], qp[ATT_GROUP16 * ATT_QUAD_HD];
    int64_t quad = hd <= ATT_QUAD_HD, packed = (group + 3) / 4 * 4 * hd;
    int64_t block = quad ? ATT_GROUP16 * ATT_QUAD_HD / packed : npos;
    for (int64_t i0 = 0; i0 < npos; i0 += block) {
        int64_t i1 = npos - i0 < block ? npos : i0 + block;
        for (int64_t i = i0; quad && i < i1; i++)
            for (int64_t g = 0; g < group; g += 4)
                pack_queries4(q + i * qstride + g * hd, hd, group - g < 4 ? group - g : 4, qp + (i - i0) * packed + g * hd);
        for (int64_t j0 = 0; j0 < span; j0 += ATT_TILE16) {
            int64_t t = span - j0 < ATT_TILE16 ? span - j0 : ATT_TILE16;
            widen_rows16(QB_F16, (const uint8_t *)(k + (lo + j0) * hd), w, t, hd);
            if (t < ATT_TILE16) memset(w + t * hd, 0, (size_t)((ATT_TILE16 - t) * hd) * sizeof(float));
            const __mmask16 keep = t == ATT_TILE16 ? (__mmask16)0xFFFF : (__mmask16)((1u << t) - 1);
            for (int64_t i = i0; quad && i < i1; i++)
                for (int64_t g = 0; g < group; g += 4)
                    score_quad16(w, qp + (i - i0) * packed + g * hd, hd, vscale, scores + (i * group + g) * span + j0,
                                 span, group - g < 4 ? group - g : 4, keep, NULL);
            // Wider heads (one block of all npos positions): the chunk's queries two at a time.
            int64_t rows = npos * group, m = 0;
            for (; !quad && m + 1 < rows; m += 2) {
                const float *qa = q + m / group * qstride + m % group * hd;
                const float *qb = q + (m + 1) / group * qstride + (m + 1) % group * hd;
                float *da = scores + m * span + j0, *db = da + span;
                score_pair8(w, hd, qa, qb, vscale, da, db, (__mmask8)keep);
                if (t > 8) score_pair8(w + 8 * hd, hd, qa, qb, vscale, da + 8, db + 8, (__mmask8)(keep >> 8));
            }
            if (!quad && m < rows)
                score_tile16(w, q + m / group * qstride + m % group * hd, hd, scale, scores + m * span + j0, keep);
        }
    }
    attention_rows_normalize(scores, npos, group, end0, window, lo, span, hd, out, ostride);
    if (hd == 64 && group == 4) {
        // Llama 3.2 1B's shape, compiled on its own (qb_attention_rows): a position's sixteen
        // output vectors stay in registers for one pass over its range, each value row
        // widened in registers for its four heads, as attention_group16 sums them. (The same
        // loop with the shape a variable ran twice the paired tiles' time at 128 x 2.)
        const int64_t nc = 4, units = 16;
        const float *prob[16];
        int64_t col[16];
        for (int64_t i = 0; i < npos; i++) {
            int64_t end = end0 + i, first = window_first(end, window);
            __m512 acc[16];
            for (int64_t u = 0; u < units; u++) {
                acc[u] = _mm512_setzero_ps();
                prob[u] = scores + (i * group + u / nc) * span;
                col[u] = 16 * (u % nc);
            }
            for (int64_t p = first; p < end; p++) value_row16(v + p * hd, nc, prob, p - lo, col, units, acc);
            for (int64_t u = 0; u < units; u++) _mm512_storeu_ps(out + i * ostride + 16 * u, acc[u]);
        }
        return;
    }
    for (int64_t j0 = 0; j0 < span; j0 += ATT_TILE16) {
        int64_t t = span - j0 < ATT_TILE16 ? span - j0 : ATT_TILE16;
        widen_rows16(QB_F16, (const uint8_t *)(v + (lo + j0) * hd), w, t, hd);
        for (int64_t i = 0; i < npos; i++) {
            int64_t p0, p1;
            if (!position_in_tile(end0 + i, window, lo + j0, t, &p0, &p1)) continue;
            accumulate_values_heads(scores + i * group * span + j0, span, w, p0, p1, out + i * ostride, hd, group);
        }
    }
}
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
// qb_attention_rows on f16 caches with AVX2: attention_rows16's plan on the AVX2 group
// kernel's tiles of 8 rows (score_tile8, accumulate_values8).
static void attention_rows8(const float *q, int64_t qstride, int64_t npos, const uint16_t *k, const uint16_t *v,
                            int64_t end0, int64_t window, int64_t hd, int64_t group, float scale, float *scores,
                            float *out, int64_t ostride) {
    int64_t lo = window_first(end0, window), span = end0 + npos - 1 - lo;
    int64_t rows = npos * group;
    float w[ATT_TILE * 512];
    for (int64_t j0 = 0; j0 < span; j0 += ATT_TILE) {
        int64_t t = span - j0 < ATT_TILE ? span - j0 : ATT_TILE;
        widen_rows(QB_F16, k + (lo + j0) * hd, w, t, hd);
        if (t < ATT_TILE) memset(w + t * hd, 0, (size_t)((ATT_TILE - t) * hd) * sizeof(float));
        score_rows8(w, t, q, qstride, group, hd, scale, rows, scores, span, j0);
    }
    attention_rows_normalize(scores, npos, group, end0, window, lo, span, hd, out, ostride);
    for (int64_t j0 = 0; j0 < span; j0 += ATT_TILE) {
        int64_t t = span - j0 < ATT_TILE ? span - j0 : ATT_TILE;
        widen_rows(QB_F16, v + (lo + j0) * hd, w, t, hd);
        // The chunk's (position, head) rows three at a time while they share their rows of
        // the tile (then two, then one).
        for (int64_t m = 0; m < rows;) {
            int64_t p0, p1;
            if (!position_in_tile(end0 + m / group, window, lo + j0, t, &p0, &p1)) {
                m += group - m % group;  // the position's next heads see none of it either
                continue;
            }
            const float *pg[3];
            float *og[3];
            int n = 0;
            for (; n < 3 && m + n < rows; n++) {
                int64_t i = (m + n) / group, a0, a1;
                if (n > 0 && i != m / group && (!position_in_tile(end0 + i, window, lo + j0, t, &a0, &a1) || a0 != p0 || a1 != p1))
                    break;
                pg[n] = scores + (m + n) * span + j0;
                og[n] = out + i * ostride + (m + n) % group * hd;
            }
            accumulate_values8_some(pg, w, p0, p1, og, hd, n);
            m += n;
        }
    }
}
#endif

void qb_attention_rows(int32_t type, const float *q, int64_t qstride, int64_t npos, const void *k, const void *v,
                       int64_t end0, int64_t window, int64_t hd, int64_t group, float scale, float *scores,
                       float *out, int64_t ostride) {
    if (npos <= 0) return;
#if defined(__AVX512F__)
    // Llama 3.2 1B's shape compiled on its own: constant loops, its four heads' 64 columns in
    // registers through the values.
    if (type == QB_F16 && hd == 64 && group == 4 && end0 > 0) {
        attention_rows16(q, qstride, npos, (const uint16_t *)k, (const uint16_t *)v, end0, window, 64, 4, scale, scores,
                         out, ostride);
        return;
    }
    if (type == QB_F16 && hd <= 512 && hd % 32 == 0 && end0 > 0) {
        for (int64_t g = 0; g < group; g += ATT_GROUP16)
            attention_rows16(q + g * hd, qstride, npos, (const uint16_t *)k, (const uint16_t *)v, end0, window, hd,
                             group - g < ATT_GROUP16 ? group - g : ATT_GROUP16, scale, scores, out + g * hd, ostride);
        return;
    }
#elif defined(__AVX2__)
    if (type == QB_F16 && hd <= 512 && hd % 32 == 0 && end0 > 0) {
        attention_rows8(q, qstride, npos, (const uint16_t *)k, (const uint16_t *)v, end0, window, hd, group, scale,
                        scores, out, ostride);
        return;
    }
#endif
    for (int64_t i = 0; i < npos; i++) {
        int64_t end = end0 + i;
        qb_attention_group(type, q + i * qstride, k, v, window_first(end, window), end, hd, group, scale, scores, out + i * ostride);
    }
}
