// jemalloc reads its options from this global, defined by the application, before `main` runs.
//
// - narenas:2: two arenas rather than four per core. The relay's threads are few (two event loops, the cooperative
//   pool, one libcurl thread per pool, the SQLite writer); more arenas only spread its memory thinner. With the
//   default, peak RSS in the APNs benchmark rose from 141 to 153 MB; with two it stays at 141 (Docs/benchmarks.md).
// - dirty_decay_ms:1000, muzzy_decay_ms:0: freed pages go back to the system after a second, not ten.
//
// MALLOC_CONF in the environment still overrides these.
const char *malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";
