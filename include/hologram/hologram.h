/* hologram.h: the C API of the hologram runtime. It mirrors the C++ Backend API with status
 * codes; hg_last_error() gives the message of the last failure on the calling thread.
 * Compiles as C99 and C++. */
#ifndef HOLOGRAM_H
#define HOLOGRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes (mirror hologram::ErrorCode). */
typedef enum hg_status {
  HG_OK = 0,
  HG_ERROR_INVALID_ARGUMENT = 1,
  HG_ERROR_INVALID_PROGRAM = 2,
  HG_ERROR_OUT_OF_BOUNDS = 3,
  HG_ERROR_DIVISION_BY_ZERO = 4,
  HG_ERROR_LAUNCH_FAILED = 5,
  HG_ERROR_STEP_LIMIT = 6,
  HG_ERROR_INVALID_HANDLE = 7,
  HG_ERROR_OUT_OF_MEMORY = 8,
  HG_ERROR_BACKEND_UNAVAILABLE = 9,
  HG_ERROR_INVALID_MODULE = 10,
  HG_ERROR_INTERNAL = 100
} hg_status;

typedef struct hg_backend hg_backend; /**< one device */
typedef struct hg_program hg_program; /**< a verified ISA module */
typedef uint64_t hg_buffer;           /**< 0 is never valid */
typedef uint64_t hg_pool;             /**< 0 is never valid */
typedef uint64_t hg_module;           /**< a loaded compiled module; 0 is never valid */

/** Launch geometry: grid (in blocks) and block (in lanes) in three dimensions. The headers
 * hologram-cc generates define the same struct under the same guard. */
#ifndef HG_LAUNCH_DEFINED
#define HG_LAUNCH_DEFINED 1
typedef struct hg_launch {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_memory;
} hg_launch;
#endif

/** Scalar types of kernel arguments (the ISA's types). */
typedef enum hg_type {
  HG_I8 = 1,
  HG_I16,
  HG_I32,
  HG_I64,
  HG_U8,
  HG_U16,
  HG_U32,
  HG_U64,
  HG_F16,
  HG_BF16,
  HG_F32,
  HG_F64
} hg_type;

typedef enum hg_arg_kind { HG_ARG_BUFFER = 0, HG_ARG_POOL = 1, HG_ARG_SCALAR = 2 } hg_arg_kind;

/** One kernel argument, in parameter order. A buffer argument may be a view of its buffer:
 * the bytes [offset, offset + bytes), which the kernel sees as the whole parameter (bytes 0:
 * to the end of the buffer); see hg_arg_buffer_view. */
typedef struct hg_arg {
  hg_arg_kind kind;
  uint64_t handle; /**< buffer or pool */
  hg_type type;    /**< scalar type */
  uint64_t bits;   /**< scalar value bits, zero-extended */
  uint64_t offset; /**< a buffer view's first byte */
  uint64_t bytes;  /**< a buffer view's length; 0: to the end of the buffer */
} hg_arg;

/** The message of the last failure on this thread ("" after a success). */
const char *hg_last_error(void);

/** One backend and device that hg_discover() found, and why it cannot be used when it cannot.
 * Strings are NUL-terminated and cut to their arrays. */
typedef struct hg_backend_report {
  char backend[16]; /**< "vulkan", "opencl", "cuda", "cpu" */
  char device[256]; /**< "" when the backend has no device */
  int usable;       /**< 1 or 0 */
  char reason[512]; /**< why not, or a note ("a CPU device: ..."); "" otherwise */
} hg_backend_report;

/** Every backend this build knows and every device it finds: fills up to `capacity` reports
 * and sets `*count` to how many there are (call with capacity 0 to ask). */
hg_status hg_discover(hg_backend_report *out, size_t capacity, size_t *count);

/** Creates a backend: "auto", a name ("cpu", "interp") or a list ("vulkan,cpu"). When none
 * starts, HG_ERROR_BACKEND_UNAVAILABLE and hg_last_error() lists each candidate's reason. */
hg_status hg_backend_create(const char *preference, hg_backend **out);
void hg_backend_destroy(hg_backend *backend);
/** Writes the chosen backend and device ("cpu: AMD EPYC ...") into `out` (NUL-terminated). */
hg_status hg_backend_describe(hg_backend *backend, char *out, size_t capacity);
hg_status hg_synchronize(hg_backend *backend);

