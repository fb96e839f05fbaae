// Element-wise and per-row steps of a transformer block: RMSNorm, softmax, SwiGLU.
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
#if defined(__AVX2__)
    // Eight running maxima: a serial scalar max waits on itself every element. max_ps keeps
    // its second operand when either is NaN, as the scalar comparison below does.
    if (n >= 8) {
        __m256 vmax = _mm256_loadu_ps(x);
        for (i = 8; i + 8 <= n; i += 8) vmax = _mm256_max_ps(_mm256_loadu_ps(x + i), vmax);
        float lanes[8];
        _mm256_storeu_ps(lanes, vmax);
        for (int l = 0; l < 8; l++) m = lanes[l] > m ? lanes[l] : m;
    }
#endif
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    float s = exp_sum(x, n, m);
    float inv = 1.0f / s;
    for (i = 0; i < n; i++) x[i] *= inv;
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
