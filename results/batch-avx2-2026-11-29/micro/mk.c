// Decode of Q4_K in the sixteen-row layout or of Q6_K rows (argument 6: 12 or 14), one
// thread: tnew (the tree after) vs tvar (before), one row (matvec_q4_k_x16, matvec_kquant) or
// n rows (the _rows kernels); alternating, medians; outputs compared bitwise.
#include "qb_activation.h"
#include "qb_formats.h"
#include "micro.h"
#define SET(p) void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t); \
 void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_q4_k_x16_rows(const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_kquant_rows(int32_t, const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
SET(tnew) SET(tvar)
struct ctx { int type, rows, cols, n; const qb_q8k *xs[16]; float *ys[2][16]; };
static void side(int s, const uint8_t *m, void *p) {
    struct ctx *c = p;
    if (c->type == QB_Q6_K) {
        if (c->n == 1) (s ? qb_tnew_matvec_kquant : qb_tvar_matvec_kquant)(c->type, m, c->xs[0], c->ys[s][0], 0, c->rows, c->cols);
        else (s ? qb_tnew_matvec_kquant_rows : qb_tvar_matvec_kquant_rows)(c->type, m, c->xs, c->ys[s], c->n, 0, c->rows, c->cols);
    } else if (c->n == 1) (s ? qb_tnew_matvec_q4_k_x16 : qb_tvar_matvec_q4_k_x16)(m, c->xs[0], c->ys[s][0], 0, c->rows / 16, c->cols);
    else (s ? qb_tnew_matvec_q4_k_x16_rows : qb_tvar_matvec_q4_k_x16_rows)(m, c->xs, c->ys[s], c->n, 0, c->rows / 16, c->cols);
}
int main(int argc, char **argv) {
    struct ctx c = {.rows = atoi(argv[1]), .cols = atoi(argv[2]), .n = atoi(argv[3]), .type = atoi(argv[6])};
    int copies = atoi(argv[4]), reps = atoi(argv[5]);
    const int q6 = c.type == QB_Q6_K, bb = q6 ? 210 : 144;
    size_t b = (size_t)c.rows * (c.cols / 256) * bb, xb = q6 ? b : (size_t)qb_tnew_repack_bytes(QB_Q4_K, c.rows, c.cols);
    uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
    for (size_t k = 0; k < b / bb; k++) { _Float16 d = (rand() % 100) * 0.0001f; if (q6) memcpy(w + k * bb + 208, &d, 2); else { memcpy(w + k * bb, &d, 2); memcpy(w + k * bb + 2, &d, 2); } }
    uint8_t **m = malloc(sizeof(void *) * copies);
    for (int i = 0; i < copies; i++) { m[i] = huge(xb); if (q6) memcpy(m[i], w, b); else qb_tnew_repack(QB_Q4_K, w, m[i], 0, c.rows / 16, c.cols); }
    float *x = random_rows(c.n, c.cols);
    for (int r = 0; r < c.n; r++) {
        qb_q8k *a = malloc(c.cols / 256 * sizeof(qb_q8k)); qb_tnew_quantize_q8k(x + (size_t)r * c.cols, a, c.cols); c.xs[r] = a;
        for (int k = 0; k < 2; k++) c.ys[k][r] = malloc(c.rows * 4);
    }
    double med[2];
    alternate(reps, copies, m, side, &c, med);
    report(q6 ? "Q6_K rows" : "Q4_K x16", c.rows, c.cols, c.n, copies, c.ys[0], c.ys[1], xb / 1e9, med);
}
