// Q4_K prefill products on the avx2 set two ways, alone, one thread: the engine's (tiles of
// 32-value blocks with f32 D and M, q8a activations with a scale per 32 values) against a
// trial kernel on Q8_K activations (one scale per 256 values, as decode and llama.cpp use
// for K-quants), whose tiles keep the sub-block scales and minimums as integers, so a
// super-block's eight sub-block sums are scaled and added in int32 (vpmaddwd) and rounded
// once, and the minimums meet the activations' integer sums. Usage: k4 K M T [REPS]: K
// columns, M activation rows, T tiles of 16 rows. Prints the seed, each kernel's best thread
// CPU time over REPS alternated passes (default 300), GOP/s, the relative L2 error of each
// against the f64 product of the same weights and activations, and whether the trial kernel
// equals its scalar definition bit for bit.
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include "qb_blocks.h"
#include "qb_gemm.h"
#include "qb_scalar.h"
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// The trial tile, per super-block of 256 columns and 16 rows: d[16] and dmin[16] as f32; per
// sub-block j the rows' scales as int16 pairs (sc, sc) per dword (64 bytes each); per pair
// of sub-blocks k the rows' minimums (m_2k, m_2k+1) per dword (64 bytes each); then the
// values, per sub-block the engine's 8 steps of 64 bytes (values 4s..4s+3 of rows 0..15).
#define KT_SC 128
#define KT_MN (KT_SC + 8 * 64)
#define KT_Q (KT_MN + 4 * 64)
#define KT_BYTES (KT_Q + 8 * 512)

static void pack_kt(const block_q4_K *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    for (int64_t i = 0; i < nb; i++) {
        uint8_t *t = tile + i * KT_BYTES;
        for (int r = 0; r < 16; r++) {
            const block_q4_K *x = w + (r0 + r) * nb + i;
            float d = h2f(x->d), dm = h2f(x->dmin);
            memcpy(t + 4 * r, &d, 4);
            memcpy(t + 64 + 4 * r, &dm, 4);
            for (int j = 0; j < 8; j++) {
                uint8_t s, m;
                get_scale_min_k4(j, x->scales, &s, &m);
                int16_t p[2] = {s, s};
                memcpy(t + KT_SC + 64 * j + 4 * r, p, 4);
                memcpy(t + KT_MN + 64 * (j / 2) + 4 * r + 2 * (j & 1), &(int16_t){m}, 2);
                const uint8_t *q = x->qs + 32 * (j / 2);
                for (int l = 0; l < 32; l++)
                    t[KT_Q + 512 * j + 64 * (l / 4) + 4 * r + l % 4] = (j & 1) ? q[l] >> 4 : q[l] & 0xF;
            }
        }
    }
}

// The definition: per row and super-block, isum = sum over sub-blocks of sc x (values . qs),
// imin = sum of m x (the sub-block's activation sum), acc = fmaf(isum, d x xd, acc), then
// acc = fmaf(-imin, dmin x xd, acc).
static void kt_scalar(const uint8_t *tile, const qb_q8k *x, int64_t nb, float *y) {
    for (int r = 0; r < 16; r++) {
        float acc = 0;
        for (int64_t i = 0; i < nb; i++) {
            const uint8_t *t = tile + i * KT_BYTES;
            int32_t isum = 0, imin = 0;
            for (int j = 0; j < 8; j++) {
                int16_t sc, m;
                memcpy(&sc, t + KT_SC + 64 * j + 4 * r, 2);
                memcpy(&m, t + KT_MN + 64 * (j / 2) + 4 * r + 2 * (j & 1), 2);
                int32_t s = 0;
                for (int l = 0; l < 32; l++) s += t[KT_Q + 512 * j + 64 * (l / 4) + 4 * r + l % 4] * x[i].qs[32 * j + l];
                isum += sc * s;
                imin += m * (x[i].s16[2 * j] + x[i].s16[2 * j + 1]);
            }
            float d, dm;
            memcpy(&d, t + 4 * r, 4);
            memcpy(&dm, t + 64 + 4 * r, 4);
            acc = fmaf((float)isum, d * x[i].d, acc);
            acc = fmaf(-(float)imin, dm * x[i].d, acc);
        }
        y[r] = acc;
    }
}

