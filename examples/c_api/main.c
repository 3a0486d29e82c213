/* A C99 program using only the C API (hologram.h): create a backend, load a bundle made by
 * add_hologram_kernel(... BUNDLE), run a softmax over the rows of a small matrix, and show how
 * a failure is reported (a status code and hg_last_error()). */
#include "hologram/hologram.h"

#include <math.h>
#include <stdio.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != HG_OK) {                                                                         \
      fprintf(stderr, "%s failed: %s\n", #call, hg_last_error());                                  \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(void) {
  enum { ROWS = 3, COLS = 4 };
  float x[ROWS * COLS] = {0, 1, 2, 3, 1, 1, 1, 1, -5, 0, 5, 10};
  float y[ROWS * COLS] = {0};
  hg_backend *backend = NULL;
  hg_module module = 0;
  hg_buffer bx = 0, by = 0;
  char device[256];
  char variant[64];
  int r, c;

  CHECK(hg_backend_create("cpu", &backend));
  CHECK(hg_backend_describe(backend, device, sizeof device));
  CHECK(hg_module_load(backend, HOLOGRAM_EXAMPLE_BUNDLE, &module));
  CHECK(hg_module_variant(backend, module, variant, sizeof variant));
  printf("backend %s, module variant %s\n", device, variant);

  CHECK(hg_buffer_allocate(backend, sizeof x, &bx));
  CHECK(hg_buffer_allocate(backend, sizeof y, &by));
  CHECK(hg_buffer_write(backend, bx, 0, x, sizeof x));
  {
    hg_arg args[4];
    hg_launch once = hg_launch_linear(1, 1);
    args[0] = hg_arg_buffer(by);
    args[1] = hg_arg_buffer(bx);
    args[2] = hg_arg_u64(ROWS);
    args[3] = hg_arg_u64(COLS);
    CHECK(hg_launch_kernel(backend, module, "softmax_rows", &once, args, 4));
    /* Misuse is an error code with a message, never a crash. */
    if (hg_launch_kernel(backend, module, "no_such_kernel", &once, args, 4) != HG_OK)
      printf("expected failure: %s\n", hg_last_error());
  }
  CHECK(hg_buffer_read(backend, by, 0, y, sizeof y));
  for (r = 0; r < ROWS; ++r) {
    float sum = 0;
    printf("softmax row %d:", r);
    for (c = 0; c < COLS; ++c) {
      printf(" %.4f", (double)y[r * COLS + c]);
      sum += y[r * COLS + c];
    }
    printf("  (sum %.4f)\n", (double)sum);
    if (fabsf(sum - 1.0f) > 1e-5f) return 1;
  }
  CHECK(hg_buffer_free(backend, bx));
  CHECK(hg_buffer_free(backend, by));
  CHECK(hg_module_unload(backend, module));
  hg_backend_destroy(backend);
  return 0;
}
