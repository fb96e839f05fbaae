// Element-wise and per-row steps of a transformer block: RMSNorm, softmax, SwiGLU, GeGLU;
// the greedy pick over a row of logits.
#include "qb_ops.h"
#include "qb_scalar.h"
#include <math.h>

void qb_rmsnorm(const float *x, const float *weight, float *out, int64_t n, float eps) {
    float ss = 0;
    {
        QB_REASSOC
        QB_UNROLL
        for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    }
    float inv = 1.0f / sqrtf(ss / (float)n + eps);
    for (int64_t i = 0; i < n; i++) out[i] = weight[i] * (x[i] * inv);
}

void qb_softmax(float *x, int64_t n) {
    if (n <= 0) return;
    float m = x[0];
    int64_t i = 1;
    // Running maxima in four chains of vectors: one chain waits on the max's latency every
    // vector: 3-5% of a Llama 3.2 1B prefill chunk's attention (results/attention-pairs-2026-12-01/).
    // The maximum of the same values in any order; a NaN anywhere makes every output NaN
    // through exp_sum whichever maximum is found.
#if defined(__AVX512F__)
    if (n >= 16) {
        __m512 a = _mm512_loadu_ps(x), b = a, c = a, d = a;
        for (i = 16; i + 64 <= n; i += 64) {
            a = _mm512_max_ps(_mm512_loadu_ps(x + i), a);
            b = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), b);
            c = _mm512_max_ps(_mm512_loadu_ps(x + i + 32), c);
            d = _mm512_max_ps(_mm512_loadu_ps(x + i + 48), d);
        }
        for (; i + 16 <= n; i += 16) a = _mm512_max_ps(_mm512_loadu_ps(x + i), a);
        float r = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a, b), _mm512_max_ps(c, d)));
        m = r > m ? r : m;
    }
#elif defined(__AVX2__)
    if (n >= 8) {
        __m256 a = _mm256_loadu_ps(x), b = a, c = a, d = a;
        for (i = 8; i + 32 <= n; i += 32) {
            a = _mm256_max_ps(_mm256_loadu_ps(x + i), a);
            b = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), b);
            c = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), c);
            d = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), d);
        }
        for (; i + 8 <= n; i += 8) a = _mm256_max_ps(_mm256_loadu_ps(x + i), a);
        float lanes[8];
        _mm256_storeu_ps(lanes, _mm256_max_ps(_mm256_max_ps(a, b), _mm256_max_ps(c, d)));
        for (int l = 0; l < 8; l++) m = lanes[l] > m ? lanes[l] : m;
    }
#endif
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    float s = exp_sum(x, n, m);
    float inv = 1.0f / s;
    for (i = 0; i < n; i++) x[i] *= inv;
}

// Lane by lane, each lane keeping the first index of its largest value (a strict `>` from
// -inf, which a NaN never passes); the lanes are then merged into x[0] keeping the larger
// value, or on a tie the smaller index. The result is the scalar loop's: the first index
// of the largest non-NaN value; 0 when x[0] is NaN (nothing compares larger than or equal
// to it) or when x[0] is -inf and nothing is larger.
// A plain loop over a vocabulary waits on its own comparison every element: bench's greedy
// pick over Gemma 3's 262,144 logits took ~0.25 ms a token that way, with the other
// thread idle.
static void argmax_merge(float v, int64_t k, float *bv, int64_t *best) {
    if (v > *bv || (v == *bv && k < *best)) {
        *bv = v;
        *best = k;
    }
}

