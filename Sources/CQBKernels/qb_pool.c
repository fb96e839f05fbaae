// A persistent worker pool. Decode runs ~100 parallel sections per token, so waking
// threads through the kernel each time would cost more than the work: workers spin
// briefly on a generation counter, then yield, then sleep on a condition variable.
// Every wait yields the core after a short spin, so that when the machine is
// oversubscribed (a build, a second process) a waiting thread hands its core to the
// thread it is waiting for instead of burning its time slice.
#include "qb_pool.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define qb_relax() _mm_pause()
#else
#define qb_relax() ((void)0)
#endif

struct qb_pool {
    int32_t threads;
    pthread_t *handles;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    _Atomic uint64_t generation;
    _Atomic int64_t next;
    _Atomic int32_t busy;
    _Atomic int32_t stop;
    qb_task_fn fn;
    void *ctx;
    int64_t n, grain;
};

typedef struct { qb_pool *pool; int32_t index; } qb_worker_arg;

static void qb_drain(qb_pool *p, int32_t thread) {
    for (;;) {
        int64_t begin = atomic_fetch_add_explicit(&p->next, p->grain, memory_order_relaxed);
        if (begin >= p->n) break;
        int64_t end = begin + p->grain < p->n ? begin + p->grain : p->n;
        p->fn(p->ctx, begin, end, thread);
    }
}

static void *qb_worker(void *raw) {
    qb_worker_arg arg = *(qb_worker_arg *)raw;
    free(raw);
    qb_pool *p = arg.pool;
    uint64_t seen = 0;
    for (;;) {
        uint64_t gen;
        int spins = 0;
        while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen) {
            ++spins;
            if (spins < 4000) { qb_relax(); continue; }
            if (spins < 4200) { sched_yield(); continue; }
            pthread_mutex_lock(&p->mutex);
            while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
                   !atomic_load(&p->stop))
                pthread_cond_wait(&p->wake, &p->mutex);
            pthread_mutex_unlock(&p->mutex);
            break;
        }
        if (atomic_load(&p->stop)) return NULL;
        seen = gen;
        qb_drain(p, arg.index);
        atomic_fetch_sub_explicit(&p->busy, 1, memory_order_release);
    }
}

qb_pool *qb_pool_create(int32_t threads) {
    if (threads < 1) threads = 1;
    qb_pool *p = calloc(1, sizeof(qb_pool));
    if (!p) return NULL;
    p->threads = threads;
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->handles = calloc((size_t)threads, sizeof(pthread_t));
    for (int32_t i = 1; i < threads; i++) {
        qb_worker_arg *arg = malloc(sizeof(qb_worker_arg));
        arg->pool = p;
        arg->index = i;
        pthread_create(&p->handles[i], NULL, qb_worker, arg);
    }
    return p;
}

void qb_pool_destroy(qb_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mutex);
    atomic_store(&p->stop, 1);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mutex);
    for (int32_t i = 1; i < p->threads; i++) pthread_join(p->handles[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mutex);
    free(p->handles);
    free(p);
}

int32_t qb_pool_threads(const qb_pool *p) { return p ? p->threads : 1; }

void qb_pool_run(qb_pool *p, qb_task_fn fn, void *ctx, int64_t n, int64_t grain) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (!p || p->threads == 1 || n <= grain) {
        for (int64_t b = 0; b < n; b += grain) fn(ctx, b, b + grain < n ? b + grain : n, 0);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->grain = grain;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->busy, p->threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mutex);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mutex);
    qb_drain(p, 0);
    for (int spins = 0; atomic_load_explicit(&p->busy, memory_order_acquire) != 0; spins++) {
        if (spins < 2000) qb_relax(); else sched_yield();
    }
}
