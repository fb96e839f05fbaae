// The public kernel entry points: each calls the active set's version through one table of
// pointers (qb_kernel_list.h), chosen from cpuid at the first call. A table rather than GNU
// ifunc resolvers: the choice can honour QB_KERNELS, tests can switch sets inside one
// process to run every set against the references, and it works outside ELF too. The
// cost is one indirect, always-predicted call per kernel call, each of which covers a row
// range or more.
#include "qb_kernel_set.h"
#include "kernels/qb_kernel_list.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "qb_kernels_portable.h"
#if defined(__x86_64__)
#include "qb_kernels_avx2.h"
#include "qb_kernels_avx512.h"
#endif

// Indexed by set; on other CPUs than x86-64 only the portable set exists.
#if defined(__x86_64__)
static const qb_kernel_table *const tables[QB_KERNELS_COUNT] = {&qb_kernels_portable, &qb_kernels_avx2, &qb_kernels_avx512};
#else
static const qb_kernel_table *const tables[QB_KERNELS_COUNT] = {&qb_kernels_portable, &qb_kernels_portable,
                                                                &qb_kernels_portable};
#endif

#if defined(__x86_64__)
// XCR0: which register states the OS saves on a context switch. The instructions exist
// whatever it says, but registers the OS does not save would be corrupted by preemption.
static uint64_t xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

static int32_t detect(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return QB_KERNELS_PORTABLE;
    const int fma = (c >> 12) & 1, movbe = (c >> 22) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1,
              f16c = (c >> 29) & 1;
    if (!(osxsave && avx)) return QB_KERNELS_PORTABLE;
    const uint64_t x = xcr0();
    if ((x & 0x6) != 0x6) return QB_KERNELS_PORTABLE;  // SSE and AVX state
    unsigned lzcnt = 0;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) lzcnt = (c >> 5) & 1;
    if (__get_cpuid_max(0, 0) < 7) return QB_KERNELS_PORTABLE;
    __cpuid_count(7, 0, a, b, c, d);
    const int bmi1 = (b >> 3) & 1, avx2 = (b >> 5) & 1, bmi2 = (b >> 8) & 1;
    if (!(avx2 && fma && f16c && bmi1 && bmi2 && lzcnt && movbe)) return QB_KERNELS_PORTABLE;
    const int f = (b >> 16) & 1, dq = (b >> 17) & 1, cd = (b >> 28) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    const int vnni = (c >> 11) & 1;
    // Opmask, upper halves of zmm0-15 and zmm16-31 state.
    if (f && dq && cd && bw && vl && vnni && (x & 0xE0) == 0xE0) return QB_KERNELS_AVX512;
    return QB_KERNELS_AVX2;
#else
    return QB_KERNELS_PORTABLE;
#endif
}

// cpuid traps to the hypervisor in a virtual machine: asked once.
int32_t qb_kernel_set_best(void) {
    static _Atomic int32_t best = -1;
    int32_t b = atomic_load_explicit(&best, memory_order_relaxed);
    if (b < 0) {
        b = detect();
        atomic_store_explicit(&best, b, memory_order_relaxed);
    }
    return b;
}

const char *qb_kernel_set_name(int32_t set) {
    switch (set) {
    case QB_KERNELS_AVX512: return "avx512";
    case QB_KERNELS_AVX2: return "avx2";
    case QB_KERNELS_PORTABLE: return "portable";
    default: return "";
    }
}

// Whether the one-row decode streams qb_set_stream_prefetch names prefetch themselves on this
// CPU. On AMD's Zen 4 the hardware prefetcher alone streamed the sixteen-row Q4_0 groups from
// one core at the read probe's rate, and the kernels' own prefetches took 27-28% (AVX-512) and
// 10-13% (AVX2) off that; at two threads 11-14% on AVX-512, the AVX2 kernel within the noise
// either way (results/x16-prefetch-zen4-2026-12-01/). The AVX-512 Q8_0 four-row stream read
// 1.27x as fast without its own there (results/x4-avx2-one-stream-2026-12-01/). With the
// sixteen-row Q4_K and 4-bit MLX streams left to the hardware, a one-thread 1B token took
// 0.85x the time (Q4_K_M) and 0.78x (q4-g64) on the AVX-512 set; on the AVX2 set 0.96x (within
// the noise) and 0.93x (results/x16-prefetch-q4k-mlx-zen4-2026-12-01/); the AVX-512 set's
// sixteen-row Q6_K stream read 0.73-0.79x the plain rows' rate with its own prefetches, 0.99-1.16x
// without (results/q6k-x16-zen4-2026-12-01/), the AVX2 set's 0.85-1.00x with and 1.05-1.07x
// without (results/q6k-x16-avx2-zen4-2026-12-02/). AMD's family 23 (Zen 1 and 2) is the
// other way: on an EPYC of model 1, two threads, the kernels' own prefetches made 1B decode
// 1.28x as fast with every matrix Q4_K and 1.32x with Q4_K_M
// (results/ik-side-by-side-2026-12-03-epyc-f23m1/prefetch/). Other CPUs keep them:
// on Intel's the far L2 prefetches of the other decode streams gained 12-21% from one core
// (results/prefetch-l2-2026-11-28/), and these kernels have not been timed there without
// their own. QB_STREAM_PREFETCH (or its first name, QB_X16_PREFETCH) "0" or "1"
// overrides.
static int32_t stream_prefetch_for_cpu(void) {
    const char *names[] = {"QB_STREAM_PREFETCH", "QB_X16_PREFETCH"};
    for (int i = 0; i < 2; i++) {
        const char *env = getenv(names[i]);
        if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
    }
#if defined(__x86_64__)
    unsigned a, b, c, d;
    // "AuthenticAMD" in EBX, EDX, ECX; the family from leaf 1 (base 15 plus the extended family).
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) {
        if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
        const unsigned family = ((a >> 8) & 0xF) == 0xF ? 0xF + ((a >> 20) & 0xFF) : (a >> 8) & 0xF;
        return family <= 0x17;
    }
