// The Halide 14 peers of hologram-bench: each workload as a Halide pipeline with the schedule a
// Halide user writes for it (vectorised at the native width, parallel over blocks or rows,
// rfactor for the reduction), compiled ahead of time for the host by this program at build
// time; softmax also for x86-64-v2 and -v3, the per-level table's peers. Usage: halide-peers
// OUT_DIR. Writes one static library and header per pipeline (no runtime in them) and
// halide_runtime.a, the one runtime they share.
//
// Each pipeline comes twice: NAME, parallel, and NAME_serial, the same schedule without the
// parallel loop, for the one-thread rows. halide_set_num_threads(1) cannot stand in for it:
// worker threads the pool has started keep taking tasks after it.
#include "Halide.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace Halide;

namespace {

Target host_target() {
  return get_host_target().with_feature(Target::NoRuntime);
}

int natural_lanes(const Target &t) {
  return t.natural_vector_size<float>();
}

void emit(Func f, const std::vector<Argument> &args, const std::string &dir,
          const std::string &name, const Target &target = host_target()) {
  f.compile_to_static_library(dir + "/" + name, args, name, target);
}

/// out(x) = body(x) over 1-D f32 buffers: vectorised, parallel over blocks of 16K elements.
void pointwise(const std::string &dir, const std::string &name, const std::vector<ImageParam> &in,
               const std::vector<Argument> &scalars,
               const std::function<Expr(const std::vector<ImageParam> &, Var)> &body) {
  for (bool parallel : {true, false}) {
    Var x("x"), xo("xo"), xi("xi");
    Func out(name + "_out");
    out(x) = body(in, x);
    const int lanes = natural_lanes(host_target());
    out.split(x, xo, xi, 1 << 14, TailStrategy::GuardWithIf)
        .vectorize(xi, lanes * 2, TailStrategy::GuardWithIf);
    if (parallel) out.parallel(xo);
    std::vector<Argument> args(in.begin(), in.end());
    args.insert(args.end(), scalars.begin(), scalars.end());
    emit(out, args, dir, parallel ? name : name + "_serial");
  }
}

void reductions(const std::string &dir, bool parallel) {
  // sum: rfactor over 64K-element blocks (parallel), each block vectorised by a second rfactor
  // over the lanes.
  ImageParam x(Float(32), 1, "x");
  Func total("hl_sum_total");
  RDom r(0, x.width());
  total() = 0.0f;
  total() += x(r);
  RVar ro("ro"), ri("ri"), rio("rio"), rii("rii");
  Var u("u"), w("w");
  const int lanes = natural_lanes(host_target());
  total.update().split(r.x, ro, ri, 1 << 16, TailStrategy::GuardWithIf);
  Func blocks = total.update().rfactor(ro, u);
  blocks.compute_root();
  if (parallel) blocks.update().parallel(u);
  blocks.update().split(ri, rio, rii, lanes * 4, TailStrategy::GuardWithIf);
  Func vec = blocks.update().rfactor(rii, w);
  vec.compute_at(blocks, u).vectorize(w).update().vectorize(w);
  emit(total, {x}, dir, parallel ? "hl_sum" : "hl_sum_serial");
}

/// softmax over the rows of a [cols, rows] buffer (x fastest), for `target`: one parallel loop
/// over rows.
void softmax_rows(const std::string &dir, bool parallel, const Target &target,
                  const std::string &name) {
  const int lanes = natural_lanes(target);
  ImageParam in(Float(32), 2, "x");
  Var c("c"), r("r");
  RDom k(0, in.width());
  Func mx("mx"), e("e"), sum("sum"), out("hl_softmax_out");
  mx(r) = maximum(in(k, r));
  e(c, r) = exp(in(c, r) - mx(r));
  sum(r) = 0.0f;
  sum(r) += e(k, r);
  out(c, r) = e(c, r) / sum(r);
  out.vectorize(c, lanes, TailStrategy::GuardWithIf);
  if (parallel) out.parallel(r);
  mx.compute_at(out, r);
  e.compute_at(out, r).vectorize(c, lanes, TailStrategy::GuardWithIf);
  sum.compute_at(out, r);
  emit(out, {in}, dir, name + (parallel ? "" : "_serial"), target);
}

/// Row operations over a [cols, rows] buffer (x fastest): one parallel loop over rows.
void rows(const std::string &dir, bool parallel) {
  const std::string suffix = parallel ? "" : "_serial";
  const int lanes = natural_lanes(host_target());
  softmax_rows(dir, parallel, host_target(), "hl_softmax_rows");
  {
    ImageParam in(Float(32), 2, "x"), g(Float(32), 1, "g");
    Var c("c"), r("r");
    RDom k(0, in.width());
    Func sq("sq"), out("hl_rmsnorm_out");
    sq(r) = 0.0f;
    sq(r) += in(k, r) * in(k, r);
    Expr inv = 1.0f / sqrt(sq(r) / cast<float>(in.width()) + 1e-5f);
    out(c, r) = in(c, r) * inv * g(c);
    out.vectorize(c, lanes, TailStrategy::GuardWithIf);
    if (parallel) out.parallel(r);
    sq.compute_at(out, r);
    emit(out, {in, g}, dir, "hl_rmsnorm_rows" + suffix);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: halide-peers OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  using In = std::vector<ImageParam>;
  ImageParam a(Float(32), 1, "a"), b(Float(32), 1, "b");
  Param<float> alpha("alpha");
  pointwise(dir, "hl_vector_add", {a, b}, {}, [](const In &p, Var x) { return p[0](x) + p[1](x); });
  pointwise(dir, "hl_saxpy", {a, b}, {alpha},
            [&](const In &p, Var x) { return alpha * p[0](x) + p[1](x); });
  pointwise(dir, "hl_sigmoid", {a}, {},
            [](const In &p, Var x) { return 1.0f / (1.0f + exp(-p[0](x))); });
  pointwise(dir, "hl_sigmoid_fast_exp", {a}, {},
            [](const In &p, Var x) { return 1.0f / (1.0f + fast_exp(-p[0](x))); });
  pointwise(dir, "hl_silu", {a}, {},
            [](const In &p, Var x) { return p[0](x) / (1.0f + exp(-p[0](x))); });
  pointwise(dir, "hl_swiglu", {a, b}, {},
            [](const In &p, Var x) { return p[0](x) / (1.0f + exp(-p[0](x))) * p[1](x); });
  pointwise(dir, "hl_gelu", {a}, {}, [](const In &p, Var x) {
    return 0.5f * p[0](x) * (1.0f + erf(p[0](x) * 0.70710678f));
  });
  pointwise(dir, "hl_exp", {a}, {}, [](const In &p, Var x) { return exp(p[0](x)); });
  pointwise(dir, "hl_exp_fast_exp", {a}, {}, [](const In &p, Var x) { return fast_exp(p[0](x)); });
  pointwise(dir, "hl_log", {a}, {}, [](const In &p, Var x) { return log(p[0](x)); });
  pointwise(dir, "hl_log_fast_log", {a}, {}, [](const In &p, Var x) { return fast_log(p[0](x)); });
  pointwise(dir, "hl_tanh", {a}, {}, [](const In &p, Var x) { return tanh(p[0](x)); });
  pointwise(dir, "hl_sin", {a}, {}, [](const In &p, Var x) { return sin(p[0](x)); });
  // softmax again for each x86 level below AVX-512's (x86-64-v2: SSE4.1 is Halide's nearest
  // feature; x86-64-v3: AVX2 and FMA): the per-level table's peers (scripts/bench.sh).
  const Target v2 = Target("x86-64-linux-sse41").with_feature(Target::NoRuntime);
  const Target v3 = v2.with_feature(Target::AVX)
                        .with_feature(Target::AVX2)
                        .with_feature(Target::FMA)
                        .with_feature(Target::F16C);
  for (bool parallel : {true, false}) {
    reductions(dir, parallel);
    rows(dir, parallel);
    softmax_rows(dir, parallel, v2, "hl_softmax_rows_v2");
    softmax_rows(dir, parallel, v3, "hl_softmax_rows_v3");
  }
  compile_standalone_runtime(dir + "/halide_runtime.a",
                             get_host_target().without_feature(Target::NoRuntime));
  return 0;
}
