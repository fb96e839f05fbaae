// Decode of the super-block formats' plain rows (argument 6, the type: 12 Q4_K, 13 Q5_K,
// 14 Q6_K, 23 IQ4_XS), one thread: tnew (the tree after) vs tvar (before), one activation
// row (matvec_kquant) or n (matvec_kquant_rows); alternating, medians; outputs compared
// bitwise. Built by ../batch-avx2-2026-11-29/micro/build.sh with PROGS=mq.
#include "qb_activation.h"
#include "qb_formats.h"
#include "micro.h"
#define SET(p) void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t); \
 void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_kquant_rows(int32_t, const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
SET(tnew) SET(tvar)
struct ctx { int type, rows, cols, n; const qb_q8k *xs[16]; float *ys[2][16]; };
static void side(int s, const uint8_t *m, void *p) {
    struct ctx *c = p;
    if (c->n == 1) (s ? qb_tnew_matvec_kquant : qb_tvar_matvec_kquant)(c->type, m, c->xs[0], c->ys[s][0], 0, c->rows, c->cols);
    else (s ? qb_tnew_matvec_kquant_rows : qb_tvar_matvec_kquant_rows)(c->type, m, c->xs, c->ys[s], c->n, 0, c->rows, c->cols);
}
int main(int argc, char **argv) {
    struct ctx c = {.rows = atoi(argv[1]), .cols = atoi(argv[2]), .n = atoi(argv[3]), .type = atoi(argv[6])};
    int copies = atoi(argv[4]), reps = atoi(argv[5]);
    // Block bytes and where its f16 scales sit (the rest random bytes).
    int bb, doff, moff;
    const char *name;
    switch (c.type) {
    case QB_Q4_K: bb = 144, doff = 0, moff = 2, name = "Q4_K rows"; break;
    case QB_Q5_K: bb = 176, doff = 0, moff = 2, name = "Q5_K rows"; break;
    case QB_Q6_K: bb = 210, doff = 208, moff = -1, name = "Q6_K rows"; break;
    case QB_IQ4_XS: bb = 136, doff = 0, moff = -1, name = "IQ4_XS rows"; break;
    default: fprintf(stderr, "type %d: not a super-block format\n", c.type); return 2;
    }
    size_t b = (size_t)c.rows * (c.cols / 256) * bb;
    uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
    for (size_t k = 0; k < b / bb; k++) {
        _Float16 d = (rand() % 100) * 0.0001f;
        memcpy(w + k * bb + doff, &d, 2);
        if (moff >= 0) memcpy(w + k * bb + moff, &d, 2);
    }
    uint8_t **m = malloc(sizeof(void *) * copies);
    for (int i = 0; i < copies; i++) { m[i] = huge(b); memcpy(m[i], w, b); }
    float *x = random_rows(c.n, c.cols);
    for (int r = 0; r < c.n; r++) {
        qb_q8k *a = malloc(c.cols / 256 * sizeof(qb_q8k)); qb_tnew_quantize_q8k(x + (size_t)r * c.cols, a, c.cols); c.xs[r] = a;
        for (int k = 0; k < 2; k++) c.ys[k][r] = malloc(c.rows * 4);
    }
    double med[2];
    alternate(reps, copies, m, side, &c, med);
    report(name, c.rows, c.cols, c.n, copies, c.ys[0], c.ys[1], b / 1e9, med);
}
