// The peers' "all cores" rows: a loop split into one contiguous share per core and run on
// OpenMP's thread team (clang++-19 -fopenmp, LLVM's libomp), which stays alive between calls,
// as a user parallelises such a loop with `#pragma omp parallel for`.
#include "peers.h"

#include <omp.h>

extern "C" void peer_parallel(void (*part)(void *ctx, unsigned index, unsigned parts), void *ctx) {
  // Every core, whatever an earlier omp_set_num_threads (the transformer's 1t reference) left.
  const int parts = omp_get_num_procs();
#pragma omp parallel num_threads(parts)
  part(ctx, static_cast<unsigned>(omp_get_thread_num()),
       static_cast<unsigned>(omp_get_num_threads()));
}