/** The Atlas state (SPEC §4), kept across launches: 96 resonance accumulators, the phase
 * (mod 768) and the boundary pool (96 classes of 12,288 bytes). */
hg_status hg_resonance_get(hg_backend *backend, double out[96]);
hg_status hg_resonance_set(hg_backend *backend, const double values[96]);
hg_status hg_phase_get(hg_backend *backend, uint32_t *out);
hg_status hg_phase_set(hg_backend *backend, uint32_t phase); /**< taken modulo 768 */
hg_status hg_boundary_write(hg_backend *backend, uint64_t offset, const void *data, uint64_t bytes);
hg_status hg_boundary_read(hg_backend *backend, uint64_t offset, void *out, uint64_t bytes);

/** Threads a CPU launch uses, the caller included (0 restores the default:
 * $HOLOGRAM_NUM_THREADS or every hardware thread), and the current count. */
void hg_cpu_set_threads(unsigned threads);
unsigned hg_cpu_threads(void);
/** Caps or forces the x86 variant of CPU modules loaded afterwards, like $HOLOGRAM_CPU_ISA:
 * "v2", "v3", "v4", a CPU name, or "" for automatic choice. */
void hg_cpu_set_isa(const char *isa);

hg_status hg_buffer_allocate(hg_backend *backend, uint64_t bytes, hg_buffer *out);
hg_status hg_buffer_free(hg_backend *backend, hg_buffer buffer);
hg_status hg_buffer_write(hg_backend *backend, hg_buffer buffer, uint64_t offset, const void *data,
                          uint64_t bytes);
hg_status hg_buffer_read(hg_backend *backend, hg_buffer buffer, uint64_t offset, void *out,
                         uint64_t bytes);
hg_status hg_buffer_size(hg_backend *backend, hg_buffer buffer, uint64_t *out);
/** A buffer that is the bytes [offset, offset + bytes) of `parent`, sharing its memory (no
 * copy). `offset` is a multiple of hg_view_alignment(); freeing `parent` first is allowed. */
hg_status hg_buffer_create_sub(hg_backend *backend, hg_buffer parent, uint64_t offset,
                               uint64_t bytes, hg_buffer *out);
/** A buffer over `bytes` bytes of host memory at `memory`, which the application keeps alive
 * until the buffer is freed. `*shared` (may be NULL) is set to 1 when the memory is used in
 * place (launches and copies read and write it), 0 when the device holds a copy made now. */
hg_status hg_buffer_wrap_host(hg_backend *backend, void *memory, uint64_t bytes, hg_buffer *out,
                              int *shared);
/** The alignment, in bytes, of sub-buffer and view offsets on this device. */
hg_status hg_view_alignment(hg_backend *backend, uint64_t *out);

hg_status hg_pool_allocate(hg_backend *backend, uint64_t bytes, hg_pool *out);
hg_status hg_pool_free(hg_backend *backend, hg_pool pool);
hg_status hg_pool_write(hg_backend *backend, hg_pool pool, uint64_t offset, const void *data,
                        uint64_t bytes);
hg_status hg_pool_read(hg_backend *backend, hg_pool pool, uint64_t offset, void *out,
                       uint64_t bytes);
hg_status hg_pool_size(hg_backend *backend, hg_pool pool, uint64_t *out);

/** Parses and verifies Atlas ISA text; diagnostics are in hg_last_error(). */
hg_status hg_program_create(const char *hasm_text, hg_program **out);
void hg_program_destroy(hg_program *program);
/** Runs kernel `kernel` (NULL: the only one) of `program`. */
hg_status hg_execute_program(hg_backend *backend, const hg_program *program, const char *kernel,
                             const hg_launch *launch, const hg_arg *args, size_t nargs);

/** Loads a compiled module: a bundle (hologram-cc --emit=bundle) or, on the CPU backend, a
 * shared object (--emit=shared). A damaged bundle fails with HG_ERROR_INVALID_MODULE. */
hg_status hg_module_load(hg_backend *backend, const char *path, hg_module *out);
/** Loads a module linked into the application: the descriptor `hologram_module_<name>` that
 * an object or archive from hologram-cc (or add_hologram_kernel) defines. */
