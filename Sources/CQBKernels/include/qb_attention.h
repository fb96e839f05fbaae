#ifndef QB_ATTENTION_H
#define QB_ATTENTION_H
#include <stdint.h>

// One query head against cached positions first ..< n of one KV head, laid out
// [n][head_dim]: out = softmax(K q * scale) V. `first` > 0 is a sliding window (the
// positions before it are outside the window, as if absent); 0 attends to every position.
// `scores` has room for n - first floats.
void qb_attention_head(const float *q, const float *k, const float *v, int64_t first, int64_t n, int64_t head_dim,
                       float scale, float *scores, float *out);

// KV-cache rows of `head_dim` values in f16, or in Q8_0 blocks (GGML layout: f16 scale,
// 32 int8). Attention over cached positions first ..< n of one KV head, as qb_attention_head; against
// a Q8_0 cache the query is rounded to Q8_0 first (as GGML does), for integer dot products.
void qb_store_kv_f16(const float *src, uint16_t *dst, int64_t head_dim);
void qb_store_kv_q8_0(const float *src, void *dst, int64_t head_dim);
void qb_attention_head_f16(const float *q, const uint16_t *k, const uint16_t *v, int64_t first, int64_t n,
                           int64_t head_dim, float scale, float *scores, float *out);
void qb_attention_head_q8_0(const float *q, const void *k, const void *v, int64_t first, int64_t n,
                            int64_t head_dim, float scale, float *scores, float *out);
// The `group` query heads that share one KV head (grouped-query attention), queries and
// outputs `group` x head_dim contiguous, cache rows of GGML type `type` (QB_F16 or QB_Q8_0):
// each cached row is read once for the whole group; positions first ..< n as above.
// `scores` is scratch with room for group x (n - first) floats; head_dim at most 512.
void qb_attention_group(int32_t type, const float *q, const void *k, const void *v, int64_t first, int64_t n,
                        int64_t head_dim, int64_t group, float scale, float *scores, float *out);
// qb_attention_group for `npos` consecutive positions of a prefill chunk at once: position
// i's queries are q + i * qstride (group x head_dim), its outputs out + i * ostride, and it
// attends to cached positions first_i ..< end0 + i, first_i = max(0, end0 + i - window)
// (window 0: every position). Each cached row is widened once for every query of the
// chunk's positions (one position at a time, the widening cost as much as the products
// at large head sizes; the AVX-512 set widens a value row in registers per position for
// head size 64 and four heads); every output is bitwise what qb_attention_group
// gives for its position alone. `scores` has room for npos x group x (end0 + npos - 1 - first_0) floats.
void qb_attention_rows(int32_t type, const float *q, int64_t qstride, int64_t npos, const void *k, const void *v,
                       int64_t end0, int64_t window, int64_t head_dim, int64_t group, float scale, float *scores,
                       float *out, int64_t ostride);
#endif
