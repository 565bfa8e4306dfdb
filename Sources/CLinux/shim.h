// Linux calls Swift cannot import directly (variadic in C), wrapped as plain functions.
#include <sys/prctl.h>

static inline int coffer_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int coffer_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}
