// Private helpers shared by the C kernels (not part of the module's public headers):
// half and bfloat16 widening, MLX scale loads, Q4_K/Q5_K 6-bit scale unpacking (plain and in
// Q4_K's 16-row decode layout), the address of a block in the four-row interleaved layout,
// nibble unpacking, int8 dot steps, the horizontal sum of eight floats, a 16x16 dword
// transpose, the f32 dot product and axpy (inlined into attention as into the dense
// kernels), and the vector exponential shared by softmax and attention.
#ifndef QB_SCALAR_H
#define QB_SCALAR_H
#include <stdatomic.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include "qb_formats.h"
#include "qb_repack.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif
// The 64-byte integer kernels (vpdpbusd, vpdpwssd, byte and word permutes).
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define QB_AVX512 1
#endif

#if defined(__AVX2__)
// Decode streams prefetch twice: into L1 a few KiB ahead (each kernel's own distance), and
// into L2 this far ahead (the Q4_0 sixteen-row tiles fetch their next tile into L2 instead).
// With the near prefetches alone one core of the Intel Xeon (Emerald Rapids) streamed the
// Q4_K sixteen-row groups and the Q6_K rows at 12.0-12.3 GB/s from memory, with the far ones
// added 14.5-14.9, plain loads 15.3 (medians, one process; results/prefetch-l2-2026-11-28/).
// Likely cause (not measured: no counters here): L1 prefetches wait in the core's few L1
// fill buffers, which caps the lines in flight; the far ones start the memory reads earlier
// and the near ones then find their lines in L2. Not measured on AMD CPUs.
enum { QB_L2_AHEAD = 12288 };

// `lines` cache lines from `p + QB_L2_AHEAD` into L2 (a prefetch never faults, so running
// past the end of the weights is harmless).
static inline __attribute__((always_inline)) void qb_prefetch_l2(const void *p, int lines) {
    for (int l = 0; l < lines; l++) _mm_prefetch((const char *)p + QB_L2_AHEAD + 64 * l, _MM_HINT_T1);
}
#endif

// qb_set_stream_prefetch's setting (qb_matvec_tiles.h): the kernels it names read it once a
// call, relaxed (a call covers at least 32 KiB of weights).
static _Atomic int32_t qb_stream_prefetch_on = 1;
static inline int qb_stream_prefetch(void) { return atomic_load_explicit(&qb_stream_prefetch_on, memory_order_relaxed); }

// QB_REASSOC opens a block whose float reductions may be reassociated (vectorized).
#define QB_REASSOC _Pragma("clang fp reassociate(on)")
#define QB_UNROLL _Pragma("clang loop vectorize(enable) interleave_count(4)")

