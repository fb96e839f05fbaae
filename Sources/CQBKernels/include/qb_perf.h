#ifndef QB_PERF_H
#define QB_PERF_H
#include <stdint.h>

// Hardware work counters through perf_event_open (Linux), for `bench`'s work metrics.

// Opens a user-space counter of retired instructions (which = 0) or CPU cycles (which = 1)
// on thread `tid`, counting from now. Returns the file descriptor, or -errno when the
// kernel refuses (ENOENT where the counters are not exposed, EACCES under
// perf_event_paranoid, ENOSYS without the syscall).
int qb_perf_open(int tid, int which);
// Reads the counter's running total into *value; 0, or -errno.
int qb_perf_read(int fd, uint64_t *value);
// Closes it.
void qb_perf_close(int fd);

#endif