int64_t qb_argmax_f32(const float *x, int64_t n) {
    if (n <= 0) return 0;
    float bv = x[0];
    int64_t best = 0, i = 0;
#if defined(QB_AVX512)
    // Lane indices are 32-bit: longer rows take the tail loop past 2^31 - 64.
    const int64_t vec_end = (n < INT32_MAX - 64 ? n : INT32_MAX - 64) / 32 * 32;
    if (vec_end > 0) {
        __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
        __m512i k0 = _mm512_setzero_si512(), k1 = k0;
        __m512i at = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m512i sixteen = _mm512_set1_epi32(16), step = _mm512_set1_epi32(32);
        for (; i < vec_end; i += 32) {
            __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
            __mmask16 g0 = _mm512_cmp_ps_mask(v0, m0, _CMP_GT_OQ), g1 = _mm512_cmp_ps_mask(v1, m1, _CMP_GT_OQ);
            m0 = _mm512_mask_mov_ps(m0, g0, v0);
            m1 = _mm512_mask_mov_ps(m1, g1, v1);
            k0 = _mm512_mask_mov_epi32(k0, g0, at);
            k1 = _mm512_mask_mov_epi32(k1, g1, _mm512_add_epi32(at, sixteen));
            at = _mm512_add_epi32(at, step);
        }
        float mv[32];
        int32_t kv[32];
        _mm512_storeu_ps(mv, m0);
        _mm512_storeu_ps(mv + 16, m1);
        _mm512_storeu_si512(kv, k0);
        _mm512_storeu_si512(kv + 16, k1);
        for (int l = 0; l < 32; l++) argmax_merge(mv[l], kv[l], &bv, &best);
    }
#elif defined(__AVX2__)
    const int64_t vec_end = (n < INT32_MAX - 32 ? n : INT32_MAX - 32) / 16 * 16;
    if (vec_end > 0) {
        __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
        __m256i k0 = _mm256_setzero_si256(), k1 = k0;
        __m256i at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i eight = _mm256_set1_epi32(8), step = _mm256_set1_epi32(16);
        for (; i < vec_end; i += 16) {
            __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
            __m256 g0 = _mm256_cmp_ps(v0, m0, _CMP_GT_OQ), g1 = _mm256_cmp_ps(v1, m1, _CMP_GT_OQ);
            m0 = _mm256_blendv_ps(m0, v0, g0);
            m1 = _mm256_blendv_ps(m1, v1, g1);
            k0 = _mm256_blendv_epi8(k0, at, _mm256_castps_si256(g0));
            k1 = _mm256_blendv_epi8(k1, _mm256_add_epi32(at, eight), _mm256_castps_si256(g1));
            at = _mm256_add_epi32(at, step);
        }
        float mv[16];
        int32_t kv[16];
        _mm256_storeu_ps(mv, m0);
        _mm256_storeu_ps(mv + 8, m1);
        _mm256_storeu_si256((__m256i *)kv, k0);
        _mm256_storeu_si256((__m256i *)(kv + 8), k1);
        for (int l = 0; l < 16; l++) argmax_merge(mv[l], kv[l], &bv, &best);
    }
#endif
    // Past the lanes every index is larger than theirs: a strict `>` keeps the first.
    for (; i < n; i++)
        if (x[i] > bv) {
            bv = x[i];
            best = i;
        }
    return best;
}

// x * 0 is 0 (or -0) for every finite x and NaN for an infinity or a NaN, so one sum says
// whether all are finite; reassociated, it runs in vector lanes instead of waiting on one
// accumulator every element (a checked row of 262,144 logits took ~0.4 ms that way).
int32_t qb_all_finite_f32(const float *x, int64_t n) {
    float acc = 0;
    {
        QB_REASSOC
        QB_UNROLL
        for (int64_t i = 0; i < n; i++) acc += x[i] * 0.0f;
    }
    return acc == 0;
}

void qb_swiglu(float *gate, const float *up, int64_t n) {
    int64_t i = 0;
#if defined(__AVX2__)
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(gate + i);
        __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
        __m256 silu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
#endif
    for (; i < n; i++) {
        float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

// gelu_tanh(g) = 0.5 g (1 + tanh(y)), y = sqrt(2/pi) (g + 0.044715 g^3), rewritten with
// 1 + tanh(y) = 2 / (1 + e^(-2y)) as g / (1 + e^(-2y)): SwiGLU's form with another argument,
// so it takes the same vector exponential (no tanh needed), and large |g| saturates cleanly
// (e^(-2y) -> inf gives -0, -> 0 gives g).
#define GELU_2_SQRT_2_OVER_PI 1.5957691216057308f
void qb_geglu(float *gate, const float *up, int64_t n) {
    int64_t i = 0;
#if defined(__AVX2__)
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(gate + i);
        __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(g, g), g), _mm256_set1_ps(0.044715f), g);
        __m256 e = exp8(_mm256_mul_ps(inner, _mm256_set1_ps(-GELU_2_SQRT_2_OVER_PI)));
        __m256 gelu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        _mm256_storeu_ps(gate + i, _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i)));
    }
#endif
    for (; i < n; i++) {
        float g = gate[i];
        float inner = g + 0.044715f * g * g * g;
        gate[i] = g / (1.0f + expf(-GELU_2_SQRT_2_OVER_PI * inner)) * up[i];
    }
}
