/* File: signal_target.c
 * Layer: test/capi. A program that loads libkairos.so with dlopen (argv[1]), opens a window
 * (log file argv[2]), records one range and sends itself SIGTERM. With "chain" as argv[3]
 * it first installs its own SIGTERM handler, which writes argv[2].chained and exits with 7:
 * KAIROS_FLUSH_ON_SIGNAL must write the trace and then run that handler.
 * Threading: single-threaded itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char g_marker[4096];

static void OnTerm(int sig) {
  (void)sig;
  int fd = open(g_marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
  _exit(7);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  snprintf(g_marker, sizeof(g_marker), "%s.chained", argv[2]);
  if (argc > 3 && strcmp(argv[3], "chain") == 0) signal(SIGTERM, OnTerm);
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) return 3;
  int (*init)(const char*) = (int (*)(const char*))dlsym(lib, "kairos_init");
  int (*start)(void) = (int (*)(void))dlsym(lib, "kairos_start");
  void (*push)(const char*) = (void (*)(const char*))dlsym(lib, "kairos_range_push");
  void (*pop)(void) = (void (*)(void))dlsym(lib, "kairos_range_pop");
  if (!init || !start || !push || !pop) return 4;
  char text[4200];
  snprintf(text, sizeof(text), "ACTIVITIES_LOG_FILE=%s", argv[2]);
  if (init(text) != 0 || start() != 0) return 5;
  push("before_signal");
  pop();
  kill(getpid(), SIGTERM);
  sleep(30);
  return 6;
}
