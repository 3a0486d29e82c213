// The C API: each call runs the C++ API and turns a hologram::Error into a status code and
// the thread's last-error message; no exception crosses the C boundary.
#include "c_abi.h"
#include "hologram/hologram.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/runtime/queue.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>

struct hg_backend {
  std::unique_ptr<hologram::Backend> impl;
};
struct hg_program {
  hologram::isa::Module module;
};
struct hg_queue {
  hologram::Queue impl;
};
struct hg_event {
  hologram::Event impl;
};

namespace {

using namespace hologram;

static_assert(static_cast<int>(HG_F64) == static_cast<int>(isa::Type::F64) &&
                  static_cast<int>(HG_I8) == static_cast<int>(isa::Type::I8),
              "hg_type mirrors isa::Type");

thread_local std::string last_error;

std::vector<KernelArg> kernel_args(const hg_arg *args, size_t nargs) {
  std::vector<KernelArg> a;
  for (size_t i = 0; i < nargs; ++i) {
    const hg_arg &x = args[i];
    switch (x.kind) {
    case HG_ARG_BUFFER:
      a.push_back(KernelArg::buffer({x.handle}, x.offset, x.bytes ? x.bytes : KernelArg::kToEnd));
      break;
    case HG_ARG_POOL:
      if (x.offset != 0 || x.bytes != 0)
        throw Error(ErrorCode::InvalidArgument,
                    "argument " + std::to_string(i + 1) +
                        " is a pool with a view's offset or length (views are of buffers)");
      a.push_back(KernelArg::pool({x.handle}));
      break;
    case HG_ARG_SCALAR:
      if (x.type < HG_I8 || x.type > HG_F64)
        throw Error(ErrorCode::InvalidArgument,
                    "argument " + std::to_string(i + 1) + " has an unknown scalar type");
      a.push_back(KernelArg::scalar(static_cast<isa::Type>(x.type), x.bits));
      break;
    default:
      throw Error(ErrorCode::InvalidArgument,
                  "argument " + std::to_string(i + 1) + " has an unknown kind");
    }
  }
  return a;
}

/// Runs `f`, mapping exceptions to status codes.
template <typename F> hg_status guard(F &&f) {
  try {
    f();
    last_error.clear();
    return HG_OK;
  } catch (const Error &e) {
    last_error = e.what();
    return runtime::status_code_of(e.code());
  } catch (const std::bad_alloc &) {
    last_error = "out of memory";
    return HG_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    last_error = std::string("internal error: ") + e.what();
    return HG_ERROR_INTERNAL;
  }
}

void require(const void *p, const char *what) {
  if (!p) throw Error(ErrorCode::InvalidArgument, std::string(what) + " is NULL");
}

Backend &backend_of(hg_backend *b) {
  require(b, "the backend");
  return *b->impl;
}

Queue &queue_of(hg_queue *q) {
  require(q, "the queue");
  return q->impl;
}

/// Hands a command's Event to the caller when it asked for one (`out` may be NULL).
void give_event(Event e, hg_event **out) {
  if (out) *out = new hg_event{std::move(e)};
}

template <typename T> std::span<T> bytes(T *p, uint64_t n, const char *what) {
  if (n) require(p, what);
  return {p, static_cast<size_t>(n)};
}

} // namespace

extern "C" {

const char *hg_last_error(void) {
  return last_error.c_str();
}

hg_status hg_discover(hg_backend_report *out, size_t capacity, size_t *count) {
  return guard([&] {
    require(count, "the count pointer");
    if (capacity) require(out, "the reports");
    auto found = discover();
    *count = found.size();
    for (size_t i = 0; i < found.size() && i < capacity; ++i) {
      hg_backend_report &r = out[i];
      std::snprintf(r.backend, sizeof r.backend, "%s", found[i].backend.c_str());
      std::snprintf(r.device, sizeof r.device, "%s", found[i].device.c_str());
      r.usable = found[i].usable ? 1 : 0;
      std::snprintf(r.reason, sizeof r.reason, "%s", found[i].reason.c_str());
    }
  });
}

hg_status hg_backend_create(const char *preference, hg_backend **out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = nullptr;
    auto impl = create_backend(Preference::parse(preference ? preference : "auto"));
    *out = new hg_backend{std::move(impl)};
  });
}

void hg_backend_destroy(hg_backend *backend) {
  delete backend;
}

hg_status hg_backend_describe(hg_backend *backend, char *out, size_t capacity) {
  return guard([&] {
    auto info = backend_of(backend).device_info();
    std::string s = info.backend + ": " + info.name;
    require(out, "the output buffer");
    if (capacity == 0) throw Error(ErrorCode::InvalidArgument, "the output buffer has no room");
    size_t n = std::min(capacity - 1, s.size());
    std::memcpy(out, s.data(), n);
    out[n] = '\0';
  });
}

hg_status hg_synchronize(hg_backend *backend) {
  return guard([&] { backend_of(backend).synchronize(); });
}

