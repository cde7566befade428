/* File: preload_target.c
 * Layer: test/capi. An unmodified program (it does not link libkairos): it busy-waits for
 * argv[1] ms and prints how many threads it has, so the LD_PRELOAD test can check that the
 * preloaded library starts no thread unless a trace is configured. With "range" as argv[2]
 * it first records one range through the preloaded library, found with dlsym (a process
 * that records nothing of its own writes no trace). With "step" it calls kairos_step once
 * (a training process, for the telemetry readiness rule). With "init" it calls
 * kairos_init(NULL) (after chdir to $PRELOAD_TARGET_CHDIR when set) and prints
 * "init=<code> <kairos_last_error()>"; with PRELOAD_TARGET_DLOPEN set it first dlopen()s that
 * libkairos (a run-time load, as Python's); with "race" 8 threads
 * make the process's first control call at once (kairos_init(NULL), the one that loads the
 * core) and it prints "race=<how many returned 0>". With PRELOAD_TARGET_MAPS
 * set it also prints "core=1" when libkairos_core.so (the implementation the libkairos.so
 * shim loads) is mapped into the process at the end, "core=0" when it is not.
 * Threading: single-threaded itself. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kRaceThreads = 8 };
static pthread_barrier_t g_race_barrier;
static int (*g_race_init)(const char*);

static void* RaceThread(void* arg) {
  pthread_barrier_wait(&g_race_barrier);
  *(int*)arg = g_race_init(NULL);
  return NULL;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 0;
  /* PRELOAD_TARGET_DLOPEN: load libkairos at run time (as Python's ctypes does), by this path. */
  const char* open_path = getenv("PRELOAD_TARGET_DLOPEN");
  if (open_path != NULL && dlopen(open_path, RTLD_NOW | RTLD_GLOBAL) == NULL) {
    printf("dlopen: %s\n", dlerror());
    return 4;
  }
  if (argc > 2 && strcmp(argv[2], "range") == 0) {
    void (*push)(const char*) = (void (*)(const char*))dlsym(RTLD_DEFAULT, "kairos_range_push");
    void (*pop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "kairos_range_pop");
    if (push && pop) {
      push("preload_target");
      pop();
    }
  }
  if (argc > 2 && strcmp(argv[2], "step") == 0) {
    void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "kairos_step");
    if (step) step();
  }
  if (argc > 2 && strcmp(argv[2], "init") == 0) {
    /* PRELOAD_TARGET_CHDIR: the program changes directory before its first kairos call. */
    const char* cd = getenv("PRELOAD_TARGET_CHDIR");
    if (cd != NULL && chdir(cd) != 0) return 3;
    int (*init)(const char*) = (int (*)(const char*))dlsym(RTLD_DEFAULT, "kairos_init");
    const char* (*last_error)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "kairos_last_error");
    if (init && last_error) {
      const int rc = init(NULL);
      printf("init=%d %s\n", rc, last_error());
    }
  }
  if (argc > 2 && strcmp(argv[2], "race") == 0) {
    g_race_init = (int (*)(const char*))dlsym(RTLD_DEFAULT, "kairos_init");
    int rc[kRaceThreads];
    pthread_t t[kRaceThreads];
    int ok = 0;
    if (g_race_init != NULL) {
      pthread_barrier_init(&g_race_barrier, NULL, kRaceThreads);
      for (int i = 0; i < kRaceThreads; ++i) pthread_create(&t[i], NULL, RaceThread, &rc[i]);
      for (int i = 0; i < kRaceThreads; ++i) {
        pthread_join(t[i], NULL);
        if (rc[i] == 0) ++ok;
      }
    }
    printf("race=%d\n", ok);
  }
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
  if (getenv("PRELOAD_TARGET_MAPS") != NULL) {
    int core = 0;
    char line[4096];
    FILE* maps = fopen("/proc/self/maps", "r");
    while (maps != NULL && fgets(line, sizeof(line), maps) != NULL)
      if (strstr(line, "/libkairos_core.so") != NULL) core = 1;
    if (maps != NULL) fclose(maps);
    printf("core=%d\n", core);
  }
  return 0;
}
