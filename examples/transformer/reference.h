/* A plain C forward pass of the model in model.h, written as a user would (llama2.c's
 * structure: float loops, the matmul's rows under `omp parallel for` when built with OpenMP).
 * The example checks hologram's logits against it; the benchmark times it built with clang
 * -O3 -ffast-math -fopenmp. */
#ifndef HOLOGRAM_EXAMPLE_TRANSFORMER_REFERENCE_H
#define HOLOGRAM_EXAMPLE_TRANSFORMER_REFERENCE_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_reference tf_reference;

/* A forward pass over `weights` (laid out by tf_layout_of), with its own activations and KV
 * cache; NULL when out of memory. */
tf_reference *tf_reference_create(const tf_config *c, const tf_layout *l, const float *weights);
void tf_reference_destroy(tf_reference *r);
/* Runs token `token` at position `pos` (0, 1, ... in order) and returns the vocab_size
 * logits, valid until the next call. */
const float *tf_reference_forward(tf_reference *r, int token, int pos);
/* The threads of its parallel loops when built with OpenMP (0: OpenMP's default); no effect
 * otherwise. */
void tf_reference_set_threads(int threads);

#ifdef __cplusplus
}
#endif

#endif