hg_status hg_resonance_get(hg_backend *backend, double out[96]) {
  return guard([&] {
    require(out, "the output array");
    auto r = backend_of(backend).resonance();
    std::copy(r.begin(), r.end(), out);
  });
}
hg_status hg_resonance_set(hg_backend *backend, const double values[96]) {
  return guard([&] {
    require(values, "the values");
    std::array<double, atlas::kNumClasses> r{};
    std::copy(values, values + r.size(), r.begin());
    backend_of(backend).set_resonance(r);
  });
}
hg_status hg_phase_get(hg_backend *backend, uint32_t *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).phase();
  });
}
hg_status hg_phase_set(hg_backend *backend, uint32_t phase) {
  return guard([&] { backend_of(backend).set_phase(phase); });
}
hg_status hg_boundary_write(hg_backend *backend, uint64_t offset, const void *data, uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_to_boundary(
        offset, bytes(static_cast<const std::byte *>(data), n, "the data"));
  });
}
hg_status hg_boundary_read(hg_backend *backend, uint64_t offset, void *out, uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_from_boundary(offset,
                                           bytes(static_cast<std::byte *>(out), n, "the output"));
  });
}

void hg_cpu_set_threads(unsigned threads) {
  runtime::set_cpu_threads(threads);
}
unsigned hg_cpu_threads(void) {
  return runtime::cpu_threads();
}
void hg_cpu_set_isa(const char *isa) {
  runtime::set_cpu_isa(isa ? isa : "");
}

hg_status hg_buffer_allocate(hg_backend *backend, uint64_t n, hg_buffer *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).allocate_buffer(n).id;
  });
}
hg_status hg_buffer_free(hg_backend *backend, hg_buffer b) {
  return guard([&] { backend_of(backend).free_buffer({b}); });
}
hg_status hg_buffer_write(hg_backend *backend, hg_buffer b, uint64_t offset, const void *data,
                          uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_to_buffer({b}, offset,
                                       bytes(static_cast<const std::byte *>(data), n, "the data"));
  });
}
hg_status hg_buffer_read(hg_backend *backend, hg_buffer b, uint64_t offset, void *out, uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_from_buffer({b}, offset,
                                         bytes(static_cast<std::byte *>(out), n, "the output"));
  });
}
hg_status hg_buffer_size(hg_backend *backend, hg_buffer b, uint64_t *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).buffer_size({b});
  });
}

hg_status hg_buffer_create_sub(hg_backend *backend, hg_buffer parent, uint64_t offset,
                               uint64_t bytes, hg_buffer *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).create_sub_buffer({parent}, offset, bytes).id;
  });
}
hg_status hg_buffer_wrap_host(hg_backend *backend, void *memory, uint64_t bytes, hg_buffer *out,
                              int *shared) {
  return guard([&] {
    require(out, "the output pointer");
    require(memory, "the host memory pointer");
    auto h = backend_of(backend).wrap_host_memory({static_cast<std::byte *>(memory), bytes});
    *out = h.buffer.id;
    if (shared) *shared = h.shared ? 1 : 0;
  });
}
hg_status hg_view_alignment(hg_backend *backend, uint64_t *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).device_info().view_alignment;
  });
}

hg_status hg_pool_allocate(hg_backend *backend, uint64_t n, hg_pool *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).allocate_pool(n).id;
  });
}
hg_status hg_pool_free(hg_backend *backend, hg_pool p) {
  return guard([&] { backend_of(backend).free_pool({p}); });
}
hg_status hg_pool_write(hg_backend *backend, hg_pool p, uint64_t offset, const void *data,
                        uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_to_pool({p}, offset,
                                     bytes(static_cast<const std::byte *>(data), n, "the data"));
  });
}
hg_status hg_pool_read(hg_backend *backend, hg_pool p, uint64_t offset, void *out, uint64_t n) {
  return guard([&] {
    backend_of(backend).copy_from_pool({p}, offset,
                                       bytes(static_cast<std::byte *>(out), n, "the output"));
  });
}
hg_status hg_pool_size(hg_backend *backend, hg_pool p, uint64_t *out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = backend_of(backend).pool_size({p});
  });
}

hg_status hg_program_create(const char *text, hg_program **out) {
  return guard([&] {
    require(text, "the program text");
    require(out, "the output pointer");
    *out = nullptr;
    DiagnosticEngine diags;
    auto m = isa::parse_module(text, "<program>", diags);
    if (!m || !isa::verify_module(*m, diags))
      throw Error(ErrorCode::InvalidProgram, diags.to_string());
    *out = new hg_program{std::move(*m)};
  });
}

void hg_program_destroy(hg_program *program) {
  delete program;
}

hg_status hg_execute_program(hg_backend *backend, const hg_program *program, const char *kernel,
                             const hg_launch *launch, const hg_arg *args, size_t nargs) {
  return guard([&] {
    require(program, "the program");
    require(launch, "the launch configuration");
    if (nargs) require(args, "the arguments");
    const isa::Kernel *k = nullptr;
    if (kernel) {
      k = program->module.find_kernel(kernel);
      if (!k)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("the program has no kernel '") + kernel + "'");
    } else {
      if (program->module.kernels.size() != 1)
        throw Error(ErrorCode::InvalidArgument, "the program has several kernels; name one");
      k = &program->module.kernels[0];
    }
    backend_of(backend).execute_program(*k, runtime::launch_config_of(*launch),
                                        kernel_args(args, nargs));
  });
}

