/* File: daemon_traced_program.c
 * Layer: test (daemon). A stand-in training job for the on-demand end-to-end test: links
 * libkairos, does nothing kairos-specific beyond ranges and kairos_step(), and relies on
 * KINETO_USE_DAEMON in its environment for tracing (like an unmodified job).
 * usage: daemon_traced_program <max_ms> <step_us> <stop_file>
 * Prints "ready <pid>", steps until max_ms passed or stop_file exists, prints "steps <n>".
 * step_us 0: never steps nor ranges (a launcher or shell tool that inherited the preload),
 * only waits, checking stop_file every 10 ms.
 * Threading: single-threaded. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kairos.h"

static long long NowUs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const long long max_us = atoll(argv[1]) * 1000;
  const long long step_us = atoll(argv[2]);
  const char* stop_file = argv[3];
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  const long long start = NowUs();
  long long steps = 0;
  if (step_us == 0) {
    const struct timespec tick = {0, 10 * 1000 * 1000};
    while (NowUs() - start < max_us && access(stop_file, F_OK) != 0) nanosleep(&tick, NULL);
    printf("steps 0\n");
    return 0;
  }
  while (NowUs() - start < max_us) {
    kairos_range_push("train_step");
    const long long t0 = NowUs();
    while (NowUs() - t0 < step_us) {
    }
    kairos_range_pop();
    kairos_step();
    ++steps;
    if (steps % 4 == 0 && access(stop_file, F_OK) == 0) break;
  }
  printf("steps %lld\n", steps);
  return 0;
}
