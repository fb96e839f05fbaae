#include "qb_build_info.h"

// Weak, so that QBBuildInfo's generated definitions replace them where the binary links it.
__attribute__((weak)) const char *qb_build_commit(void) { return "unknown"; }

__attribute__((weak)) int qb_build_dirty(void) { return -1; }
