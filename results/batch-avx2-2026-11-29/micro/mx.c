// Decode of MLX in the sixteen-row layout (f16 scales), one thread: tnew (the tree after) vs
// tvar (before), one row (matvec_mlx_x16) or n rows (_rows); bits (argument 6) and group
// (7); alternating, medians; outputs compared bitwise.
#include "qb_activation.h"
#include "qb_formats.h"
#include "micro.h"
#define SET(p) void qb_##p##_repack_mlx_x16(int32_t, int64_t, int32_t, const uint32_t *, const void *, const void *, void *, int64_t, int64_t, int64_t); \
 int64_t qb_##p##_mlx_x16_bytes(int32_t, int64_t, int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t); \
 void qb_##p##_matvec_mlx_x16(int32_t, int64_t, int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_mlx_x16_rows(int32_t, int64_t, int32_t, const void *, const qb_q8a *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
SET(tnew) SET(tvar)
struct ctx { int bits, group, rows, cols, n; const qb_q8a *xs[16]; float *ys[2][16]; };
static void side(int s, const uint8_t *m, void *p) {
    struct ctx *c = p;
    if (c->n == 1) (s ? qb_tnew_matvec_mlx_x16 : qb_tvar_matvec_mlx_x16)(c->bits, c->group, QB_F16, m, c->xs[0], c->ys[s][0], 0, c->rows / 16, c->cols);
    else (s ? qb_tnew_matvec_mlx_x16_rows : qb_tvar_matvec_mlx_x16_rows)(c->bits, c->group, QB_F16, m, c->xs, c->ys[s], c->n, 0, c->rows / 16, c->cols);
}
int main(int argc, char **argv) {
    struct ctx c = {.rows = atoi(argv[1]), .cols = atoi(argv[2]), .n = atoi(argv[3]), .bits = atoi(argv[6]), .group = atoi(argv[7])};
    int copies = atoi(argv[4]), reps = atoi(argv[5]);
    size_t words = (size_t)c.rows * c.cols * c.bits / 32, ns = (size_t)c.rows * (c.cols / c.group);
    uint32_t *w = huge(words * 4); srand(3); for (size_t i = 0; i < words; i++) w[i] = ((uint32_t)rand() << 16) ^ rand();
    _Float16 *sc = malloc(ns * 2), *bi = malloc(ns * 2);
    for (size_t i = 0; i < ns; i++) { sc[i] = (rand() % 100) * 0.001f; bi[i] = (rand() % 100 - 50) * 0.001f; }
    size_t xb = qb_tnew_mlx_x16_bytes(c.bits, c.group, QB_F16, c.rows, c.cols);
    uint8_t **m = malloc(sizeof(void *) * copies);
    for (int i = 0; i < copies; i++) { m[i] = huge(xb); qb_tnew_repack_mlx_x16(c.bits, c.group, QB_F16, w, sc, bi, m[i], 0, c.rows / 16, c.cols); }
    float *x = random_rows(c.n, c.cols);
    for (int r = 0; r < c.n; r++) {
        qb_q8a *a = malloc(c.cols / 32 * sizeof(qb_q8a)); qb_tnew_quantize_q8a(x + (size_t)r * c.cols, a, c.cols); c.xs[r] = a;
        for (int k = 0; k < 2; k++) c.ys[k][r] = malloc(c.rows * 4);
    }
    double med[2];
    alternate(reps, copies, m, side, &c, med);
    char what[32]; snprintf(what, sizeof what, "MLX q%d g%d", c.bits, c.group);
    report(what, c.rows, c.cols, c.n, copies, c.ys[0], c.ys[1], xb / 1e9, med);
}
