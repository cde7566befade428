/* File: train.c
 * Layer: examples/train_c. A C program that imitates a training loop: a data-loader thread
 * produces batches, the main thread runs forward / backward / optimizer ranges and calls
 * the optimizer hooks, so kairos records an iteration window (ProfilerStep#N) and writes a
 * Kineto-compatible trace. The window comes from the environment (KAIROS_CONFIG_TEXT,
 * KAIROS_CONFIG or KINETO_CONFIG) or, if none is set, from the kairos_init() text below.
 * Threading: main thread = training loop; one loader thread; they hand batches over through
 * a mutex/condition variable queue.
 * Usage: train_c [iterations]   (default 20)
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kairos.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_ready = 0;  /* batches produced and not consumed yet (at most kPrefetch) */
enum { kPrefetch = 2 };
static int g_total = 0;  /* batches the loader must produce */

static void spin_us(long us) { /* stands in for real compute; keeps the CPU busy */
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void* loader(void* arg) {
  (void)arg;
  for (int i = 0; i < g_total; ++i) {
    kairos_range_push("DataLoader.next");
    spin_us(300);
    kairos_range_pop();
    pthread_mutex_lock(&g_mu);
    while (g_ready >= kPrefetch) pthread_cond_wait(&g_cv, &g_mu);
    ++g_ready;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 20;
  if (iterations < 1) iterations = 1;
  if (kairos_version() != KAIROS_VERSION_NUMBER) {
    fprintf(stderr, "train_c: header/library version mismatch\n");
    return 1;
  }
  /* Record iterations 5..9 unless the environment configures a window. */
  int rc = kairos_init(getenv("KAIROS_CONFIG_TEXT") || getenv("KAIROS_CONFIG") || getenv("KINETO_CONFIG")
                           ? NULL
                           : "PROFILE_START_ITERATION=5\nACTIVITIES_ITERATIONS=5\n"
                             "ACTIVITIES_WARMUP_ITERATIONS=1\n");
  if (rc != KAIROS_OK) fprintf(stderr, "train_c: kairos_init: %s\n", kairos_last_error());
  kairos_set_metadata("example", "train_c");

  g_total = iterations;
  pthread_t th;
  pthread_create(&th, NULL, loader, NULL);
  for (int it = 0; it < iterations; ++it) {
    kairos_range_push("wait_for_batch");
    pthread_mutex_lock(&g_mu);
    while (g_ready == 0) pthread_cond_wait(&g_cv, &g_mu);
    --g_ready;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    kairos_range_pop();

    kairos_range_push("forward");
    for (int layer = 0; layer < 3; ++layer) {
      char name[32];
      snprintf(name, sizeof(name), "layer%d.forward", layer); /* a temporary name: fine */
      kairos_range_push(name);
      spin_us(200);
      kairos_range_pop();
    }
    kairos_range_pop();
    kairos_range_push("backward");
    spin_us(700);
    kairos_range_pop();
    kairos_optimizer_pre_step();
    spin_us(150);
    kairos_optimizer_post_step(); /* closes "Optimizer.step" and counts the iteration */
  }
  pthread_join(th, NULL);

  const char* path = kairos_flush();
  if (path == NULL) {
    fprintf(stderr, "train_c: no trace: %s (%s)\n", kairos_last_error(),
            kairos_status_string(KAIROS_ERR_NOT_FOUND));
    kairos_shutdown();
    return 2;
  }
  printf("trace: %s\n", path);
  kairos_shutdown();
  return 0;
}
