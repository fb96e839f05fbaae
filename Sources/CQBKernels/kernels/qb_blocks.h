// Private block layouts of the GGML formats (bit-compatible with GGML's structs), shared
// by the C files that read or write them; Swift sees only sizes (qb_formats.h).
#ifndef QB_BLOCKS_H
#define QB_BLOCKS_H
#include "qb_scalar.h"

#define QK 32
#define QK_K 256

typedef struct { qb_half d; uint8_t qs[16]; } block_q4_0;
typedef struct { qb_half d; qb_half m; uint8_t qs[16]; } block_q4_1;
typedef struct { qb_half d; uint8_t qh[4]; uint8_t qs[16]; } block_q5_0;
typedef struct { qb_half d; qb_half m; uint8_t qh[4]; uint8_t qs[16]; } block_q5_1;
typedef struct { qb_half d; int8_t qs[32]; } block_q8_0;
typedef struct { qb_half d; qb_half dmin; uint8_t scales[12]; uint8_t qs[128]; } block_q4_K;
typedef struct { qb_half d; qb_half dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } block_q5_K;
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; qb_half d; } block_q6_K;
typedef struct { qb_half d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } block_iq4_xs;

_Static_assert(sizeof(block_q4_0) == 18, "q4_0");
_Static_assert(sizeof(block_q4_1) == 20, "q4_1");
_Static_assert(sizeof(block_q5_0) == 22, "q5_0");
_Static_assert(sizeof(block_q5_1) == 24, "q5_1");
_Static_assert(sizeof(block_q8_0) == 34, "q8_0");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K");
_Static_assert(sizeof(block_iq4_xs) == 136, "iq4_xs");

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Sub-block ib's (0..7) scale of an IQ4_XS super-block, less 32 (its values are d x this x
// kvalues_iq4nl[nibble]): six bits, four in scales_l, two in scales_h.
static inline int iq4xs_scale(const block_iq4_xs *x, int ib) {
    return (((x->scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((x->scales_h >> 2 * ib) & 3) << 4)) - 32;
}

#endif
