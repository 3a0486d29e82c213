/* The generated header compiles as strict C99 and its entry points run the kernels linked from
 * the static library that hologram-cc emitted beside it (SPEC §8). */
#include "hologram/hologram.h" /* both define hg_launch, under one guard */
#include "vector.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                          \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

int main(void) {
  enum { N = 1000 };
  static float a[N], b[N], c[N];
  int i;
  hg_launch launch;
  for (i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
  }
  /* launch == NULL: one lane per element, counted by n. */
  EXPECT(vector_add(a, b, c, N, NULL) == 0);
  for (i = 0; i < N; ++i) EXPECT(c[i] == 1.5f * (float)i);

  /* An explicit launch: 4 blocks of 64 lanes cover only the first 256 elements. */
  memset(c, 0, sizeof c);
  memset(&launch, 0, sizeof launch);
  launch.grid[0] = 4;
  launch.grid[1] = launch.grid[2] = 1;
  launch.block[0] = 64;
  launch.block[1] = launch.block[2] = 1;
  EXPECT(vector_mul(a, b, c, N, &launch) == 0);
  EXPECT(c[255] == 255.0f * 127.5f);
  EXPECT(c[256] == 0.0f);

  /* Each thread keeps its last checked launch (kernel, hg_launch bytes or count): calls that
   * repeat one with other arguments, or change the kernel, the count or the launch, run what
   * they ask for. */
  EXPECT(vector_add(b, b, c, N, &launch) == 0); /* same bytes, another kernel */
  EXPECT(c[255] == 255.0f && c[256] == 0.0f);
  EXPECT(vector_add(a, a, c, N, &launch) == 0); /* same kernel and launch, other arguments */
  EXPECT(c[255] == 510.0f && c[256] == 0.0f);
  launch.grid[0] = 5;
  EXPECT(vector_add(a, a, c, N, &launch) == 0); /* another grid */
  EXPECT(c[319] == 638.0f && c[320] == 0.0f);
  memset(c, 0, sizeof c);
  EXPECT(vector_add(a, b, c, 10, NULL) == 0); /* a count after a launch */
  EXPECT(c[9] == 13.5f && c[10] == 0.0f);
  EXPECT(vector_add(a, b, c, 20, NULL) == 0); /* another count */
  EXPECT(c[19] == 28.5f && c[20] == 0.0f);
  EXPECT(vector_add(a, b, c, N, NULL) == 0); /* a count of more blocks */
  EXPECT(c[N - 1] == 1.5f * (float)(N - 1));
  EXPECT(vector_mul(a, b, c, N, NULL) == 0); /* another kernel, the same count */
  EXPECT(c[N - 1] == 0.5f * (float)(N - 1) * (float)(N - 1));
  EXPECT(vector_mul(a, b, c, N, NULL) == 0); /* a repeat, other arguments */
  EXPECT(c[N - 1] == 0.5f * (float)(N - 1) * (float)(N - 1));
  launch.grid[0] = 4;

  /* A kernel named after a C library function gets a suffix instead of clashing with libm. */
  EXPECT(exp_kernel(a, c, 10, NULL) == 0);
  EXPECT(fabs(c[1] - exp(1.0)) < 1e-6);

  /* Metadata. */
  EXPECT(strcmp(vector_add_info.name, "vector_add") == 0);
  EXPECT(vector_add_info.num_params == 4);
  EXPECT(strcmp(vector_add_info.params[2].name, "c") == 0);
  EXPECT(strcmp(vector_add_info.params[2].access, "write") == 0);
  EXPECT(strcmp(vector_add_info.params[3].type, "u32") == 0);
  EXPECT(strstr(vector_add_info.required_features, "sse4.2") != NULL);

  /* A bad launch is an error code with a message, not a crash, every time it is made; the
   * launch made before it still runs. */
  EXPECT(vector_add(a, b, c, N, &launch) == 0);
  launch.block[0] = 0;
  EXPECT(vector_add(a, b, c, N, &launch) != 0);
  EXPECT(strstr(hg_cpu_last_error(), "zero-size") != NULL);
  EXPECT(vector_add(a, b, c, N, &launch) != 0);
  EXPECT(strstr(hg_cpu_last_error(), "zero-size") != NULL);
  launch.block[0] = 64;
  memset(c, 0, sizeof c);
  EXPECT(vector_add(a, b, c, N, &launch) == 0);
  EXPECT(strcmp(hg_cpu_last_error(), "") == 0);
  EXPECT(c[255] == 1.5f * 255.0f && c[256] == 0.0f);

  if (failures == 0) printf("header C99 test passed\n");
  return failures != 0;
}
