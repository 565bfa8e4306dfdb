// Linux calls Swift cannot import directly (variadic, or hidden behind _GNU_SOURCE), wrapped as
// plain functions. Header-only: nothing to link.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>
#include <unistd.h>

static inline int coffer_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int coffer_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

static inline int coffer_syncfs(int fd) {
    return syncfs(fd);
}
