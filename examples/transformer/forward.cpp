// See forward.h.
#include "forward.h"

#include <cmath>
#include <numeric>
#include <span>

using hologram::KernelArg;

uint64_t HologramTransformer::align_floats(hologram::Backend &backend) {
  return std::lcm<uint64_t>(backend.device_info().view_alignment, 4) / 4;
}

HologramTransformer::HologramTransformer(hologram::Backend &backend, const std::string &bundle,
                                         const tf_config &c, std::span<float> weights,
                                         const tf_layout &layout)
    : b_(backend), c_(c), l_(layout) {
  module_ = b_.load_module(bundle);
  const uint64_t align = align_floats(b_);
  const uint64_t dim = c.dim, kv_dim = tf_kv_dim(&c), seq = c.seq_len;
  if (weights.size() < layout.total)
    throw hologram::Error(hologram::ErrorCode::InvalidArgument,
                          "the weights hold fewer floats than the layout places");
  auto host = b_.wrap_host_memory(std::as_writable_bytes(weights));
  weights_ = host.buffer;
  weights_shared_ = host.shared;
  auto floats = [&](uint64_t n) { return b_.allocate_buffer(n * sizeof(float)); };
  x_ = floats(dim);
  xb_ = floats(dim);
  xb2_ = floats(dim);
  q_ = floats(dim);
  hb_ = floats(c.hidden_dim);
  hb2_ = floats(c.hidden_dim);
  logits_ = floats(c.vocab_size);
  // Cache rows and table rows start where a view may: padded to the alignment.
  kv_row_ = tf_round_up(kv_dim, align);
  key_cache_ = floats(uint64_t(c.n_layers) * seq * kv_row_);
  value_cache_ = floats(uint64_t(c.n_layers) * seq * kv_row_);
  rope_row_ = tf_round_up(dim / 2, align);
  std::vector<float> cs(seq * rope_row_), sn(seq * rope_row_);
  for (int pos = 0; pos < c.seq_len; ++pos)
    for (int i = 0; i < c.dim / 2; ++i) {
      const double angle = tf_rope_angle(&c, pos, i);
      cs[pos * rope_row_ + i] = static_cast<float>(std::cos(angle));
      sn[pos * rope_row_ + i] = static_cast<float>(std::sin(angle));
    }
  cos_ = floats(cs.size());
  sin_ = floats(sn.size());
  b_.write<float>(cos_, cs);
  b_.write<float>(sin_, sn);
  logits_host_.resize(c.vocab_size);
}

HologramTransformer::~HologramTransformer() {
  for (auto buf :
       {weights_, x_, xb_, xb2_, q_, hb_, hb2_, logits_, key_cache_, value_cache_, cos_, sin_})
    if (buf.id) b_.free_buffer(buf);
  if (module_.id) b_.unload_module(module_);
}

void HologramTransformer::run(const char *kernel, std::initializer_list<KernelArg> args,
                              uint64_t lanes) {
  b_.launch(module_, kernel, hologram::LaunchConfig::linear(lanes, lanes > 1 ? 64 : 1),
            std::span(args.begin(), args.size()));
}

KernelArg HologramTransformer::w(uint64_t first, uint64_t count) const {
  return KernelArg::buffer(weights_, first * sizeof(float), count * sizeof(float));
}

const std::vector<float> &HologramTransformer::forward(int token, int pos) {
  const uint64_t dim = c_.dim, kv_dim = tf_kv_dim(&c_), hidden = c_.hidden_dim;
  const uint64_t hs = tf_head_size(&c_), seq = c_.seq_len;
  auto buf = [](hologram::BufferHandle b) { return KernelArg::buffer(b); };
  auto u64 = [](uint64_t v) { return KernelArg::u64(v); };
  auto cache_rows = [&](hologram::BufferHandle cache, uint64_t layer, uint64_t first,
                        uint64_t rows) {
    return KernelArg::buffer(cache, ((layer * seq + first) * kv_row_) * sizeof(float),
                             ((rows - 1) * kv_row_ + kv_dim) * sizeof(float));
  };
  auto table = [&](hologram::BufferHandle t) {
    return KernelArg::buffer(t, uint64_t(pos) * rope_row_ * sizeof(float), dim / 2 * sizeof(float));
  };

  run("copy", {buf(x_), w(l_.emb + uint64_t(token) * dim, dim), u64(dim)}, dim);
  for (uint64_t L = 0; L < uint64_t(c_.n_layers); ++L) {
    // Attention: q, and this position's key and value straight into the cache.
    run("rmsnorm", {buf(xb_), buf(x_), w(l_.rms_att + L * l_.layer_rms, dim), u64(dim)});
    run("matmul", {buf(q_), w(l_.wq + L * l_.layer_wq, dim * dim), buf(xb_), u64(dim), u64(dim)});
    const KernelArg k = cache_rows(key_cache_, L, pos, 1), v = cache_rows(value_cache_, L, pos, 1);
    run("matmul", {k, w(l_.wk + L * l_.layer_wk, kv_dim * dim), buf(xb_), u64(dim), u64(kv_dim)});
    run("matmul", {v, w(l_.wv + L * l_.layer_wv, kv_dim * dim), buf(xb_), u64(dim), u64(kv_dim)});
    run("rope", {buf(q_), k, table(cos_), table(sin_), u64(dim), u64(kv_dim)});
    run("attention",
        {buf(xb_), buf(q_), cache_rows(key_cache_, L, 0, pos + 1),
         cache_rows(value_cache_, L, 0, pos + 1), u64(c_.n_heads), u64(c_.n_kv_heads), u64(pos + 1),
         u64(hs), u64(kv_row_), KernelArg::f32(1.0f / std::sqrt(static_cast<float>(hs)))});
    run("matmul", {buf(xb2_), w(l_.wo + L * l_.layer_wo, dim * dim), buf(xb_), u64(dim), u64(dim)});
    run("add", {buf(x_), buf(xb2_), u64(dim)});
    // Feed-forward (SwiGLU).
    run("rmsnorm", {buf(xb_), buf(x_), w(l_.rms_ffn + L * l_.layer_rms, dim), u64(dim)});
    run("matmul",
        {buf(hb_), w(l_.w1 + L * l_.layer_w1, hidden * dim), buf(xb_), u64(dim), u64(hidden)});
    run("matmul",
        {buf(hb2_), w(l_.w3 + L * l_.layer_w3, hidden * dim), buf(xb_), u64(dim), u64(hidden)});
    run("swiglu", {buf(hb_), buf(hb2_), u64(hidden)});
    run("matmul",
        {buf(xb_), w(l_.w2 + L * l_.layer_w2, dim * hidden), buf(hb_), u64(hidden), u64(dim)});
    run("add", {buf(x_), buf(xb_), u64(dim)});
  }
  run("rmsnorm", {buf(xb_), buf(x_), w(l_.rms_final, dim), u64(dim)});
  run("matmul", {buf(logits_), w(l_.emb, uint64_t(c_.vocab_size) * dim), buf(xb_), u64(dim),
                 u64(c_.vocab_size)});
  b_.copy_from_buffer(logits_, 0, std::as_writable_bytes(std::span(logits_host_)));
  return logits_host_;
}
