// SQLite's C interface (Debian: libsqlite3-dev).
#include <sqlite3.h>
