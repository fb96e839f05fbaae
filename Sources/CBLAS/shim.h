// OpenBLAS's CBLAS interface (Debian: libopenblas-dev).
#include <cblas.h>
