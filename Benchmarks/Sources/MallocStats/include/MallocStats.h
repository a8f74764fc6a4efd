#ifndef MALLOC_STATS_H
#define MALLOC_STATS_H
#include <stddef.h>

/// Bytes currently allocated through malloc in every arena (from glibc's malloc_info), or 0
/// where that is not available.
size_t malloc_stats_allocated_bytes(void);

#endif
