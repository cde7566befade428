/* File: signal_target.c
 * Layer: test/capi. A program that loads libkairos.so with dlopen (argv[1]), opens a window
 * (log file argv[2]), records one range and sends itself SIGTERM. argv[3] picks a variant:
 *   chain     first installs its own SIGTERM handler, which writes argv[2].chained and exits
 *             with 7: KAIROS_FLUSH_ON_SIGNAL must write the trace and then run that handler.
 *   metadata  a second thread calls kairos_set_metadata in a loop and the SIGTERM is sent to
 *             that thread: the flush needs the session mutex it may hold. (When each call
 *             scanned every key under the mutex, this hung for the whole 61 s bound every
 *             time; calls are constant-time now, so the mutex is held for less of the loop.)
 *   names     the same with kairos_range_push of a new name each time (the thread's name
 *             table lock held while it interns).
 * Threading: main thread, plus the looping thread of metadata/names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char g_marker[4096];
static int (*g_set_metadata)(const char*, const char*);
static void (*g_push)(const char*);
static void (*g_pop)(void);
static volatile int g_looping;

static void OnTerm(int sig) {
  (void)sig;
  int fd = open(g_marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
  _exit(7);
}

static void* MetadataLoop(void* arg) {
  (void)arg;
  char key[32];
  for (unsigned i = 0;; ++i) {
    snprintf(key, sizeof(key), "k%u", i % 1000);
    g_set_metadata(key, "value");
    g_looping = 1;
  }
  return NULL;
}

static void* NamesLoop(void* arg) {
  (void)arg;
  char name[48];
  for (unsigned i = 0;; ++i) {
    snprintf(name, sizeof(name), "range_with_a_new_name_%u", i);
    g_push(name);
    g_pop();
    g_looping = 1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* mode = argc > 3 ? argv[3] : "";
  snprintf(g_marker, sizeof(g_marker), "%s.chained", argv[2]);
  if (strcmp(mode, "chain") == 0) signal(SIGTERM, OnTerm);
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) return 3;
  int (*init)(const char*) = (int (*)(const char*))dlsym(lib, "kairos_init");
  int (*start)(void) = (int (*)(void))dlsym(lib, "kairos_start");
  g_push = (void (*)(const char*))dlsym(lib, "kairos_range_push");
  g_pop = (void (*)(void))dlsym(lib, "kairos_range_pop");
  g_set_metadata = (int (*)(const char*, const char*))dlsym(lib, "kairos_set_metadata");
  if (!init || !start || !g_push || !g_pop || !g_set_metadata) return 4;
  char text[4200];
  snprintf(text, sizeof(text), "ACTIVITIES_LOG_FILE=%s", argv[2]);
  if (init(text) != 0 || start() != 0) return 5;
  g_push("before_signal");
  g_pop();
  if (strcmp(mode, "metadata") == 0 || strcmp(mode, "names") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, strcmp(mode, "metadata") == 0 ? MetadataLoop : NamesLoop,
                       NULL) != 0)
      return 8;
    while (!g_looping) usleep(1000);
    usleep(100 * 1000); /* the loop well under way */
    pthread_kill(t, SIGTERM);
  } else {
    kill(getpid(), SIGTERM);
  }
  sleep(30);
  return 6;
}
