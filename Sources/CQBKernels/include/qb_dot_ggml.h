#ifndef QB_DOT_GGML_H
#define QB_DOT_GGML_H
#include <stdint.h>
#include "qb_activation.h"

// y[r] = dot(W[r], x) for rows [r0, r1) of a GGML-typed matrix whose rows are
// `cols` wide; x is given quantized (q8a, cols/32 blocks). Not for Q4_K and Q6_K (NaN).
void qb_matvec_ggml(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols);

#endif
