// PostgreSQL's client library (Debian: libpq-dev; pkg-config adds -I/usr/include/postgresql).
#include <libpq-fe.h>
