// File: tools/gpu-check/segv_trace.c
// Layer: real-GPU kit diagnostics (docs/REAL_GPU.md), preloaded beside libkairos.so.
// Threading: the handler runs on the faulting thread, on its own alternate stack.
//
// The GPU machine may lack gdb, and a crash there costs device minutes to reproduce, so a
// crashing workload prints its own stack: each frame as module+offset (addr2line-ready against
// the build the kit came from) and the nearest exported symbol. Then the signal's default
// action runs, so exit codes and core dumps are what they would have been.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char g_alt_stack[1 << 16];

static void put(const char* s) { (void)!write(2, s, strlen(s)); }

static void OnFatal(int sig, siginfo_t* info, void* ctx) {
  (void)ctx;
  char line[512];
  snprintf(line, sizeof line, "segv_trace: signal %d at address %p, thread %d\n", sig,
           info->si_addr, (int)gettid());
  put(line);
  void* frames[64];
  int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info dl;
    if (dladdr(frames[i], &dl) && dl.dli_fname) {
      snprintf(line, sizeof line, "  #%d %s+0x%lx %s\n", i, dl.dli_fname,
               (unsigned long)((char*)frames[i] - (char*)dl.dli_fbase),
               dl.dli_sname ? dl.dli_sname : "?");
    } else {
      snprintf(line, sizeof line, "  #%d %p\n", i, frames[i]);
    }
    put(line);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void Install(void) {
  stack_t ss = {.ss_sp = g_alt_stack, .ss_size = sizeof g_alt_stack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  void* warm[2];
  backtrace(warm, 2);  // loads libgcc's unwinder now, not inside the handler
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = OnFatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
}
