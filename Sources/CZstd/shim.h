#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <zstd.h>
