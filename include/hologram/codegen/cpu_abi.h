/* The binary interface between the x86 code that hologram-cc generates and the runtime that
 * runs it (SPEC §7, §10). Plain C so that generated headers, the runtime and the code
 * generator (which mirrors these layouts in LLVM IR) share one definition. */
#ifndef HOLOGRAM_CODEGEN_CPU_ABI_H
#define HOLOGRAM_CODEGEN_CPU_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped whenever a layout below changes; the runtime refuses objects of another version. */
#define HG_CPU_ABI_VERSION 8u

/** What went wrong inside generated code (hg_cpu_error.kind). */
enum hg_cpu_error_kind {
  HG_CPU_ERR_NONE = 0,
  HG_CPU_ERR_DIV_ZERO = 1,         /* -fcheck-div: integer division or remainder by zero */
  HG_CPU_ERR_OUT_OF_BOUNDS = 2,    /* -fbounds-check: offset/size outside region */
  HG_CPU_ERR_CLASS_RANGE = 3,      /* a class operand >= 96 (value) */
  HG_CPU_ERR_PAGE_RANGE = 4,       /* bound.map page >= 48 (value) */
  HG_CPU_ERR_BYTE_RANGE = 5,       /* bound.map byte >= 256 (value) */
  HG_CPU_ERR_CLS_BYTE = 6,         /* cls.get operand > 255 (value) */
  HG_CPU_ERR_CALL_DEPTH = 7,       /* call deeper than 64 */
  HG_CPU_ERR_RET_EMPTY = 8,        /* ret with an empty return stack */
  HG_CPU_ERR_BARRIER_MISMATCH = 9, /* lanes of one block wait at different barriers */
  HG_CPU_ERR_BARRIER_EXITED = 10,  /* a barrier not reached by every lane (lane exited) */
  HG_CPU_ERR_LAUNCH_OP = 11        /* a whole-launch operation failed (message in runtime) */
};

/** Region of an out-of-bounds access (hg_cpu_error.region): a parameter index >= 0, or: */
#define HG_CPU_REGION_SHARED (-1)
#define HG_CPU_REGION_BOUNDARY (-2)
#define HG_CPU_REGION_HANDLE (-3) /* a register whose handle names no region; value: its bits */
#define HG_CPU_REGION_CLASS_BASE (-1000) /* -1000 - class: one class window */
/* -2000 - site: an allocation that pool.alloc site `site` made (1: the kernel's first) */
#define HG_CPU_REGION_SCRATCH_BASE (-2000)

typedef struct hg_cpu_error {
  int32_t kind;   /* hg_cpu_error_kind */
  uint32_t inst;  /* instruction index in the kernel */
  uint64_t lane;  /* global linear lane id */
  uint64_t value; /* the offending value, or the access offset */
  uint64_t size;  /* access size in bytes */
  int32_t region; /* see HG_CPU_REGION_* */
  uint32_t reserved;
} hg_cpu_error;

struct hg_cpu_launch;

/** Runs whole-launch instructions [first, first + count) of a kernel (SPEC §3.8) for generated
 * code: one instruction, or an element-wise chain (hologram/isa/elementwise.h) that the runtime
 * may fuse. `regs` holds the operands of the instructions one after another, the bits of each
 * that is a register; `result` receives the value of a last reduce_all/dot. Returns 0, or,
 * after recording the message in the runtime, 1 + the position in the run of the instruction
 * that failed. */
typedef int32_t (*hg_cpu_launch_op_fn)(const struct hg_cpu_launch *launch, uint32_t kernel,
                                       uint32_t first, uint32_t count, const uint64_t *regs,
                                       uint64_t *result);
/** Converts `bits` of ISA type `src` to ISA type `dst` (f16/bf16 conversions whose source is
 * not f32); types are hologram::isa::Type values. Kernels compiled since 2026-12-05 round these
 * in their own code and do not call it; the runtime still sets it for objects of this ABI
 * version compiled before. */
typedef uint64_t (*hg_cpu_convert_fn)(uint64_t bits, uint32_t dst, uint32_t src);

/** Everything a launch shares between its workers (read-only while it runs). */
typedef struct hg_cpu_launch {
  void *const *args;     /* per parameter: buffer/pool data, or a pointer to 8 bytes of bits */
  const uint64_t *sizes; /* per parameter: buffer/pool size in bytes (0 for scalars) */
  uint32_t grid[3];
  uint32_t block[3];
  uint8_t *boundary;       /* the boundary pool, 1,179,648 bytes */
  double *resonance;       /* 96 values, added to atomically */
  uint64_t *phase_advance; /* phase.adv amounts, added to atomically */
  uint32_t phase;          /* the phase as of the start of the launch */
  uint32_t kernel;         /* the kernel's index in its module */
  hg_cpu_launch_op_fn launch_op;
  hg_cpu_convert_fn convert;
  void *runtime; /* opaque to generated code */
  /* A contiguous store whose launch writes at least this many bytes (the launch's lanes times
   * the element size) bypasses the caches: full chunks at 16-byte aligned addresses store
   * non-temporally, and each hg_cpu_blocks_fn call that did ends with an sfence. 0: never. */
  uint64_t stream_bytes;
} hg_cpu_launch;