#endif
    return 1;
}

int32_t qb_kernel_stream_prefetch(void) { return stream_prefetch_for_cpu(); }

// Whether the avx512 set's Q4_K prefill meets its scales by vpdpwssd per 16 values rather
// than vpmulld per 32 (qb_set_q4k_dpwssd): on Intel's cores a vpmulld is two operations on
// the pipes the vpdpbusd run on, and with vpdpwssd a 1B Q4_K_M prefilled 1.14x as fast on an
// Emerald Rapids Xeon; on AMD's Zen 4 a vpmulld and its vpaddd cost one vpdpbusd's slot
// (results/epilogue-pipes-avx512-2026-12-04-zen4/) and two vpdpwssd take two: there the
// tiles alone ran 0.92-0.93x as fast with vpdpwssd and a 1B Q4_K_M prefilled 0.977x
// (results/q4k-tuning-zen4-2026-12-05/). QB_Q4K_DPWSSD "0" or "1" overrides.
static int32_t q4k_dpwssd_for_cpu(void) {
    const char *env = getenv("QB_Q4K_DPWSSD");
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
#if defined(__x86_64__)
    unsigned a, b, c, d;
    // "GenuineIntel" in EBX, EDX, ECX.
    return __get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu;
#else
    return 0;
#endif
}

int32_t qb_kernel_q4k_dpwssd(void) { return q4k_dpwssd_for_cpu(); }

// Every set's tuning for this CPU, once, before a set is first made active.
static void tune_sets(void) {
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set_explicit(&done, memory_order_relaxed)) return;
    const int32_t pf = stream_prefetch_for_cpu(), dp = q4k_dpwssd_for_cpu();
    for (int32_t s = 0; s < QB_KERNELS_COUNT; s++) {
        tables[s]->set_stream_prefetch(pf);
        tables[s]->set_q4k_dpwssd(dp);
    }
}

// The active set's table. It starts as `boot`, whose entries choose the set and then call
// the chosen one's, so an entry point is one load and a tail call, with no first-call test.
// One word, so a reader never sees a half-made choice; the tables are constant, so relaxed
// ordering is enough.
static const qb_kernel_table boot;
static _Atomic(const qb_kernel_table *) active = &boot;

int32_t qb_kernel_set_use(int32_t set) {
    if (set < 0 || set >= QB_KERNELS_COUNT || set > qb_kernel_set_best()) return 0;
    tune_sets();
    atomic_store_explicit(&active, tables[set], memory_order_relaxed);
    return 1;
}

// The first choice: the best set, or the lower one QB_KERNELS names. A set made active in
// the meantime (qb_kernel_set_use, or another thread's first call) stands.
__attribute__((noinline, cold)) static const qb_kernel_table *choose(void) {
    const int32_t best = qb_kernel_set_best();
    tune_sets();
    int32_t set = best;
    const char *env = getenv("QB_KERNELS");
    if (env) {
        for (int32_t s = 0; s < QB_KERNELS_COUNT; s++) {
            if (strcasecmp(env, qb_kernel_set_name(s)) == 0 && s <= best) set = s;
        }
    }
    const qb_kernel_table *expected = &boot;
    if (!atomic_compare_exchange_strong_explicit(&active, &expected, tables[set], memory_order_relaxed,
                                                 memory_order_relaxed))
        return expected;
    return tables[set];
}

int32_t qb_kernel_set(void) {
    const qb_kernel_table *t = atomic_load_explicit(&active, memory_order_relaxed);
    if (t == &boot) t = choose();
    for (int32_t s = 0; s < QB_KERNELS_COUNT; s++) {
        if (tables[s] == t) return s;
    }
    return QB_KERNELS_PORTABLE;
}

#define QB_KERNEL_BOOT_R(ret, name, params, args) \
    static ret boot_##name params { return choose()->name args; }
#define QB_KERNEL_BOOT_V(name, params, args) \
    static void boot_##name params { choose()->name args; }
QB_KERNEL_LIST(QB_KERNEL_BOOT_R, QB_KERNEL_BOOT_V)

#define QB_KERNEL_BOOT_ENTRY_R(ret, name, params, args) .name = boot_##name,
#define QB_KERNEL_BOOT_ENTRY_V(name, params, args) .name = boot_##name,
static const qb_kernel_table boot = {QB_KERNEL_LIST(QB_KERNEL_BOOT_ENTRY_R, QB_KERNEL_BOOT_ENTRY_V)};

static inline const qb_kernel_table *kernels(void) { return atomic_load_explicit(&active, memory_order_relaxed); }

#define QB_KERNEL_WRAP_R(ret, name, params, args) \
    ret qb_##name params { return kernels()->name args; }
#define QB_KERNEL_WRAP_V(name, params, args) \
    void qb_##name params { kernels()->name args; }
QB_KERNEL_LIST(QB_KERNEL_WRAP_R, QB_KERNEL_WRAP_V)
