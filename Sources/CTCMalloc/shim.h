// gperftools' tcmalloc and its allocator statistics (Debian: libgoogle-perftools-dev).
#include <gperftools/malloc_extension_c.h>
