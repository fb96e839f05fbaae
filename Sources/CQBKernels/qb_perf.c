// Hardware work counters: perf_event_open is a raw syscall with no glibc wrapper, and
// Swift cannot call the variadic syscall(2), so the call lives here.
#define _GNU_SOURCE
#include "qb_perf.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

int qb_perf_open(int tid, int which) {
#if defined(__linux__) && defined(SYS_perf_event_open)
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = which == 0 ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, 0UL);
    return fd < 0 ? -errno : (int)fd;
#else
    (void)tid; (void)which;
    return -ENOSYS;
#endif
}

int qb_perf_read(int fd, uint64_t *value) {
    uint64_t v = 0;
    ssize_t n = read(fd, &v, sizeof v);
    if (n != (ssize_t)sizeof v) return n < 0 ? -errno : -EIO;
    *value = v;
    return 0;
}

void qb_perf_close(int fd) { if (fd >= 0) close(fd); }
