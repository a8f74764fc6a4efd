#ifndef CALLGRIND_MARKERS_H
#define CALLGRIND_MARKERS_H

/// Calls that mark where `conductor-bench instructions` starts and stops the counted work.
/// `scripts/instructions` runs callgrind with `--zero-before=conductor_bench_counting_starts`
/// and `--dump-before=conductor_bench_counting_stops`: the dump then holds the instructions of
/// every thread in between. They are C functions, compiled apart from the Swift code, so that
/// the Swift optimizer cannot drop or merge the calls; outside valgrind they do nothing.
void conductor_bench_counting_starts(void);
void conductor_bench_counting_stops(void);

#endif
