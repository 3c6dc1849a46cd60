// The jemalloc options of PushRelay's executables: see malloc_conf.c. Nothing here is called; the executables
// depend on this target so that its `malloc_conf` is linked in.
#pragma once
