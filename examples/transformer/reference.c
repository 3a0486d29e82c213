/* See reference.h. */
#include "reference.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct tf_reference {
  tf_config c;
  tf_layout l;
  const float *w;
  float *x, *xb, *xb2, *hb, *hb2, *q, *att, *logits, *key_cache, *value_cache;
};

static void rmsnorm(float *o, const float *x, const float *weight, int size) {
  float ss = 0.0f;
  int j;
  for (j = 0; j < size; j++) ss += x[j] * x[j];
  ss /= (float)size;
  ss += 1e-5f;
  ss = 1.0f / sqrtf(ss);
  for (j = 0; j < size; j++) o[j] = weight[j] * (ss * x[j]);
}

static void softmax(float *x, int size) {
  float max_val = x[0], sum = 0.0f;
  int i;
  for (i = 1; i < size; i++)
    if (x[i] > max_val) max_val = x[i];
  for (i = 0; i < size; i++) {
    x[i] = expf(x[i] - max_val);
    sum += x[i];
  }
  for (i = 0; i < size; i++) x[i] /= sum;
}

/* xout[d] = W[d, n] · x[n] */
static void matmul(float *xout, const float *x, const float *w, int n, int d) {
  int i;
#ifdef _OPENMP
#pragma omp parallel for private(i)
#endif
  for (i = 0; i < d; i++) {
    float val = 0.0f;
    int j;
    for (j = 0; j < n; j++) val += w[(size_t)i * (size_t)n + (size_t)j] * x[j];
    xout[i] = val;
  }
}

void tf_reference_set_threads(int threads) {
#ifdef _OPENMP
  omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs());
#else
  (void)threads;
#endif
}

tf_reference *tf_reference_create(const tf_config *c, const tf_layout *l, const float *weights) {
  tf_reference *r = (tf_reference *)calloc(1, sizeof *r);
  const size_t kv = (size_t)tf_kv_dim(c), cache = (size_t)c->n_layers * (size_t)c->seq_len * kv;
  if (!r) return NULL;
  r->c = *c;
  r->l = *l;
  r->w = weights;
  r->x = (float *)calloc((size_t)c->dim, sizeof(float));
  r->xb = (float *)calloc((size_t)c->dim, sizeof(float));
  r->xb2 = (float *)calloc((size_t)c->dim, sizeof(float));
  r->hb = (float *)calloc((size_t)c->hidden_dim, sizeof(float));
  r->hb2 = (float *)calloc((size_t)c->hidden_dim, sizeof(float));
  r->q = (float *)calloc((size_t)c->dim, sizeof(float));
  r->att = (float *)calloc((size_t)c->n_heads * (size_t)c->seq_len, sizeof(float));
  r->logits = (float *)calloc((size_t)c->vocab_size, sizeof(float));
  r->key_cache = (float *)calloc(cache, sizeof(float));
  r->value_cache = (float *)calloc(cache, sizeof(float));
  if (!r->x || !r->xb || !r->xb2 || !r->hb || !r->hb2 || !r->q || !r->att || !r->logits ||
      !r->key_cache || !r->value_cache) {
    tf_reference_destroy(r);
    return NULL;
  }
  return r;
}

void tf_reference_destroy(tf_reference *r) {
  if (!r) return;
  free(r->x);
  free(r->xb);
  free(r->xb2);
  free(r->hb);
  free(r->hb2);
  free(r->q);
  free(r->att);
  free(r->logits);
  free(r->key_cache);
  free(r->value_cache);
  free(r);
}

const float *tf_reference_forward(tf_reference *r, int token, int pos) {
  const tf_config *p = &r->c;
  const tf_layout *l = &r->l;
  const float *w = r->w;
  const int dim = p->dim, kv_dim = tf_kv_dim(p), hidden = p->hidden_dim, hs = tf_head_size(p);
  const int kv_mul = p->n_heads / p->n_kv_heads;
  float *x = r->x;
  int i, layer;
  for (i = 0; i < dim; i++) x[i] = w[l->emb + (uint64_t)token * (uint64_t)dim + (uint64_t)i];

  for (layer = 0; layer < p->n_layers; layer++) {
    const uint64_t L = (uint64_t)layer;
    const size_t loff = (size_t)layer * (size_t)p->seq_len * (size_t)kv_dim;
    float *k = r->key_cache + loff + (size_t)pos * (size_t)kv_dim;
    float *v = r->value_cache + loff + (size_t)pos * (size_t)kv_dim;
    int h;
    rmsnorm(r->xb, x, w + l->rms_att + L * l->layer_rms, dim);
    matmul(r->q, r->xb, w + l->wq + L * l->layer_wq, dim, dim);
    matmul(k, r->xb, w + l->wk + L * l->layer_wk, dim, kv_dim);
    matmul(v, r->xb, w + l->wv + L * l->layer_wv, dim, kv_dim);

    /* RoPE: rotate each pair of the query, and of the key where it has one. */
    for (i = 0; i < dim; i += 2) {
      const float val = (float)tf_rope_angle(p, pos, i / 2);
      const float fcr = cosf(val), fci = sinf(val);
      const int rotn = i < kv_dim ? 2 : 1;
      int n;
      for (n = 0; n < rotn; n++) {
        float *vec = n == 0 ? r->q : k;
        const float v0 = vec[i], v1 = vec[i + 1];
        vec[i] = v0 * fcr - v1 * fci;
        vec[i + 1] = v0 * fci + v1 * fcr;
      }
    }

    /* Multihead attention over the cache, heads in parallel. */
#ifdef _OPENMP
#pragma omp parallel for private(h)
#endif
    for (h = 0; h < p->n_heads; h++) {
      const float *q = r->q + h * hs;
      float *att = r->att + (size_t)h * (size_t)p->seq_len;
      float *xb = r->xb + h * hs;
      int t, j;
      for (t = 0; t <= pos; t++) {
        const float *kt =
            r->key_cache + loff + (size_t)t * (size_t)kv_dim + (size_t)(h / kv_mul) * (size_t)hs;
        float score = 0.0f;
        for (j = 0; j < hs; j++) score += q[j] * kt[j];
        att[t] = score / sqrtf((float)hs);
      }
      softmax(att, pos + 1);
      for (j = 0; j < hs; j++) xb[j] = 0.0f;
      for (t = 0; t <= pos; t++) {
        const float *vt =
            r->value_cache + loff + (size_t)t * (size_t)kv_dim + (size_t)(h / kv_mul) * (size_t)hs;
        const float a = att[t];
        for (j = 0; j < hs; j++) xb[j] += a * vt[j];
      }
    }

    matmul(r->xb2, r->xb, w + l->wo + L * l->layer_wo, dim, dim);
    for (i = 0; i < dim; i++) x[i] += r->xb2[i];

    rmsnorm(r->xb, x, w + l->rms_ffn + L * l->layer_rms, dim);
    matmul(r->hb, r->xb, w + l->w1 + L * l->layer_w1, dim, hidden);
    matmul(r->hb2, r->xb, w + l->w3 + L * l->layer_w3, dim, hidden);
    for (i = 0; i < hidden; i++) {
      float val = r->hb[i];
      val *= 1.0f / (1.0f + expf(-val));
      r->hb[i] = val * r->hb2[i];
    }
    matmul(r->xb, r->hb, w + l->w2 + L * l->layer_w2, hidden, dim);
    for (i = 0; i < dim; i++) x[i] += r->xb[i];
  }

  rmsnorm(x, x, w + l->rms_final, dim);
  matmul(r->logits, x, w + l->emb, dim, p->vocab_size);
  return r->logits;
}
