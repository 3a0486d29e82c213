/* The C API from C99: every call's status, hg_last_error(), launches, pools, discovery, the Atlas
 * state, the CPU controls and a module linked into this program (vector.h, libvector.a).
 * Prints the "N passed, N failed" line that ctest's log shows. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "hologram/hologram.h"
#include "vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond) {                                                                                    \
      ++passed;                                                                                    \
    } else {                                                                                       \
      ++failed;                                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond,     \
              hg_last_error());                                                                    \
    }                                                                                              \
  } while (0)

static const char *kProgram = ".kernel vector_add\n"
                              ".param %a : buffer<f32> read\n"
                              ".param %b : buffer<f32> read\n"
                              ".param %c : buffer<f32> write\n"
                              ".param %n : u32\n"
                              "  param.u32 r1, %n\n"
                              "  cvt.u64.u32 r2, r1\n"
                              "  setge.u64 p0, %gid, r2\n"
                              "  bra p0 @done\n"
                              "  ld.f32 r3, [%a + %gid*4]\n"
                              "  ld.f32 r4, [%b + %gid*4]\n"
                              "  add.f32 r5, r3, r4\n"
                              "  st.f32 [%c + %gid*4], r5\n"
                              "@done:\n"
                              "  exit\n";

int main(void) {
  hg_backend *backend = NULL;
  hg_program *program = NULL;
  hg_buffer a, b, c;
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, out[4] = {0};
  hg_arg args[4];
  hg_launch launch = hg_launch_linear(4, 2);
  char name[256];
  uint64_t size = 0;

  /* An OpenCL that cannot load our programs (IL forced on drivers without it) is refused. */
  setenv("HOLOGRAM_OPENCL_PROGRAMS", "il", 1);
  CHECK(hg_backend_create("opencl", &backend) == HG_ERROR_BACKEND_UNAVAILABLE);
  CHECK(strstr(hg_last_error(), "opencl") != NULL);
  unsetenv("HOLOGRAM_OPENCL_PROGRAMS");
  CHECK(hg_backend_create("auto", &backend) == HG_OK && backend != NULL);
  CHECK(hg_backend_describe(backend, name, sizeof name) == HG_OK && strncmp(name, "cpu: ", 5) == 0);

  CHECK(hg_buffer_allocate(backend, 16, &a) == HG_OK);
  CHECK(hg_buffer_allocate(backend, 16, &b) == HG_OK);
  CHECK(hg_buffer_allocate(backend, 16, &c) == HG_OK);
  CHECK(hg_buffer_write(backend, a, 0, x, sizeof x) == HG_OK);
  CHECK(hg_buffer_write(backend, b, 0, y, sizeof y) == HG_OK);
  CHECK(hg_buffer_size(backend, a, &size) == HG_OK && size == 16);
  CHECK(hg_buffer_write(backend, a, 8, x, sizeof x) == HG_ERROR_OUT_OF_BOUNDS);
  CHECK(strstr(hg_last_error(), "outside buffer") != NULL);
  CHECK(hg_buffer_read(backend, 4242, 0, out, 4) == HG_ERROR_INVALID_HANDLE);
  CHECK(hg_buffer_read(backend, a, 0, NULL, 4) == HG_ERROR_INVALID_ARGUMENT);

  CHECK(hg_program_create(".kernel k\n  add.f32 r1, r2, r2\n", &program) ==
        HG_ERROR_INVALID_PROGRAM);
  CHECK(strstr(hg_last_error(), "r2 may be read before it is written") != NULL);
  CHECK(hg_program_create(kProgram, &program) == HG_OK);

  args[0] = hg_arg_buffer(a);
  args[1] = hg_arg_buffer(b);
  args[2] = hg_arg_buffer(c);
  args[3] = hg_arg_f32(4.0f);
  CHECK(hg_execute_program(backend, program, NULL, &launch, args, 4) == HG_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(hg_last_error(), "is u32, got f32") != NULL);
  args[3] = hg_arg_u32(4);
  CHECK(hg_execute_program(backend, program, "vector_add", &launch, args, 4) == HG_OK);
  CHECK(hg_synchronize(backend) == HG_OK);
  CHECK(hg_buffer_read(backend, c, 0, out, sizeof out) == HG_OK);
  CHECK(out[0] == 11 && out[1] == 22 && out[2] == 33 && out[3] == 44);
  CHECK(strcmp(hg_last_error(), "") == 0);

  CHECK(hg_buffer_free(backend, a) == HG_OK);
  CHECK(hg_buffer_free(backend, a) == HG_ERROR_INVALID_HANDLE);
  CHECK(hg_execute_program(backend, program, NULL, &launch, args, 4) == HG_ERROR_INVALID_HANDLE);
  CHECK(strstr(hg_last_error(), "was freed") != NULL);

  /* A compiled module: load it, see which variant runs, launch a kernel. */
  {
    hg_module m = 0;
    char variant[32];
    float xs[3] = {-1.0f, 0.0f, 2.0f}, ys[3] = {0, 0, 0};
    hg_buffer mx, my;
    hg_arg margs[3];
    hg_launch one = hg_launch_linear(3, 64);
    CHECK(hg_module_load(backend, "/nonexistent.so", &m) == HG_ERROR_INVALID_MODULE);
    CHECK(strstr(hg_last_error(), "/nonexistent.so") != NULL);
    CHECK(hg_module_load(backend, HOLOGRAM_TEST_MODULE, &m) == HG_OK);
    CHECK(hg_module_variant(backend, m, variant, sizeof variant) == HG_OK);
    CHECK(strncmp(variant, "x86-64-v", 8) == 0);
    CHECK(hg_buffer_allocate(backend, sizeof xs, &mx) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof ys, &my) == HG_OK);
    CHECK(hg_buffer_write(backend, mx, 0, xs, sizeof xs) == HG_OK);
    margs[0] = hg_arg_buffer(mx);
    margs[1] = hg_arg_buffer(my);
    margs[2] = hg_arg_u32(3);
    CHECK(hg_launch_kernel(backend, m, "relu", &one, margs, 3) == HG_OK);
    CHECK(hg_buffer_read(backend, my, 0, ys, sizeof ys) == HG_OK);
    CHECK(ys[0] == 0.0f && ys[1] == 0.0f && ys[2] == 2.0f);
    CHECK(hg_launch_kernel(backend, m, "nope", &one, margs, 3) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "no kernel 'nope'") != NULL);
    CHECK(hg_module_unload(backend, m) == HG_OK);
    CHECK(hg_launch_kernel(backend, m, "relu", &one, margs, 3) == HG_ERROR_INVALID_HANDLE);
  }

  /* Discovery: every backend, the CPU usable; a count without reports; NULL count refused. */
  {
    hg_backend_report reports[16];
    size_t count = 0, i;
    int cpu = 0;
    CHECK(hg_discover(NULL, 0, &count) == HG_OK && count >= 3);
    CHECK(hg_discover(reports, 16, &count) == HG_OK);
    for (i = 0; i < count && i < 16; ++i)
      cpu |= strcmp(reports[i].backend, "cpu") == 0 && reports[i].usable == 1;
    CHECK(cpu);
    CHECK(hg_discover(reports, 16, NULL) == HG_ERROR_INVALID_ARGUMENT);
  }

  /* The Atlas state: resonance, phase (mod 768), the boundary pool and its range. */
  {
    double r[96] = {0}, back[96] = {0};
    uint32_t phase = 0;
    unsigned char data[4] = {1, 2, 3, 4}, got[4] = {0};
    r[5] = 1.5;
    CHECK(hg_resonance_set(backend, r) == HG_OK);
    CHECK(hg_resonance_get(backend, back) == HG_OK && back[5] == 1.5 && back[6] == 0.0);
    CHECK(hg_phase_set(backend, 770) == HG_OK);
    CHECK(hg_phase_get(backend, &phase) == HG_OK && phase == 2);
    CHECK(hg_boundary_write(backend, 100, data, 4) == HG_OK);
    CHECK(hg_boundary_read(backend, 100, got, 4) == HG_OK && memcmp(got, data, 4) == 0);
    CHECK(hg_boundary_read(backend, 96 * 12288, got, 4) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(hg_resonance_get(backend, NULL) == HG_ERROR_INVALID_ARGUMENT);
  }

  /* CPU controls: the thread count, and the variant cap for modules loaded afterwards. */
  {
    hg_module m = 0;
    char variant[32];
    hg_cpu_set_threads(1);
    CHECK(hg_cpu_threads() == 1);
    hg_cpu_set_threads(0);
    CHECK(hg_cpu_threads() >= 1);
    hg_cpu_set_isa("v2");
    CHECK(hg_module_load(backend, HOLOGRAM_TEST_MODULE, &m) == HG_OK);
    CHECK(hg_module_variant(backend, m, variant, sizeof variant) == HG_OK &&
          strcmp(variant, "x86-64-v2") == 0);
    CHECK(hg_module_unload(backend, m) == HG_OK);
    hg_cpu_set_isa("");
  }

  /* A module linked into this program, launched through the backend. */
  {
    hg_module m = 0;
    float xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30}, zs[3] = {0};
    hg_buffer bx, by, bz;
    hg_arg largs[4];
    hg_launch three = hg_launch_linear(3, 64);
    CHECK(hg_module_load_linked(backend, &hologram_module_vector, &m) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof xs, &bx) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof ys, &by) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof zs, &bz) == HG_OK);
    CHECK(hg_buffer_write(backend, bx, 0, xs, sizeof xs) == HG_OK);
    CHECK(hg_buffer_write(backend, by, 0, ys, sizeof ys) == HG_OK);
    largs[0] = hg_arg_buffer(bx);
    largs[1] = hg_arg_buffer(by);
    largs[2] = hg_arg_buffer(bz);
    largs[3] = hg_arg_u32(3);
    CHECK(hg_launch_kernel(backend, m, "vector_add", &three, largs, 4) == HG_OK);
    CHECK(hg_buffer_read(backend, bz, 0, zs, sizeof zs) == HG_OK);
    CHECK(zs[0] == 11 && zs[1] == 22 && zs[2] == 33);
    CHECK(hg_module_load_linked(backend, NULL, &m) == HG_ERROR_INVALID_ARGUMENT);
  }

  /* Views, sub-buffers and host memory: the kernel writes the middle of a buffer it sees
   * through a view, a sub-buffer shares its parent's memory, host memory is used in place. */
  {
    float xs[2] = {1, 2}, ys[2] = {3, 4}, host[8] = {0}, whole[8] = {0};
    uint64_t align = 0, bytes = 0;
    hg_buffer bx, by, big, sub, wrapped;
    hg_arg vargs[4];
    hg_launch two = hg_launch_linear(2, 2);
    int shared = -1;
    CHECK(hg_view_alignment(backend, &align) == HG_OK && align == 1);
    CHECK(hg_buffer_allocate(backend, sizeof xs, &bx) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof ys, &by) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof whole, &big) == HG_OK);
    CHECK(hg_buffer_write(backend, bx, 0, xs, sizeof xs) == HG_OK);
    CHECK(hg_buffer_write(backend, by, 0, ys, sizeof ys) == HG_OK);
    vargs[0] = hg_arg_buffer(bx);
    vargs[1] = hg_arg_buffer(by);
    vargs[2] = hg_arg_buffer_view(big, 8, 8);
    vargs[3] = hg_arg_u32(2);
    CHECK(hg_execute_program(backend, program, NULL, &two, vargs, 4) == HG_OK);
    CHECK(hg_buffer_read(backend, big, 0, whole, sizeof whole) == HG_OK);
    CHECK(whole[1] == 0 && whole[2] == 4 && whole[3] == 6 && whole[4] == 0);
    vargs[2] = hg_arg_buffer_view(big, 28, 8);
    CHECK(hg_execute_program(backend, program, NULL, &two, vargs, 4) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(hg_buffer_create_sub(backend, big, 16, 8, &sub) == HG_OK);
    CHECK(hg_buffer_size(backend, sub, &bytes) == HG_OK && bytes == 8);
    CHECK(hg_buffer_read(backend, sub, 0, xs, 8) == HG_OK && xs[0] == 0 && xs[1] == 0);
    CHECK(hg_buffer_create_sub(backend, big, 16, 32, &sub) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(hg_buffer_wrap_host(backend, host, sizeof host, &wrapped, &shared) == HG_OK);
    CHECK(shared == 1);
    vargs[2] = hg_arg_buffer_view(wrapped, 4, 0); /* 0 bytes: to the end */
    CHECK(hg_execute_program(backend, program, NULL, &two, vargs, 4) == HG_OK);
    CHECK(host[0] == 0 && host[1] == 4 && host[2] == 6 && host[3] == 0);
    CHECK(hg_buffer_wrap_host(backend, NULL, 8, &wrapped, NULL) == HG_ERROR_INVALID_ARGUMENT);
    vargs[0] = hg_arg_pool(1);
    vargs[0].offset = 4;
    CHECK(hg_execute_program(backend, program, NULL, &two, vargs, 4) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "views are of buffers") != NULL);
  }

  /* A queue: the copies and the launch return at once; the events say when they have run. */
  {
    hg_module m = 0;
    hg_queue *q = NULL;
    hg_event *launched = NULL, *read = NULL, *bad = NULL;
    float xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30}, zs[3] = {0};
    hg_buffer bx, by, bz;
    hg_arg qargs[4];
    hg_launch three = hg_launch_linear(3, 64);
    CHECK(hg_module_load_linked(backend, &hologram_module_vector, &m) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof xs, &bx) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof ys, &by) == HG_OK);
    CHECK(hg_buffer_allocate(backend, sizeof zs, &bz) == HG_OK);
    CHECK(hg_queue_create(backend, &q) == HG_OK && q != NULL);
    CHECK(hg_queue_buffer_write(q, bx, 0, xs, sizeof xs, NULL) == HG_OK);
    CHECK(hg_queue_buffer_write(q, by, 0, ys, sizeof ys, NULL) == HG_OK);
    qargs[0] = hg_arg_buffer(bx);
    qargs[1] = hg_arg_buffer(by);
    qargs[2] = hg_arg_buffer(bz);
    qargs[3] = hg_arg_u32(3);
    CHECK(hg_queue_launch_kernel(q, m, "vector_add", &three, qargs, 4, &launched) == HG_OK);
    CHECK(hg_queue_buffer_read(q, bz, 0, zs, sizeof zs, &read) == HG_OK);
    CHECK(hg_event_wait(read) == HG_OK && hg_event_ready(launched) == 1);
    CHECK(zs[0] == 11 && zs[1] == 22 && zs[2] == 33);
    /* A failing command: its event reports it, and finish returns it once. */
    CHECK(hg_queue_buffer_read(q, bz, 8, zs, sizeof zs, &bad) == HG_OK);
    CHECK(hg_event_wait(bad) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(strstr(hg_last_error(), "outside buffer") != NULL);
    CHECK(hg_queue_finish(q) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(hg_queue_finish(q) == HG_OK);
    CHECK(hg_queue_wait_for(q, NULL) == HG_ERROR_INVALID_ARGUMENT);
    hg_event_release(launched);
    hg_event_release(read);
    hg_event_release(bad);
    hg_queue_destroy(q);
    CHECK(hg_queue_create(NULL, &q) == HG_ERROR_INVALID_ARGUMENT);
  }

  /* Pools: byte arrays for pool parameters; written, read, sized, freed, and a kernel that
   * writes into one at an offset its lanes compute. */
  {
    static const char *kPoolProgram = ".kernel stamp\n"
                                      ".param %p : pool\n"
                                      "  cvt.u32.u64 r1, %gid\n"
                                      "  mov.imm.u64 r4, 4\n"
                                      "  mul.u64 r2, %gid, r4\n"
                                      "  mov.imm.u32 r5, 100\n"
                                      "  add.u32 r3, r1, r5\n"
                                      "  pool.st.u32 [%pool:p + r2], r3\n"
                                      "  exit\n";
    hg_program *stamp = NULL;
    hg_pool pool = 0;
    hg_arg parg[1];
    hg_launch four = hg_launch_linear(4, 4);
    uint32_t words[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0};
    CHECK(hg_pool_allocate(backend, sizeof words, &pool) == HG_OK && pool != 0);
    CHECK(hg_pool_size(backend, pool, &size) == HG_OK && size == sizeof words);
    CHECK(hg_pool_write(backend, pool, 0, words, sizeof words) == HG_OK);
    CHECK(hg_pool_read(backend, pool, 8, back, 8) == HG_OK && back[0] == 3 && back[1] == 4);
    CHECK(hg_pool_write(backend, pool, 16, words, 16) == HG_ERROR_OUT_OF_BOUNDS);
    CHECK(hg_pool_read(backend, pool, 0, NULL, 4) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(hg_pool_size(backend, pool, NULL) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(hg_pool_allocate(backend, 16, NULL) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(hg_pool_read(backend, 4242, 0, back, 4) == HG_ERROR_INVALID_HANDLE);
    CHECK(hg_program_create(kPoolProgram, &stamp) == HG_OK);
    parg[0] = hg_arg_pool(pool);
    CHECK(hg_execute_program(backend, stamp, NULL, &four, parg, 1) == HG_OK);
    CHECK(hg_pool_read(backend, pool, 0, back, sizeof back) == HG_OK);
    CHECK(back[0] == 100 && back[1] == 101 && back[2] == 102 && back[3] == 103 && back[4] == 5 &&
          back[5] == 6);
    /* A buffer where the kernel takes a pool is refused, naming the parameter. */
    parg[0] = hg_arg_buffer(a);
    CHECK(hg_execute_program(backend, stamp, NULL, &four, parg, 1) == HG_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "%p") != NULL);
    CHECK(hg_pool_free(backend, pool) == HG_OK);
    CHECK(hg_pool_free(backend, pool) == HG_ERROR_INVALID_HANDLE);
    CHECK(hg_pool_size(backend, pool, &size) == HG_ERROR_INVALID_HANDLE);
    hg_program_destroy(stamp);
  }

  hg_program_destroy(program);
  hg_backend_destroy(backend);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