hg_status hg_module_load_linked(hg_backend *backend, const void *descriptor, hg_module *out);
hg_status hg_module_unload(hg_backend *backend, hg_module module);
/** The code variant the backend runs for a module ("x86-64-v3"), as a C string. */
hg_status hg_module_variant(hg_backend *backend, hg_module module, char *out, size_t capacity);
/** Runs kernel `kernel` of a loaded module; arguments as for hg_execute_program. */
hg_status hg_launch_kernel(hg_backend *backend, hg_module module, const char *kernel,
                           const hg_launch *launch, const hg_arg *args, size_t nargs);

/** Asynchronous queues: each command returns at once and runs after the ones enqueued before
 * it, on a thread of the queue; queues of one backend run at the same time. The memory a copy
 * reads or writes must stay valid until its event is ready; arguments and kernel names are
 * copied. A command's failure is reported by hg_event_wait on its event; the commands after it
 * on its queue are skipped until hg_queue_finish reports the failure. `event` may be NULL when
 * the caller does not want one; otherwise release it with hg_event_release. The backend must
 * outlive its queues; hg_queue_destroy waits for the queue's commands. */
typedef struct hg_queue hg_queue;
typedef struct hg_event hg_event;
hg_status hg_queue_create(hg_backend *backend, hg_queue **out);
void hg_queue_destroy(hg_queue *queue);
hg_status hg_queue_buffer_write(hg_queue *queue, hg_buffer buffer, uint64_t offset,
                                const void *data, uint64_t bytes, hg_event **event);
hg_status hg_queue_buffer_read(hg_queue *queue, hg_buffer buffer, uint64_t offset, void *out,
                               uint64_t bytes, hg_event **event);
hg_status hg_queue_launch_kernel(hg_queue *queue, hg_module module, const char *kernel,
                                 const hg_launch *launch, const hg_arg *args, size_t nargs,
                                 hg_event **event);
/** Makes the commands enqueued on `queue` after this wait for `event` (of any queue). */
hg_status hg_queue_wait_for(hg_queue *queue, const hg_event *event);
/** Waits for every command of the queue; returns the first failure since the last finish. */
hg_status hg_queue_finish(hg_queue *queue);
/** Waits for the command; its failure as a status (message in hg_last_error()). */
hg_status hg_event_wait(const hg_event *event);
/** 1 once the command has run (or failed, or was skipped), else 0. */
int hg_event_ready(const hg_event *event);
void hg_event_release(hg_event *event);

/** Argument helpers. */
static inline hg_arg hg_arg_buffer(hg_buffer b) {
  hg_arg a = {HG_ARG_BUFFER, b, HG_U8, 0, 0, 0};
  return a;
}
/** The bytes [offset, offset + bytes) of buffer b (bytes 0: to its end). */
static inline hg_arg hg_arg_buffer_view(hg_buffer b, uint64_t offset, uint64_t bytes) {
  hg_arg a = {HG_ARG_BUFFER, b, HG_U8, 0, offset, bytes};
  return a;
}
static inline hg_arg hg_arg_pool(hg_pool p) {
  hg_arg a = {HG_ARG_POOL, p, HG_U8, 0, 0, 0};
  return a;
}
static inline hg_arg hg_arg_u32(uint32_t v) {
  hg_arg a = {HG_ARG_SCALAR, 0, HG_U32, v, 0, 0};
  return a;
}
static inline hg_arg hg_arg_i32(int32_t v) {
  hg_arg a = {HG_ARG_SCALAR, 0, HG_I32, (uint32_t)v, 0, 0};
  return a;
}
static inline hg_arg hg_arg_u64(uint64_t v) {
  hg_arg a = {HG_ARG_SCALAR, 0, HG_U64, v, 0, 0};
  return a;
}
static inline hg_arg hg_arg_f32(float v) {
  union {
    float f;
    uint32_t u;
  } c;
  hg_arg a = {HG_ARG_SCALAR, 0, HG_F32, 0, 0, 0};
  c.f = v;
  a.bits = c.u;
  return a;
}
/** One lane per element for n elements, blocks of `block` lanes. */
static inline hg_launch hg_launch_linear(uint64_t n, uint32_t block) {
  hg_launch l = {{1, 1, 1}, {1, 1, 1}, 0};
  if (block == 0) block = 1;
  l.block[0] = block;
  l.grid[0] = (uint32_t)((n + block - 1) / block);
  return l;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HOLOGRAM_H */
