// Element-wise and per-row steps of a transformer block: RMSNorm, softmax, SwiGLU, GeGLU.
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