hg_status hg_module_load(hg_backend *backend, const char *path, hg_module *out) {
  return guard([&] {
    require(path, "the module path");
    require(out, "the output handle");
    *out = backend_of(backend).load_module(path).id;
  });
}

hg_status hg_module_load_linked(hg_backend *backend, const void *descriptor, hg_module *out) {
  return guard([&] {
    require(descriptor, "the module descriptor");
    require(out, "the output handle");
    *out = backend_of(backend).load_linked_module(descriptor).id;
  });
}

hg_status hg_module_unload(hg_backend *backend, hg_module module) {
  return guard([&] { backend_of(backend).unload_module({module}); });
}

hg_status hg_module_variant(hg_backend *backend, hg_module module, char *out, size_t capacity) {
  return guard([&] {
    require(out, "the output string");
    std::string v = backend_of(backend).module_info({module}).variant;
    if (capacity == 0) throw Error(ErrorCode::InvalidArgument, "an output string of 0 bytes");
    std::snprintf(out, capacity, "%s", v.c_str());
  });
}

hg_status hg_launch_kernel(hg_backend *backend, hg_module module, const char *kernel,
                           const hg_launch *launch, const hg_arg *args, size_t nargs) {
  return guard([&] {
    require(kernel, "the kernel name");
    require(launch, "the launch configuration");
    if (nargs) require(args, "the arguments");
    backend_of(backend).launch({module}, kernel, runtime::launch_config_of(*launch),
                               kernel_args(args, nargs));
  });
}

hg_status hg_queue_create(hg_backend *backend, hg_queue **out) {
  return guard([&] {
    require(out, "the output pointer");
    *out = new hg_queue{Queue(backend_of(backend))};
  });
}

void hg_queue_destroy(hg_queue *queue) {
  delete queue;
}

hg_status hg_queue_buffer_write(hg_queue *queue, hg_buffer b, uint64_t offset, const void *data,
                                uint64_t n, hg_event **event) {
  return guard([&] {
    auto span = bytes(static_cast<const std::byte *>(data), n, "the data");
    give_event(queue_of(queue).copy_to_buffer({b}, offset, span), event);
  });
}

hg_status hg_queue_buffer_read(hg_queue *queue, hg_buffer b, uint64_t offset, void *out, uint64_t n,
                               hg_event **event) {
  return guard([&] {
    auto span = bytes(static_cast<std::byte *>(out), n, "the output");
    give_event(queue_of(queue).copy_from_buffer({b}, offset, span), event);
  });
}

hg_status hg_queue_launch_kernel(hg_queue *queue, hg_module module, const char *kernel,
                                 const hg_launch *launch, const hg_arg *args, size_t nargs,
                                 hg_event **event) {
  return guard([&] {
    require(kernel, "the kernel name");
    require(launch, "the launch configuration");
    if (nargs) require(args, "the arguments");
    give_event(queue_of(queue).launch({module}, kernel, runtime::launch_config_of(*launch),
                                      kernel_args(args, nargs)),
               event);
  });
}

hg_status hg_queue_wait_for(hg_queue *queue, const hg_event *event) {
  return guard([&] {
    require(event, "the event");
    queue_of(queue).wait_for(event->impl);
  });
}

hg_status hg_queue_finish(hg_queue *queue) {
  return guard([&] { queue_of(queue).finish(); });
}

hg_status hg_event_wait(const hg_event *event) {
  return guard([&] {
    require(event, "the event");
    event->impl.wait();
  });
}

int hg_event_ready(const hg_event *event) {
  return !event || event->impl.ready() ? 1 : 0;
}

void hg_event_release(hg_event *event) {
  delete event;
}

} // extern "C"

namespace hologram::runtime {

hg_status status_code_of(ErrorCode c) {
  switch (c) {
  case ErrorCode::Ok: return HG_OK;
  case ErrorCode::InvalidArgument: return HG_ERROR_INVALID_ARGUMENT;
  case ErrorCode::InvalidProgram: return HG_ERROR_INVALID_PROGRAM;
  case ErrorCode::OutOfBounds: return HG_ERROR_OUT_OF_BOUNDS;
  case ErrorCode::DivisionByZero: return HG_ERROR_DIVISION_BY_ZERO;
  case ErrorCode::LaunchFailed: return HG_ERROR_LAUNCH_FAILED;
  case ErrorCode::StepLimitExceeded: return HG_ERROR_STEP_LIMIT;
  case ErrorCode::InvalidHandle: return HG_ERROR_INVALID_HANDLE;
  case ErrorCode::OutOfMemory: return HG_ERROR_OUT_OF_MEMORY;
  case ErrorCode::BackendUnavailable: return HG_ERROR_BACKEND_UNAVAILABLE;
  case ErrorCode::InvalidModule: return HG_ERROR_INVALID_MODULE;
  case ErrorCode::Internal: return HG_ERROR_INTERNAL;
  }
  return HG_ERROR_INTERNAL;
}

} // namespace hologram::runtime
