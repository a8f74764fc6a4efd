#include "CallgrindMarkers.h"

// The empty asm keeps each function a real function with a body of its own, so that identical
// code folding cannot give the two markers one address.
__attribute__((noinline)) void conductor_bench_counting_starts(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void conductor_bench_counting_stops(void) { __asm__ volatile("nop" ::: "memory"); }