static inline float dot_f32(const float *a, const float *b, int64_t n) {
    QB_REASSOC
    float s = 0;
    QB_UNROLL
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static inline void axpy_f32(float a, const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

typedef uint16_t qb_half;
static inline float h2f(qb_half h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static inline qb_half f2h(float x) { _Float16 f = (_Float16)x; qb_half h; memcpy(&h, &f, 2); return h; }
static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }

// Bytes of one MLX scale or bias of dtype QB_F32, QB_F16 or QB_BF16.
static inline int64_t mlx_scale_bytes(int32_t dtype) { return dtype == QB_F32 ? 4 : 2; }

// Four activation bytes as one int32, for a broadcast.
static inline int32_t act4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

// Element i of an MLX scales or biases array of dtype QB_F32, QB_F16 or QB_BF16.
static inline float load_scale(const void *p, int32_t dtype, int64_t i) {
    switch (dtype) {
    case QB_F16: return h2f(((const qb_half *)p)[i]);
    case QB_BF16: return bf2f(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

// Scale and minimum of sub-block j (0..7) from a K-quant block's 12 scale bytes (GGML's packing).
static inline void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// The inverse: eight 6-bit scales and minimums packed into a K-quant block's 12 bytes.
static inline void q4k_pack_scales(const uint8_t sc[8], const uint8_t mn[8], uint8_t q[12]) {
    memset(q, 0, 12);
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            q[j] = sc[j];
            q[j + 4] = mn[j];
        } else {
            q[j + 4] = (uint8_t)((sc[j] & 0xF) | ((mn[j] & 0xF) << 4));
            q[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
            q[j - 0] |= (uint8_t)((mn[j] >> 4) << 6);
        }
    }
}

// All eight 6-bit scales (byte j of *sc) and minimums (*mn) of a K-quant block's 12 scale
// bytes at once (get_scale_min_k4 for j = 0..7).
static inline void q4k_unpack_scales(const uint8_t *q, uint64_t *sc, uint64_t *mn) {
    uint32_t u0, u1, u2;
    memcpy(&u0, q, 4);
    memcpy(&u1, q + 4, 4);
    memcpy(&u2, q + 8, 4);
    *sc = (uint64_t)(u0 & 0x3f3f3f3fu) | (uint64_t)((u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u)) << 32;
    *mn = (uint64_t)(u1 & 0x3f3f3f3fu) | (uint64_t)(((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u)) << 32;
}

// Sub-block j's 6-bit scale and minimum of row r (0..15) in a super-block `g` of Q4_K's
// 16-row decode layout (qb_repack.h).
static inline void q4k_x16_scale_min(const uint8_t *g, int j, int r, uint8_t *sc, uint8_t *mn) {
    uint8_t lo = g[QB_Q4K_X16_LO + 16 * j + r];
    uint32_t hi;
    memcpy(&hi, g + QB_Q4K_X16_HI + 4 * r, 4);
    *sc = (uint8_t)((lo & 0xF) | ((hi >> (2 * j)) & 3) << 4);
    *mn = (uint8_t)((lo >> 4) | ((hi >> (16 + 2 * j)) & 3) << 4);
}

// The 32-value GGML block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): quant bytes per block,
// whether a block has a minimum m (w = d q + m; else the type is symmetric) and fifth bits.
static inline int64_t qb_q32_quant_bytes(int32_t type) { return type == QB_Q8_0 ? 32 : 16; }
static inline int qb_q32_has_min(int32_t type) { return type == QB_Q4_1 || type == QB_Q5_1; }
static inline int qb_q32_has_fifth(int32_t type) { return type == QB_Q5_0 || type == QB_Q5_1; }
// The offset k of the symmetric nibble types (w = d (q + k), q their unsigned 4- or 5-bit
// values); 0 for the others.
static inline int qb_q32_offset(int32_t type) { return type == QB_Q4_0 ? -8 : type == QB_Q5_0 ? -16 : 0; }
// A plain block's bytes: d, [m], [the 32 fifth bits], the quants.
static inline int64_t qb_q32_block_bytes(int32_t type) {
    return 2 + 2 * qb_q32_has_min(type) + 4 * qb_q32_has_fifth(type) + qb_q32_quant_bytes(type);
}
// Offsets inside a group-block of the four-row layout (qb_repack.h): the fifth bits of
// values 0..15 (those of 16..31 follow eight bytes on), the quants; its size.
static inline int64_t qb_x4_qh(int32_t type) { return 8 + 8 * qb_q32_has_min(type); }
static inline int64_t qb_x4_qs(int32_t type) { return qb_x4_qh(type) + 16 * qb_q32_has_fifth(type); }
static inline int64_t qb_x4_bytes(int32_t type) { return 4 * qb_q32_block_bytes(type); }

// Block b of `row` in a matrix of a 32-value type (rows of nb blocks), plain or, when
// `interleaved`, in the four-row layout of qb_repack.h: its f16 scale in `d`, its f16 minimum
// in `m` (zero without one), its fifth bits in `qh` (bit j is value j's; zero without them);
// its quants returned.
static inline const uint8_t *qb_q32_block(int32_t type, int interleaved, const void *w, int64_t row, int64_t b,
                                          int64_t nb, qb_half *d, qb_half *m, uint32_t *qh) {
    *m = 0;
    *qh = 0;
    if (!interleaved) {
        const uint8_t *blk = (const uint8_t *)w + (row * nb + b) * qb_q32_block_bytes(type);
        memcpy(d, blk, 2);
        blk += 2;
        if (qb_q32_has_min(type)) memcpy(m, blk, 2), blk += 2;
        if (qb_q32_has_fifth(type)) memcpy(qh, blk, 4), blk += 4;
        return blk;
    }
    const uint8_t *g = (const uint8_t *)w + ((row / 4) * nb + b) * qb_x4_bytes(type);
    const int64_t r = row % 4;
    memcpy(d, g + 2 * r, 2);
    if (qb_q32_has_min(type)) memcpy(m, g + QB_X4_MIN + 2 * r, 2);
    if (qb_q32_has_fifth(type)) {
        uint16_t lo, hi;
        memcpy(&lo, g + qb_x4_qh(type) + 2 * r, 2);
        memcpy(&hi, g + qb_x4_qh(type) + 8 + 2 * r, 2);
        *qh = (uint32_t)lo | (uint32_t)hi << 16;
    }
    return g + qb_x4_qs(type) + qb_q32_quant_bytes(type) * r;
}

#if defined(__AVX2__)
// 16 bytes -> 32 values: low nibbles first, then high nibbles (GGML's order).
static inline __m256i nibbles_lo_hi(const uint8_t *p) {
    __m128i t = _mm_loadu_si128((const __m128i *)p);
    __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0F));
}

// The 32 bits in bytes 4k..4k+3 of each 128-bit lane of `v` (both lanes alike) as
// q5_fifth_bits gives them. One vector load of a four-row block's fifth bits serves its four
// 32-bit words this way, where each word took a shift, a move from a general register and a
// broadcast.
// 16 in each byte of `b` whose one bit outside `others` (every bit but one, per byte) is set,
// 0 elsewhere: OR-ing `others` in leaves 0xFF only there.
static inline __m256i bit_set_16(__m256i b, __m256i others) {
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(b, others), _mm256_set1_epi8(-1)), _mm256_set1_epi8(0x10));
}

static inline __m256i q5_fifth_bits_at(__m256i v, const int k) {
    // Byte j gets byte 4k + j / 8, and is tested for bit j % 8.
    const __m256i spread = _mm256_add_epi8(_mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0),
                                           _mm256_set1_epi8((char)(4 * k)));
    return bit_set_16(_mm256_shuffle_epi8(v, spread), _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
}

// A Q5_0/Q5_1 block's 32 fifth bits (bit j is value j's, in nibbles_lo_hi's order) as bytes
// of 16 where set, to OR onto the nibbles.
static inline __m256i q5_fifth_bits(uint32_t qh) {
#if defined(QB_AVX512)
    return _mm256_maskz_mov_epi8((__mmask32)qh, _mm256_set1_epi8(0x10));
#else
    return q5_fifth_bits_at(_mm256_set1_epi32((int)qh), 0);
#endif
}

// Bit `b` (0..7) of every byte of `v` moved to bit 4 (the others cleared), to OR the fifth
// bits of Q5_K's values onto their nibbles: a 16-bit lane shift keeps each byte's bit within
// the byte for the bits read here.
static inline __m256i bit_to_16(__m256i v, int b) {
    __m256i t = b <= 4 ? _mm256_slli_epi16(v, 4 - b) : _mm256_srli_epi16(v, b - 4);
    return _mm256_and_si256(t, _mm256_set1_epi8(0x10));
}

// Signed x times signed y, summed in groups of 4 to 8 int32.
static inline __m256i dot_s8(__m256i x, __m256i y) {
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}
// Unsigned u (< 128) times signed y.
static inline __m256i dot_u8(__m256i u, __m256i y) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), _mm256_set1_epi16(1));
}