// N activation rows (x: N rows of nb blocks) against one tile: per sub-block, 8 steps of
// vpmaddubsw into 16-bit lanes (15 x 128 x 2 x 8 fits), then one vpmaddwd by the rows' scales
// into the int32 sums; per super-block the minimums' vpmaddwd and one rounding.
static inline __attribute__((always_inline)) void kt_block(const uint8_t *tile, const qb_q8k *x, int64_t nb, int64_t i,
                                                           float *sums, const int N) {
    {
        const uint8_t *t = tile + i * KT_BYTES;
        __m256i isum[4][2];
        for (int c = 0; c < N; c++)
            for (int h = 0; h < 2; h++) isum[c][h] = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const uint8_t *steps = t + KT_Q + 512 * j;
            __m256i lo[4][2];
            for (int s = 0; s < 8; s++) {
                __m256i wv[2];
                for (int h = 0; h < 2; h++) wv[h] = _mm256_loadu_si256((const __m256i *)(steps + 64 * s + 32 * h));
                for (int c = 0; c < N; c++) {
                    int32_t v;
                    memcpy(&v, x[c * nb + i].qs + 32 * j + 4 * s, 4);
                    __m256i xv = _mm256_set1_epi32(v);
                    for (int h = 0; h < 2; h++) {
                        __m256i p = _mm256_maddubs_epi16(wv[h], xv);
                        lo[c][h] = s == 0 ? p : _mm256_add_epi16(lo[c][h], p);
                    }
                }
            }
            for (int h = 0; h < 2; h++) {
                __m256i sc = _mm256_loadu_si256((const __m256i *)(t + KT_SC + 64 * j + 32 * h));
                for (int c = 0; c < N; c++) isum[c][h] = _mm256_add_epi32(isum[c][h], _mm256_madd_epi16(lo[c][h], sc));
            }
        }
        for (int c = 0; c < N; c++) {
            const qb_q8k *a = x + c * nb + i;
            __m256 xd = _mm256_set1_ps(a->d);
            __m256i imin[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
            for (int k = 0; k < 4; k++) {
                int16_t b[2] = {(int16_t)(a->s16[4 * k] + a->s16[4 * k + 1]), (int16_t)(a->s16[4 * k + 2] + a->s16[4 * k + 3])};
                int32_t v;
                memcpy(&v, b, 4);
                __m256i bv = _mm256_set1_epi32(v);
                for (int h = 0; h < 2; h++)
                    imin[h] = _mm256_add_epi32(imin[h], _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(t + KT_MN + 64 * k + 32 * h)), bv));
            }
            for (int h = 0; h < 2; h++) {
                __m256 d = _mm256_loadu_ps((const float *)(t + 32 * h)), dm = _mm256_loadu_ps((const float *)(t + 64 + 32 * h));
                float *sum = sums + 16 * c + 8 * h;
                __m256 a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c][h]), _mm256_mul_ps(d, xd), _mm256_loadu_ps(sum));
                _mm256_storeu_ps(sum, _mm256_fnmadd_ps(_mm256_cvtepi32_ps(imin[h]), _mm256_mul_ps(dm, xd), a));
            }
        }
    }
}

// As the engine's gemm_avx2: up to 16 activation rows at a time against a tile, super-block
// by super-block, each read from L1 by every group of N rows; sums in memory.
static inline __attribute__((always_inline)) void kt_rows(const uint8_t *tile, const qb_q8k *x, int64_t count, int64_t nb,
                                                          float *y, int64_t ystride, const int N) {
    float sums[16 * 16];
    for (int64_t c0 = 0; c0 < count; c0 += 16) {
        int64_t n = count - c0 < 16 ? count - c0 : 16;
        memset(sums, 0, sizeof(float) * 16 * (size_t)n);
        for (int64_t i = 0; i < nb; i++) {
            int64_t c = 0;
            for (; c + N <= n; c += N) kt_block(tile, x + (c0 + c) * nb, nb, i, sums + 16 * c, N);
            for (; c < n; c++) kt_block(tile, x + (c0 + c) * nb, nb, i, sums + 16 * c, 1);
        }
        for (int64_t c = 0; c < n; c++) memcpy(y + (c0 + c) * ystride, sums + 16 * c, sizeof(float) * 16);
    }
}

static __attribute__((noinline)) void kt4(const uint8_t *t, const qb_q8k *x, int64_t n, int64_t nb, float *y, int64_t ys) { kt_rows(t, x, n, nb, y, ys, 4); }
static __attribute__((noinline)) void kt2(const uint8_t *t, const qb_q8k *x, int64_t n, int64_t nb, float *y, int64_t ys) { kt_rows(t, x, n, nb, y, ys, 2); }


