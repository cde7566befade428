/* File: preload_target.c
 * Layer: test/capi. An unmodified program (it does not link libkairos): it busy-waits for
 * argv[1] ms and prints how many threads it has, so the LD_PRELOAD test can check that the
 * preloaded library starts no thread unless a trace is configured.
 * Threading: single-threaded itself. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
  int threads = 0;
  DIR* d = opendir("/proc/self/task");
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL) if (e->d_name[0] != '.') ++threads;
    closedir(d);
  }
  printf("threads=%d\n", threads);
  return 0;
}