static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// f32 vectors of the set's widest width (16 lanes on AVX-512, 8 on AVX2) and the widening of
// f16/bf16 (QB_F16, QB_BF16) into them, for the dense rows and prefill tiles.
#if defined(__AVX512F__)
enum { WIDE_LANES = 16 };
typedef __m512 wide_vec;
static inline wide_vec wide_zero(void) { return _mm512_setzero_ps(); }
static inline wide_vec wide_load(const float *p) { return _mm512_loadu_ps(p); }
static inline wide_vec wide_add(wide_vec a, wide_vec b) { return _mm512_add_ps(a, b); }
static inline wide_vec wide_fma(wide_vec a, wide_vec b, wide_vec c) { return _mm512_fmadd_ps(a, b, c); }
static inline float wide_sum(wide_vec v) { return _mm512_reduce_add_ps(v); }
static inline wide_vec widen16(int32_t type, const uint16_t *p) {
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (type == QB_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
#else
enum { WIDE_LANES = 8 };
typedef __m256 wide_vec;
static inline wide_vec wide_zero(void) { return _mm256_setzero_ps(); }
static inline wide_vec wide_load(const float *p) { return _mm256_loadu_ps(p); }
static inline wide_vec wide_add(wide_vec a, wide_vec b) { return _mm256_add_ps(a, b); }
static inline wide_vec wide_fma(wide_vec a, wide_vec b, wide_vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline float wide_sum(wide_vec v) { return hsum_ps(v); }
static inline wide_vec widen16(int32_t type, const uint16_t *p) {
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    if (type == QB_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
#endif

// One vector of dense weights of `type` (QB_F32, QB_F16 or QB_BF16; a constant) from
// element i of `w`, as f32.
static inline __attribute__((always_inline)) wide_vec dense_vec(const int32_t type, const void *w, int64_t i) {
    if (type == QB_F32) return wide_load((const float *)w + i);
    return widen16(type, (const uint16_t *)w + i);
}
#endif

#if defined(__AVX2__)
// Transposes 8 vectors of 8 dwords in place: afterwards lane j of r[d] is dword d of the old
// r[j] (transpose16x16_epi32's steps at half the width).
static inline void transpose8x8_epi32(__m256i r[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
        r[4 + i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
    }
}
#endif

#if defined(QB_AVX512)
// Transposes 16 vectors of 16 dwords in place: afterwards lane j of r[d] is dword d of the
// old r[j].
static inline void transpose16x16_epi32(__m512i r[16]) {
    __m512i t[16], u[16], v[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        v[i] = _mm512_shuffle_i32x4(u[i], u[4 + i], 0x88);
        v[4 + i] = _mm512_shuffle_i32x4(u[i], u[4 + i], 0xDD);
        v[8 + i] = _mm512_shuffle_i32x4(u[8 + i], u[12 + i], 0x88);
        v[12 + i] = _mm512_shuffle_i32x4(u[8 + i], u[12 + i], 0xDD);
    }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_i32x4(v[i], v[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_i32x4(v[i], v[8 + i], 0xDD);
    }
}
#endif

// e^x for 8 (exp8) or 16 (exp16) floats, one algorithm at two widths: x = n ln2 + r with
// |r| <= ln2/2 (ln2 split in two for an exact product), e^r by its degree-6 Taylor polynomial
// (error below 2 ulp), times 2^n built in the exponent bits. Below EXP_LO the result
// flushes to 0, above EXP_HI it saturates.
#define EXP_LO (-87.33654f)
#define EXP_HI 88.72283f
#define EXP_LOG2E 1.44269504f
#define EXP_LN2_HI 0.693145751953125f
#define EXP_LN2_LO 1.428606765330187e-6f

#if defined(__AVX2__)
static inline __m256 exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(EXP_LO)), _mm256_set1_ps(EXP_HI));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(1.0f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // 2^n as two factors so n = -126 .. 128 stays representable.
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i h = _mm256_srai_epi32(ni, 1);
    __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, _mm256_set1_epi32(127)), 23));
    __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), _mm256_set1_epi32(127)), 23));
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
    return _mm256_and_ps(y, _mm256_cmp_ps(x, _mm256_set1_ps(EXP_LO), _CMP_GT_OQ));
}
#endif