static double rel_l2(const float *a, const double *b, size_t n) {
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) e += (a[i] - b[i]) * (a[i] - b[i]), s += b[i] * b[i];
    return sqrt(e / s);
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int K = atoi(argv[1]), M = atoi(argv[2]), T = atoi(argv[3]), reps = argc > 4 ? atoi(argv[4]) : 300;
    int n4 = getenv("KT_ROWS") ? atoi(getenv("KT_ROWS")) : 4;
    unsigned seed = getenv("SEED") ? (unsigned)atoi(getenv("SEED")) : 20261130;
    srand(seed);
    int64_t nbk = K / 256, nba = K / 32, rows = 16 * (int64_t)T;
    block_q4_K *w = malloc(sizeof(block_q4_K) * rows * nbk);
    for (int64_t i = 0; i < rows * nbk; i++) {
        w[i].d = f2h(0.001f * (1 + rand() % 32));
        w[i].dmin = f2h(0.001f * (rand() % 32));
        for (int k = 0; k < 12; k++) w[i].scales[k] = (uint8_t)rand();
        for (int k = 0; k < 128; k++) w[i].qs[k] = (uint8_t)rand();
    }
    float *x = malloc(sizeof(float) * M * K);
    for (int64_t i = 0; i < (int64_t)M * K; i++) x[i] = (rand() / (float)RAND_MAX - 0.5f) * (1 + (i % 97 == 0) * 8);
    // The exact product of these weights and activations, in f64.
    double *exact = calloc((size_t)M * rows, sizeof(double));
    float *deq = malloc(sizeof(float) * K);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < nbk; i++) {
            const block_q4_K *b = w + r * nbk + i;
            for (int j = 0; j < 8; j++) {
                uint8_t s, m;
                get_scale_min_k4(j, b->scales, &s, &m);
                for (int l = 0; l < 32; l++) {
                    uint8_t q = (j & 1) ? b->qs[32 * (j / 2) + l] >> 4 : b->qs[32 * (j / 2) + l] & 0xF;
                    deq[256 * i + 32 * j + l] = h2f(b->d) * s * q - h2f(b->dmin) * m;
                }
            }
        }
        for (int c = 0; c < M; c++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double)deq[k] * x[(int64_t)c * K + k];
            exact[(int64_t)c * rows + r] = s;
        }
    }
    qb_q8a *xa = aligned_alloc(64, sizeof(qb_q8a) * M * nba);
    qb_q8k *xk = aligned_alloc(64, sizeof(qb_q8k) * M * nbk);
    for (int c = 0; c < M; c++) {
        qb_quantize_q8a(x + (int64_t)c * K, xa + (int64_t)c * nba, K);
        qb_quantize_q8k(x + (int64_t)c * K, xk + (int64_t)c * nbk, K);
    }
    size_t tb = (size_t)nba * QB_TILE_BLOCK_BYTES, kb = (size_t)nbk * KT_BYTES;
    uint8_t *tiles = aligned_alloc(64, tb * T), *kts = aligned_alloc(64, kb * T);
    for (int t = 0; t < T; t++) {
        qb_pack_tile_ggml(QB_Q4_K, 0, w, 16 * t, K, tiles + t * tb);
        pack_kt(w, 16 * t, K, kts + t * kb);
    }
    float *y0 = calloc((size_t)M * rows, 4), *y1 = calloc((size_t)M * rows, 4), *yr = calloc((size_t)M * rows, 4);
    double best0 = 1e9, best1 = 1e9;
    for (int rep = 0; rep < reps; rep++) {
        // The engine's: tasks of four tiles, 16 activation rows a call (Linear.matmulInt8).
        double t0 = now();
        for (int task = 0; task < T; task += 4) {
            int nt = T - task < 4 ? T - task : 4;
            for (int c0 = 0; c0 < M; c0 += 16) {
                int n = M - c0 < 16 ? M - c0 : 16;
                qb_gemm_tiles(tiles + task * tb, nt, 4, xa + (int64_t)c0 * nba, NULL, n, K, y0 + (int64_t)c0 * rows + 16 * task, rows);
            }
        }
        double t1 = now();
        // The trial's: the same tasks and calls.
        for (int task = 0; task < T; task += 4) {
            int nt = T - task < 4 ? T - task : 4;
            for (int c0 = 0; c0 < M; c0 += 16) {
                int n = M - c0 < 16 ? M - c0 : 16;
                for (int tt = task; tt < task + nt; tt++)
                    (n4 == 4 ? kt4 : kt2)(kts + tt * kb, xk + (int64_t)c0 * nbk, n, nbk, y1 + (int64_t)c0 * rows + 16 * tt, rows);
            }
        }
        double t2 = now();
        if (t1 - t0 < best0) best0 = t1 - t0;
        if (t2 - t1 < best1) best1 = t2 - t1;
    }
    int same = 1;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < M; c++) {
            kt_scalar(kts + t * kb, xk + (int64_t)c * nbk, nbk, yr + (int64_t)c * rows + 16 * t);
            if (memcmp(yr + (int64_t)c * rows + 16 * t, y1 + (int64_t)c * rows + 16 * t, 64)) same = 0;
        }
    double ops = 2.0 * rows * (double)M * K;
    printf("seed %u K %d M %d T %d rows-per-call %d reps %d\n", seed, K, M, T, n4, reps);
    printf("engine (q8a, f32 per 32): %8.3f ms %6.1f GOP/s  rel L2 vs f64 %.3e\n", best0 * 1e3, ops / best0 / 1e9, rel_l2(y0, exact, (size_t)M * rows));
    printf("trial  (q8k, int per 256): %8.3f ms %6.1f GOP/s  rel L2 vs f64 %.3e  scalar definition bitwise: %s\n", best1 * 1e3, ops / best1 / 1e9,
           rel_l2(y1, exact, (size_t)M * rows), same ? "yes" : "NO");
    printf("trial / engine time: %.3f\n", best1 / best0);
    return same ? 0 : 1;
}
