// A persistent worker pool. Decode runs ~100 parallel sections per token, so waking
// threads through the kernel each time would cost more than the work: workers spin
// briefly on a generation counter, then yield, then sleep on a condition variable. The
// caller waiting for a section's last chunk does the same: a worker the OS took off its
// core mid-chunk (the machine busy with something else) may be gone for a scheduler
// tick, and yielding for that long would bill the wait as CPU time and take a core from
// the very work that is waited for.
//
// Work is handed out chunk by chunk through one atomic claim word tagged with the
// section's generation, and a section ends when all its chunks are done, not when
// every worker has checked in: a worker the OS has descheduled (the machine busy with
// something else) never holds up a section it has not claimed a chunk of. A late worker
// sees a newer tag, claims nothing, and waits for the next section.
#include "qb_pool.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define qb_relax() _mm_pause()
#else
#define qb_relax() ((void)0)
#endif

typedef struct {
    qb_task_fn fn;
    void *ctx;
    int64_t n, grain, chunks;
} qb_job;

struct qb_pool {
    int32_t threads;
    pthread_t *handles;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    pthread_cond_t finished;      // the caller sleeps on it for a section's last chunk
    _Atomic int32_t caller_asleep;
    _Atomic uint64_t generation;  // bumped per section; wakes workers
    _Atomic uint64_t claim;       // (generation << 32) | next chunk
    _Atomic int64_t done;         // chunks finished in the current section
    _Atomic int32_t stop;
    // Two slots: a section's job stays untouched until the one after next, and a
    // section cannot end while any of its chunks is claimed but unfinished.
    qb_job job[2];
};

typedef struct { qb_pool *pool; int32_t index; } qb_worker_arg;

static void qb_drain(qb_pool *p, uint64_t gen, int32_t thread) {
    const uint64_t tag = gen & 0xffffffffu;
    for (;;) {
        uint64_t c = atomic_load_explicit(&p->claim, memory_order_acquire);
        if ((c >> 32) != tag) return;
        const qb_job *job = &p->job[gen & 1];
        int64_t index = (int64_t)(c & 0xffffffffu);
        if (index >= job->chunks) return;
        if (!atomic_compare_exchange_weak_explicit(&p->claim, &c, c + 1, memory_order_acq_rel, memory_order_relaxed))
            continue;
        int64_t begin = index * job->grain;
        int64_t end = begin + job->grain < job->n ? begin + job->grain : job->n;
        job->fn(job->ctx, begin, end, thread);
        // Sequentially consistent, as the caller's store to caller_asleep before it reads
        // done: one of the two sees the other's store, so the wake-up is never lost.
        if (atomic_fetch_add(&p->done, 1) + 1 == job->chunks && atomic_load(&p->caller_asleep)) {
            pthread_mutex_lock(&p->mutex);
            pthread_cond_signal(&p->finished);
            pthread_mutex_unlock(&p->mutex);
        }
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
        qb_drain(p, gen, arg.index);
    }
}

qb_pool *qb_pool_create(int32_t threads) {
    if (threads < 1) threads = 1;
    qb_pool *p = calloc(1, sizeof(qb_pool));
    if (!p) return NULL;
    p->threads = threads;
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->finished, NULL);
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
    pthread_cond_destroy(&p->finished);
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
    // Only the calling thread starts sections, so it alone advances the generation.
    uint64_t gen = atomic_load_explicit(&p->generation, memory_order_relaxed) + 1;
    qb_job *job = &p->job[gen & 1];
    job->fn = fn;
    job->ctx = ctx;
    job->n = n;
    job->grain = grain;
    job->chunks = (n + grain - 1) / grain;
    // Every chunk of the previous section finished before it returned, so no late
    // increment can land here.
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    atomic_store_explicit(&p->claim, (gen & 0xffffffffu) << 32, memory_order_release);
    pthread_mutex_lock(&p->mutex);
    atomic_store_explicit(&p->generation, gen, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mutex);
    qb_drain(p, gen, 0);
    for (int spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) != job->chunks; spins++) {
        if (spins < 2000) { qb_relax(); continue; }
        if (spins < 2100) { sched_yield(); continue; }
        pthread_mutex_lock(&p->mutex);
        atomic_store(&p->caller_asleep, 1);
        while (atomic_load(&p->done) != job->chunks) pthread_cond_wait(&p->finished, &p->mutex);
        atomic_store(&p->caller_asleep, 0);
        pthread_mutex_unlock(&p->mutex);
        break;
    }
}
