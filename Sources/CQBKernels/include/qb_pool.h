#ifndef QB_POOL_H
#define QB_POOL_H
#include <stdint.h>

/// A task over the half-open item range [begin, end), run by worker `thread`.
typedef void (*qb_task_fn)(void *ctx, int64_t begin, int64_t end, int32_t thread);

typedef struct qb_pool qb_pool;

/// Creates a pool of `threads` workers in all, the calling thread included
/// (so `threads - 1` persistent threads are started once, here).
qb_pool *qb_pool_create(int32_t threads);
void qb_pool_destroy(qb_pool *pool);
int32_t qb_pool_threads(const qb_pool *pool);

/// Runs fn over [0, n) in chunks of `grain` items handed out dynamically; returns when
/// every chunk is done. Which thread runs a chunk varies, so fn must write disjoint
/// outputs per item: then the result does not depend on the thread count.
void qb_pool_run(qb_pool *pool, qb_task_fn fn, void *ctx, int64_t n, int64_t grain);

#endif
