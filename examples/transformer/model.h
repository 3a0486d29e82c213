/* The model of examples/transformer: its shape, the layout of its weights in one array (the
 * order of llama2.c's checkpoints), random weights, and the rotary tables. C99, shared by the
 * hologram forward pass (forward.cpp) and the plain C reference (reference.c). */
#ifndef HOLOGRAM_EXAMPLE_TRANSFORMER_MODEL_H
#define HOLOGRAM_EXAMPLE_TRANSFORMER_MODEL_H

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_config {
  int dim;        /* width of the residual stream */
  int hidden_dim; /* width of the feed-forward layer */
  int n_layers;
  int n_heads;
  int n_kv_heads; /* key/value heads (grouped-query attention when below n_heads) */
  int vocab_size;
  int seq_len;
} tf_config;

/* stories15M's shape (llama2.c). */
static inline tf_config tf_stories15m(void) {
  tf_config c = {288, 768, 6, 6, 6, 32000, 256};
  return c;
}

static inline int tf_head_size(const tf_config *c) {
  return c->dim / c->n_heads;
}
static inline int tf_kv_dim(const tf_config *c) {
  return tf_head_size(c) * c->n_kv_heads;
}

/* Where each tensor starts in the weight array, in floats. Tensors are in llama2.c's order,
 * each starting at a multiple of `align` floats (a device's view alignment; no padding is
 * needed for this shape when it is at most 128 bytes, as on the CPU, lavapipe and PoCL). The
 * classifier shares the embedding table. */
typedef struct tf_layout {
  uint64_t emb;     /* [vocab, dim] */
  uint64_t rms_att; /* [layers] of [dim], `layer_rms` apart */
  uint64_t wq, wk, wv, wo;
  uint64_t rms_ffn;
  uint64_t w1, w2, w3;
  uint64_t rms_final; /* [dim] */
  uint64_t layer_rms, layer_wq, layer_wk, layer_wv, layer_wo, layer_w1, layer_w2, layer_w3;
  uint64_t total;
} tf_layout;

static inline uint64_t tf_round_up(uint64_t n, uint64_t align) {
  return (n + align - 1) / align * align;
}

static inline tf_layout tf_layout_of(const tf_config *c, uint64_t align) {
  tf_layout l;
  const uint64_t dim = (uint64_t)c->dim, hidden = (uint64_t)c->hidden_dim,
                 kv = (uint64_t)tf_kv_dim(c), layers = (uint64_t)c->n_layers;
  uint64_t at = 0;
  /* Each tensor of each layer starts aligned: its size rounded up is the stride. */
#define TF_PLACE(field, stride_field, size)                                                        \
  l.stride_field = tf_round_up(size, align);                                                       \
  l.field = at;                                                                                    \
  at = tf_round_up(at + layers * l.stride_field, align);
  l.emb = 0;
  at = tf_round_up((uint64_t)c->vocab_size * dim, align);
  TF_PLACE(rms_att, layer_rms, dim)
  TF_PLACE(wq, layer_wq, dim * dim)
  TF_PLACE(wk, layer_wk, dim * kv)
  TF_PLACE(wv, layer_wv, dim * kv)
  TF_PLACE(wo, layer_wo, dim * dim)
  l.rms_ffn = at;
  at = tf_round_up(at + layers * l.layer_rms, align);
  TF_PLACE(w1, layer_w1, dim * hidden)
  TF_PLACE(w2, layer_w2, hidden * dim)
  TF_PLACE(w3, layer_w3, dim * hidden)
#undef TF_PLACE
  l.rms_final = at;
  l.total = tf_round_up(at + dim, align);
  return l;
}

/* Deterministic weights: matrices uniform in ±1/sqrt(fan-in) (so activations keep their
 * scale through the layers), RMSNorm weights near 1, from a 64-bit LCG. Padding stays 0. */
static inline void tf_random_weights(const tf_config *c, const tf_layout *l, float *w,
                                     uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull, i;
  const uint64_t dim = (uint64_t)c->dim, hidden = (uint64_t)c->hidden_dim;
  for (i = 0; i < l->total; ++i) w[i] = 0.0f;
#define TF_FILL(start, count, lo, hi)                                                              \
  for (i = 0; i < (count); ++i) {                                                                  \
    s = s * 6364136223846793005ull + 1442695040888963407ull;                                       \
    w[(start) + i] = (float)((lo) + ((hi) - (lo)) * (double)(s >> 40) / (double)(1ull << 24));     \
  }
  {
    const double a = 1.0 / sqrt((double)dim), b = 1.0 / sqrt((double)hidden);
    const uint64_t kv = (uint64_t)tf_kv_dim(c);
    int layer;
    TF_FILL(l->emb, (uint64_t)c->vocab_size * dim, -1.0, 1.0)
    for (layer = 0; layer < c->n_layers; ++layer) {
      const uint64_t L = (uint64_t)layer;
      TF_FILL(l->rms_att + L * l->layer_rms, dim, 0.8, 1.2)
      TF_FILL(l->wq + L * l->layer_wq, dim * dim, -a, a)
      TF_FILL(l->wk + L * l->layer_wk, kv * dim, -a, a)
      TF_FILL(l->wv + L * l->layer_wv, kv * dim, -a, a)
      TF_FILL(l->wo + L * l->layer_wo, dim * dim, -a, a)
      TF_FILL(l->rms_ffn + L * l->layer_rms, dim, 0.8, 1.2)
      TF_FILL(l->w1 + L * l->layer_w1, hidden * dim, -a, a)
      TF_FILL(l->w2 + L * l->layer_w2, dim * hidden, -b, b)
      TF_FILL(l->w3 + L * l->layer_w3, hidden * dim, -a, a)
    }
    TF_FILL(l->rms_final, dim, 0.8, 1.2)
  }
#undef TF_FILL
}

/* The rotary angle of pair i (elements 2i, 2i+1 of a row of all heads) at position pos:
 * pos / 10000^((2i mod head_size) / head_size), llama2.c's convention. */
static inline double tf_rope_angle(const tf_config *c, int pos, int i) {
  const int hs = tf_head_size(c);
  return (double)pos / pow(10000.0, (double)((2 * i) % hs) / (double)hs);
}

#ifdef __cplusplus
}
#endif

#endif