/** Per worker thread: memory that one block at a time uses. */
typedef struct hg_cpu_worker {
  void *shared;         /* shared memory of the block, shared_size bytes */
  uint64_t shared_size; /* kernel .shared plus LaunchConfig.shared_memory */
  void *scratch;        /* HG_CPU_SCRATCH_ALIGNMENT-aligned; hg_cpu_scratch_bytes() before
                           alignment (null when that is only the room for alignment) */
  uint64_t scratch_size;
  hg_cpu_error error;
} hg_cpu_worker;

/** Runs blocks [first, end) of a launch. Returns 0, or a negative value with worker->error. */
typedef int32_t (*hg_cpu_blocks_fn)(const hg_cpu_launch *launch, hg_cpu_worker *worker,
                                    uint64_t first, uint64_t end);

/* hg_cpu_kernel_desc.flags */
#define HG_CPU_KERNEL_LAUNCH_LEVEL 1u /* runs once per launch (map, gemm, ...) */
#define HG_CPU_KERNEL_BARRIERS 2u     /* uses bar.sync: blocks run in phases */
#define HG_CPU_KERNEL_ATLAS 4u        /* touches the Atlas state */

typedef struct hg_cpu_kernel_desc {
  const char *name;
  uint32_t flags;
  uint32_t num_params;
  uint32_t shared_bytes;            /* static shared memory (.shared) */
  uint64_t pool_bytes;              /* pool.alloc scratch per lane */
  const hg_cpu_blocks_fn *variants; /* one per module variant */
  const uint32_t *state_bytes_v;    /* per variant: saved state per chunk (barrier kernels) */
  uint32_t block[3];                /* --block: the only block size the code runs; {0, 0, 0}: any */
} hg_cpu_kernel_desc;

/** A SPIR-V module compiled for a Vulkan or OpenCL target alongside the x86 code
 * (add_hologram_kernel's vulkan and opencl TARGETS): what those backends' load_linked_module
 * runs. */
typedef struct hg_spirv_module_desc {
  const char *target;    /* "vulkan1.1", "opencl1.2", ... */
  const uint32_t *words; /* the module */
  uint64_t num_words;
  const char *reflection; /* JSON, as a bundle manifest's SPIR-V payloads carry it */
} hg_spirv_module_desc;

typedef struct hg_cpu_module_desc {
  uint32_t abi_version; /* HG_CPU_ABI_VERSION */
  uint32_t num_kernels;
  const hg_cpu_kernel_desc *kernels;
  uint32_t num_variants;
  const char *const *variant_names;    /* "x86-64-v3", "skylake", ... best first */
  const char *const *variant_features; /* comma-separated CPU features each variant needs */
  const uint32_t *variant_widths;      /* lanes per chunk of each variant */
  const uint8_t *isa;                  /* the module as isa::encode_module_with_locations */
  uint64_t isa_size;                   /* bytes at isa */
  const char *source_name;             /* the file it was compiled from */
  const char *options;                 /* compile options, for the manifest */
  uint32_t num_spirv;                  /* SPIR-V modules for Vulkan and OpenCL (may be 0) */
  const hg_spirv_module_desc *spirv;
} hg_cpu_module_desc;

/** The alignment of hg_cpu_worker.scratch; hg_cpu_scratch_bytes leaves room to align it. */
#define HG_CPU_SCRATCH_ALIGNMENT 64u

/** Scratch a worker needs for one block of `lanes` lanes with a variant of width `width`. */
static inline uint64_t hg_cpu_scratch_bytes(const hg_cpu_kernel_desc *k, uint32_t variant,
                                            uint32_t width, uint64_t lanes) {
  uint64_t chunks;
  if (k->state_bytes_v[variant] == 0 && k->pool_bytes == 0)
    return HG_CPU_SCRATCH_ALIGNMENT; /* no division */
  chunks = (lanes + width - 1) / width;
  return chunks * k->state_bytes_v[variant] + chunks * width * k->pool_bytes +
         HG_CPU_SCRATCH_ALIGNMENT;
}

#ifdef __cplusplus
}
#endif

#endif /* HOLOGRAM_CODEGEN_CPU_ABI_H */
