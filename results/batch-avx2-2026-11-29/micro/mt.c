// Decode of the four-row interleaved layout (argument 6: ggml type, Q4_0 by default), one
// thread: tnew (the tree after) vs tvar (before), one row (matvec_repacked) or n rows
// (matvec_repacked_rows), from memory (copies rotated) or from cache (copies = 1);
// alternating, medians; outputs compared bitwise.
#include "qb_activation.h"
#include "qb_formats.h"
#include "micro.h"
#define SET(p) void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t); \
 void qb_##p##_matvec_repacked(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_repacked_rows(int32_t, const void *, const qb_q8a *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
SET(tnew) SET(tvar)
struct ctx { int type, rows, cols, n; const qb_q8a *xs[16]; float *ys[2][16]; };
static void side(int s, const uint8_t *m, void *p) {
    struct ctx *c = p;
    if (c->n == 1) (s ? qb_tnew_matvec_repacked : qb_tvar_matvec_repacked)(c->type, m, c->xs[0], c->ys[s][0], 0, c->rows / 4, c->cols);
    else (s ? qb_tnew_matvec_repacked_rows : qb_tvar_matvec_repacked_rows)(c->type, m, c->xs, c->ys[s], c->n, 0, c->rows / 4, c->cols);
}
int main(int argc, char **argv) {
    struct ctx c = {.rows = atoi(argv[1]), .cols = atoi(argv[2]), .n = atoi(argv[3]), .type = argc > 6 ? atoi(argv[6]) : QB_Q4_0};
    int copies = atoi(argv[4]), reps = atoi(argv[5]);
    int bb = c.type == QB_Q4_0 ? 18 : c.type == QB_Q4_1 ? 20 : c.type == QB_Q5_0 ? 22 : c.type == QB_Q5_1 ? 24 : 34;
    size_t b = (size_t)c.rows * (c.cols / 32) * bb, xb = qb_tnew_repack_bytes(c.type, c.rows, c.cols);
    uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
    for (size_t k = 0; k < b / bb; k++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w + k * bb, &d, 2); if (bb == 20 || bb == 24) memcpy(w + k * bb + 2, &d, 2); }
    uint8_t **m = malloc(sizeof(void *) * copies);
    for (int i = 0; i < copies; i++) { m[i] = huge(xb); qb_tnew_repack(c.type, w, m[i], 0, c.rows / 4, c.cols); }
    float *x = random_rows(c.n, c.cols);
    for (int r = 0; r < c.n; r++) {
        qb_q8a *a = malloc(c.cols / 32 * sizeof(qb_q8a)); qb_tnew_quantize_q8a(x + (size_t)r * c.cols, a, c.cols); c.xs[r] = a;
        for (int k = 0; k < 2; k++) c.ys[k][r] = malloc(c.rows * 4);
    }
    double med[2];
    alternate(reps, copies, m, side, &c, med);
    char what[32]; snprintf(what, sizeof what, "type %d", c.type);
    report(what, c.rows, c.cols, c.n, copies, c.ys[0], c.ys[1], xb / 1e9, med);
}