#if defined(__AVX512F__)
static inline __m512 exp16(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(EXP_LO)), _mm512_set1_ps(EXP_HI));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(1.0f / 720);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    __m512i ni = _mm512_cvtps_epi32(n);
    __m512i h = _mm512_srai_epi32(ni, 1);
    __m512 f1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h, _mm512_set1_epi32(127)), 23));
    __m512 f2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(ni, h), _mm512_set1_epi32(127)), 23));
    __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, f1), f2);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LO), _CMP_GT_OQ), y);
}
#endif

// x[i] = exp(x[i] - m) in place; returns their sum.
static __attribute__((unused)) float exp_sum(float *x, int64_t n, float m) {
    float s = 0;
    int64_t i = 0;
#if defined(__AVX512F__)
    __m512 vs16 = _mm512_setzero_ps(), vm16 = _mm512_set1_ps(m);
    for (; i + 16 <= n; i += 16) {
        __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm16));
        _mm512_storeu_ps(x + i, e);
        vs16 = _mm512_add_ps(vs16, e);
    }
    s += _mm512_reduce_add_ps(vs16);
#endif
#if defined(__AVX2__)
    __m256 vs = _mm256_setzero_ps(), vm = _mm256_set1_ps(m);
    for (; i + 8 <= n; i += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(x + i, e);
        vs = _mm256_add_ps(vs, e);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, vs);
    for (int l = 0; l < 8; l++) s += lanes[l];
#endif
    for (; i < n; i++) { x[i] = expf(x[i] - m); s += x[i]; }
    return s;
}

#endif
