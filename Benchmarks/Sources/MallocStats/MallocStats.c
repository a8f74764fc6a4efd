#include "MallocStats.h"

#if defined(__linux__)
#include <features.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The value of `attribute="…"` in the last line of `xml` that starts with `prefix`.
static size_t last_value(const char *xml, const char *prefix, const char *attribute) {
    const char *found = NULL;
    for (const char *cursor = xml; (cursor = strstr(cursor, prefix)) != NULL; cursor++) found = cursor;
    if (found == NULL) return 0;
    const char *value = strstr(found, attribute);
    return value == NULL ? 0 : strtoull(value + strlen(attribute), NULL, 10);
}

// mallinfo2() counts the main arena only, and Swift tasks run on threads with arenas of their
// own; malloc_info's totals cover every arena: in use = obtained from the system − free + mmapped.
size_t malloc_stats_allocated_bytes(void) {
    char *xml = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&xml, &length);
    if (stream == NULL) return 0;
    malloc_info(0, stream);
    fclose(stream);
    size_t current = last_value(xml, "<system type=\"current\"", "size=\"");
    size_t fast = last_value(xml, "<total type=\"fast\"", "size=\"");
    size_t rest = last_value(xml, "<total type=\"rest\"", "size=\"");
    size_t mmapped = last_value(xml, "<total type=\"mmap\"", "size=\"");
    free(xml);
    return current - fast - rest + mmapped;
}
#else
size_t malloc_stats_allocated_bytes(void) { return 0; }
#endif
