#ifndef CONDUCTOR_THREAD_SLOT_H
#define CONDUCTOR_THREAD_SLOT_H

/// One pointer per thread: where the harmonizer registry's lookup cache of the calling thread
/// is kept (ConductorHarmonizer's HarmonizerLookupCache), so that finding it is a load from the
/// thread's own storage. Swift has no thread-local variables; `pthread_getspecific`, its
/// alternative, is a call of ~17 instructions, which a count-down by name (~40 in all) would
/// spend on finding its cache alone. C's `_Thread_local` is a load at a fixed offset from the
/// thread pointer in an executable (the linker relaxes the access), a `__tls_get_addr` call
/// in a shared library.
///
/// The slot is a plain pointer: Swift code stores and reads an `Unmanaged` reference in it,
/// and a pthread key's destructor (kept by the Swift side) releases it when the thread exits
/// and clears the slot.
extern _Thread_local void *_Nullable conductor_harmonizer_lookup_cache;

/// The calling thread's slot: `NULL` until set on this thread.
static inline __attribute__((always_inline)) void *_Nullable conductor_harmonizer_lookup_cache_get(void) {
    return conductor_harmonizer_lookup_cache;
}

/// Sets the calling thread's slot.
static inline __attribute__((always_inline)) void conductor_harmonizer_lookup_cache_set(void *_Nullable cache) {
    conductor_harmonizer_lookup_cache = cache;
}

#endif
