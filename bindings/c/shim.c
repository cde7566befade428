/* File: shim.c
 * Layer: bindings/c. libkairos.so: the file users preload (LD_PRELOAD), inject
 * (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH), name as NCCL's profiler plugin, load from
 * Python or link. It exports the whole C ABI (kairos.h) and the injection entry points, and
 * depends on libc alone: a process that preloads kairos and configures nothing (a launcher,
 * the shell tools of a job script) pays for loading this file and one walk of its
 * environment, not for the implementation's 36 shared objects and 3,200 relocations
 * (docs/PERFORMANCE.md, "Start-up under LD_PRELOAD").
 *
 * The implementation, libkairos_core.so beside this file, is dlopen()ed
 *   - by the constructor, when the environment configures kairos (a KAIROS_* or KINETO_*
 *     variable with a value, or KINETO_USE_DAEMON): what it does at start (a window from
 *     process start, the daemon, telemetry) must begin before main(), as before the split;
 *   - otherwise by the first call that needs it: any C ABI function but the hot path
 *     (ranges, marks, Python frames, which record nothing while nothing records, and nothing
 *     can record before the core is loaded), the injection entry points, NCCL's plugin init.
 * Loading it never runs the core's start-up under the core's own dlopen: the core has no
 * constructor that does work; its `on_load` (core_abi.h) runs after dlopen() returned. Under
 * LD_PRELOAD this constructor runs outside the loader's lock, so on_load may wait for the
 * runner thread, whose warm-up dlopen()s libcupti (needs that lock), as the old constructor
 * did. Loaded by dlopen() (Python, NVTX or CUDA injection), the constructor runs under the
 * lock and on_load does not wait (api::OnLibraryLoad waits under LD_PRELOAD only).
 *
 * Hot path: a range call tests the core's recording flag (a static zero until the core is
 * loaded) with one load, as the core itself does, and only while recording pays one
 * indirect call into the core. The function pointers are copied into this file's state once.
 *
 * Process state: one object, g_shim (docs/ARCHITECTURE.md, state table). A forked child
 * keeps it: the core stays mapped in the child, and a load another thread of the parent had
 * in progress is taken over (the load state carries the loading process's pid).
 * Threading: every entry point may be called from any thread at any time (kairos.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_abi.h"
#include "kairos.h"
#include "model/nccl_profiler_abi.h"

extern char** environ;

#define KAIROS_SHIM_LIKELY(x) __builtin_expect(!!(x), 1)

/* Load state word: (pid of the loading process << 8) | one of these. */
enum { kUnloaded = 0, kLoading = 1, kLoaded = 2, kFailed = 3 };

/* The hot-path entry points, copied from the core's table before `flag` is published. */
struct HotPath {
  void (*range_push)(const char*);
  void (*range_pop)(void);
  uint64_t (*range_start)(const char*);
  void (*range_end)(uint64_t);
  void (*mark)(const char*);
  void (*op_push)(const char*, const kairos_op_args*);
  void (*op_push_flops)(const char*, const kairos_op_args*, int64_t);
  void (*op_push_inputs)(const char*, const kairos_op_args*, int64_t, const kairos_op_inputs*);
  int (*op_enter)(const char*, const kairos_op_args*, int64_t, const uint64_t*, uint32_t, uint64_t);
  void (*op_exit)(uint64_t);
  int (*op_enter_captured)(const char*, const kairos_op_args*, int64_t, kairos_op_capture_fn, void*,
                           uint64_t);
  void (*py_call)(uint32_t);
  void (*py_return)(void);
  void (*py_call_line)(uint32_t, uint32_t);
  void (*memory_event)(const void*, int64_t, int64_t, int64_t, int32_t, int32_t);
};

static struct ShimState {
  /* The core's recording flag once it is loaded (release-published after `hot` and `api`);
   * until then `zero`, which nothing ever sets. */
  const volatile uint32_t* flag;
  struct HotPath hot;
  const kairos_core_api* api; /* NULL until loaded (release/acquire) */
  uint64_t load;              /* load state word (above) */
  long loader_tid;            /* the thread running the load (re-entry from it fails fast) */
  uint32_t zero;
  char dir[PATH_MAX];         /* this file's directory (absolute), found by the constructor */
  char error[PATH_MAX + 256]; /* why the core could not be loaded ("" if it was not tried) */
} g_shim = {&g_shim.zero, {0}, NULL, 0, 0, 0, {0}, {0}};

/* ---- Locating and loading the core ---- */

/* Directory of this file, absolute: the core is found beside it, and NCCL must be able to
 * open this file later from any directory. Only a relative load path costs syscalls. */
static void FindSelf(char* path_out, size_t path_size) {
  Dl_info info;
  path_out[0] = '\0';
  g_shim.dir[0] = '\0';
  if (dladdr((const void*)&g_shim, &info) == 0 || info.dli_fname == NULL) return;
  const char* path = info.dli_fname;
  char resolved[PATH_MAX];
  if (path[0] != '/' && realpath(path, resolved) != NULL) path = resolved;
  if (strlen(path) >= path_size) return;
  strcpy(path_out, path);
  const char* slash = strrchr(path, '/');
  if (slash == NULL) return;
  const size_t n = (size_t)(slash - path);
  if (n >= sizeof(g_shim.dir)) return;
  memcpy(g_shim.dir, path, n);
  g_shim.dir[n] = '\0';
}

static void Fail(const char* what, const char* detail) {
  snprintf(g_shim.error, sizeof(g_shim.error), "kairos unavailable: %s%s%s", what,
           detail != NULL ? ": " : "", detail != NULL ? detail : "");
  /* Once per process: the state stays kFailed, so later calls do not print it again. */
  fprintf(stderr, "kairos: error: %s\n", g_shim.error);
}

/* Runs on the thread that won the load; returns the table or NULL (state kFailed). */
static const kairos_core_api* DoLoad(uint64_t mine) {
  const kairos_core_api* api = NULL;
  char path[PATH_MAX + 32];
  if (g_shim.dir[0] == '\0') {
    char self[PATH_MAX];
    FindSelf(self, sizeof(self));
  }
  if (g_shim.dir[0] == '\0') {
    Fail("cannot locate libkairos.so (dladdr)", NULL);
  } else {
    snprintf(path, sizeof(path), "%s/%s", g_shim.dir, KAIROS_CORE_FILE_NAME);
    /* RTLD_NOW: every symbol the core and the dependencies it brings call is bound here, on the
     * loading thread; lazily bound, the first call of each (syscall, pthread_setspecific, an
     * abseil hash) was resolved on whichever thread made it first, an application thread's
     * first record in a window: a symbol lookup over ~30 objects, 10-30 us and a page fault
     * (window_open_latency_benchmark; dlopen takes 1.7-2.0 ms either way). RTLD_LOCAL: the
     * core's dependencies (abseil, libstdc++) do not join the program's global scope;
     * NODELETE: the table must outlive any dlclose of the shim's loader. */
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == NULL) {
      const char* e = dlerror();
      Fail("cannot load the implementation", e != NULL ? e : path);
    } else {
      void* sym = dlsym(handle, "kairos_core_get");
      kairos_core_get_fn get = NULL;
      memcpy(&get, &sym, sizeof(get)); /* POSIX: a function's address as dlsym returns it */
      const kairos_core_api* t = get != NULL ? get() : NULL;
      if (t == NULL || t->abi_version != KAIROS_CORE_ABI_VERSION ||
          t->size != sizeof(kairos_core_api)) {
        Fail("the implementation does not match this libkairos.so (rebuild both)", path);
      } else {
        api = t;
      }
    }
  }
  if (api == NULL) {
    __atomic_store_n(&g_shim.load, (mine & ~(uint64_t)0xff) | kFailed, __ATOMIC_RELEASE);
    return NULL;
  }
  g_shim.hot.range_push = api->range_push;
  g_shim.hot.range_pop = api->range_pop;
  g_shim.hot.range_start = api->range_start;
  g_shim.hot.range_end = api->range_end;
  g_shim.hot.mark = api->mark;
  g_shim.hot.op_push = api->op_push;
  g_shim.hot.op_push_flops = api->op_push_flops;
  g_shim.hot.op_push_inputs = api->op_push_inputs;
  g_shim.hot.op_enter = api->op_enter;
  g_shim.hot.op_exit = api->op_exit;
  g_shim.hot.op_enter_captured = api->op_enter_captured;
  g_shim.hot.py_call = api->py_call;
  g_shim.hot.py_return = api->py_return;
  g_shim.hot.py_call_line = api->py_call_line;
  g_shim.hot.memory_event = api->memory_event;
  __atomic_store_n(&g_shim.api, api, __ATOMIC_RELEASE);
  __atomic_store_n(&g_shim.flag, api->recording_flag(), __ATOMIC_RELEASE);
  __atomic_store_n(&g_shim.load, (mine & ~(uint64_t)0xff) | kLoaded, __ATOMIC_RELEASE);
  /* Published first: a kairos thread the start-up creates may call the C ABI (the Python
   * tracer's observer) while this thread waits for a window in on_load. */
  api->on_load();
  return api;
}

static int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The core, loading it on first use. NULL when it cannot be loaded (the reason is in
 * g_shim.error and was printed once), when called again from inside the load on the loading
 * thread, or after waiting 10 s for another thread's load (which then holds something this
 * thread holds: the dynamic loader's lock, say). */
static const kairos_core_api* LoadCore(void) {
  const uint64_t me = (uint64_t)getpid() << 8;
  int64_t deadline = 0;
  for (;;) {
    uint64_t s = __atomic_load_n(&g_shim.load, __ATOMIC_ACQUIRE);
    const int state = (int)(s & 0xff);
    if (state == kLoaded) return __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
    if (state == kFailed) return NULL;
    /* Unloaded, or a load begun in the parent of this forked child: take it (one winner). */
    if (state == kUnloaded || (s & ~(uint64_t)0xff) != me) {
      if (__atomic_compare_exchange_n(&g_shim.load, &s, me | kLoading, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&g_shim.loader_tid, (long)syscall(SYS_gettid), __ATOMIC_RELAXED);
        return DoLoad(me | kLoading);
      }
      continue;
    }
    if (__atomic_load_n(&g_shim.loader_tid, __ATOMIC_RELAXED) == (long)syscall(SYS_gettid))
      return NULL;
    const int64_t now = NowNs();
    if (deadline == 0) deadline = now + 10000000000LL;
    if (now > deadline) return NULL;
    const struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
}

static inline const kairos_core_api* Core(void) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  return KAIROS_SHIM_LIKELY(api != NULL) ? api : LoadCore();
}

/* The hot path's gate: non-zero only while the loaded core records. */
static inline int Recording(void) {
  const volatile uint32_t* flag = __atomic_load_n(&g_shim.flag, __ATOMIC_ACQUIRE);
  /* A relaxed atomic load, as the core's own check (the core stores it atomically; a plain
   * load is the same instruction but a data race to ThreadSanitizer). */
  return __atomic_load_n((const uint32_t*)flag, __ATOMIC_RELAXED) != 0;
}

/* ---- The decision at load ---- */

/* Does the environment configure something kairos does from process start? Any KAIROS_* or
 * KINETO_* variable with a value (config file and text, the daemon, telemetry, the trace
 * directory, a log level...), or KINETO_USE_DAEMON set at all (libkineto's rule), except
 * the two that only steer the NCCL offer below (a job's children inherit
 * KAIROS_NCCL_PLUGIN_PID from a preloaded launcher) and KAIROS_LIBRARY (where the Python
 * package finds this file). */
static int EnvConfiguresKairos(void) {
  for (char** e = environ; e != NULL && *e != NULL; ++e) {
    const char* v = *e;
    if (v[0] != 'K' || (strncmp(v, "KAIROS_", 7) != 0 && strncmp(v, "KINETO_", 7) != 0))
      continue;
    const char* eq = strchr(v, '=');
    if (eq == NULL) continue;
    const size_t n = (size_t)(eq - v);
    if (n == 17 && strncmp(v, "KINETO_USE_DAEMON", n) == 0) return 1;
    if (eq[1] == '\0') continue;
    if ((n == 22 && strncmp(v, "KAIROS_NCCL_PLUGIN_PID", n) == 0) ||
        (n == 18 && strncmp(v, "KAIROS_NCCL_PLUGIN", n) == 0) ||
        (n == 14 && strncmp(v, "KAIROS_LIBRARY", n) == 0))
      continue;
    return 1;
  }
  return 0;
}

/* Under LD_PRELOAD: name this file in NCCL_PROFILER_PLUGIN unless the user set that variable
 * or KAIROS_NCCL_PLUGIN=0, with the owner's pid beside it (a child the job starts without
 * LD_PRELOAD inherits both, and its kairos, if NCCL loads it, knows the variable was not
 * meant for it: api::OnLibraryLoad, NcclPluginInit). Before main, while the process has one
 * thread: setenv is not safe later. */
static void OfferNcclPlugin(const char* self) {
  const char* plugin = getenv("NCCL_PROFILER_PLUGIN");
  const char* opt = getenv("KAIROS_NCCL_PLUGIN");
  if ((plugin != NULL && plugin[0] != '\0') || (opt != NULL && strcmp(opt, "0") == 0) ||
      self[0] != '/')
    return;
  if (setenv("NCCL_PROFILER_PLUGIN", self, 0) == 0) {
    char pid[24];
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    setenv("KAIROS_NCCL_PLUGIN_PID", pid, 1);
  }
}

__attribute__((constructor)) static void KairosShimLoad(void) {
  /* Now, in the directory the process started in: a relative load path ("./lib/libkairos.so")
   * must not be resolved after the program changed directory. */
  char self[PATH_MAX];
  FindSelf(self, sizeof(self));
  const char* preload = getenv("LD_PRELOAD");
  if (preload != NULL && strstr(preload, "libkairos") != NULL) OfferNcclPlugin(self);
  if (EnvConfiguresKairos()) (void)LoadCore();
}

/* ---- The C ABI (kairos.h) ---- */

int32_t kairos_version(void) { return KAIROS_VERSION_NUMBER; }

const char* kairos_status_string(int32_t code) {
  switch (code) {
    case KAIROS_OK: return "ok";
    case KAIROS_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KAIROS_ERR_FAILED_PRECONDITION: return "failed precondition";
    case KAIROS_ERR_UNAVAILABLE: return "unavailable";
    case KAIROS_ERR_RESOURCE_EXHAUSTED: return "resource exhausted";
    case KAIROS_ERR_IO: return "i/o error";
    case KAIROS_ERR_INTERNAL: return "internal error";
    case KAIROS_ERR_NOT_FOUND: return "not found";
    default: return "unknown error code";
  }
}

const char* kairos_last_error(void) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  if (api != NULL) return api->last_error();
  /* Nothing was loaded: either nothing failed yet, or every call fails for this reason. */
  return (__atomic_load_n(&g_shim.load, __ATOMIC_ACQUIRE) & 0xff) == kFailed ? g_shim.error : "";
}

int kairos_init(const char* config_text) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->init(config_text) : KAIROS_ERR_UNAVAILABLE;
}

int kairos_init_values(const char* config_text, const char* const* keys,
                       const char* const* values, size_t count) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->init_values(config_text, keys, values, count) : KAIROS_ERR_UNAVAILABLE;
}

void kairos_shutdown(void) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->shutdown();
}

void kairos_range_push(const char* name) {
  if (Recording()) g_shim.hot.range_push(name);
}
void kairos_range_pop(void) {
  if (Recording()) g_shim.hot.range_pop();
}
uint64_t kairos_range_start(const char* name) {
  return Recording() ? g_shim.hot.range_start(name) : 0;
}
void kairos_range_end(uint64_t id) {
  if (id != 0 && Recording()) g_shim.hot.range_end(id);
}
void kairos_mark(const char* name) {
  if (Recording()) g_shim.hot.mark(name);
}

/* Steps load the core: they count iterations (kairos_current_iteration, iteration windows,
 * telemetry's "this process trains" rule) even while nothing records. */
void kairos_optimizer_pre_step(void) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->optimizer_pre_step();
}
void kairos_optimizer_post_step(void) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->optimizer_post_step();
}
void kairos_step(void) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->step();
}

int kairos_start(void) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->start() : KAIROS_ERR_UNAVAILABLE;
}
int kairos_stop(void) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->stop() : KAIROS_ERR_UNAVAILABLE;
}
const char* kairos_flush(void) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->flush() : NULL;
}
int kairos_set_metadata(const char* key, const char* value) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->set_metadata(key, value) : KAIROS_ERR_UNAVAILABLE;
}
const volatile uint32_t* kairos_recording_flag(void) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->recording_flag() : &g_shim.zero;
}

void kairos_op_push(const char* name, const kairos_op_args* args) {
  if (Recording()) g_shim.hot.op_push(name, args);
}
void kairos_op_push_flops(const char* name, const kairos_op_args* args, int64_t flops) {
  if (Recording()) g_shim.hot.op_push_flops(name, args, flops);
}
void kairos_op_push_inputs(const char* name, const kairos_op_args* args, int64_t flops,
                           const kairos_op_inputs* inputs) {
  if (Recording()) g_shim.hot.op_push_inputs(name, args, flops, inputs);
}
int kairos_op_enter(const char* name, const kairos_op_args* args, int64_t flops,
                    const uint64_t* input_words, uint32_t n_input_words, uint64_t thread_key) {
  return Recording() ? g_shim.hot.op_enter(name, args, flops, input_words, n_input_words, thread_key)
                     : 0;
}
int kairos_op_enter_captured(const char* name, const kairos_op_args* args, int64_t flops,
                             kairos_op_capture_fn capture, void* ctx, uint64_t thread_key) {
  return Recording() ? g_shim.hot.op_enter_captured(name, args, flops, capture, ctx, thread_key)
                     : 0;
}
void kairos_op_exit(uint64_t thread_key) {
  if (Recording()) g_shim.hot.op_exit(thread_key);
}
void kairos_op_attach(void) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->op_attach();
}
int64_t kairos_current_iteration(void) {
  /* Without the core no step was counted: kairos_step loads it. */
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  return api != NULL ? api->current_iteration() : 0;
}

int kairos_py_attach(kairos_py_observer observer, void* ctx) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->py_attach(observer, ctx) : 0;
}
uint32_t kairos_py_name(const char* name, size_t len) {
  const kairos_core_api* api = Core();
  return api != NULL ? api->py_name(name, len) : 0;
}
void kairos_py_call(uint32_t name) {
  if (Recording()) g_shim.hot.py_call(name);
}
void kairos_py_return(void) {
  if (Recording()) g_shim.hot.py_return();
}
void kairos_py_call_line(uint32_t name, uint32_t caller_line) {
  if (Recording()) g_shim.hot.py_call_line(name, caller_line);
}
void kairos_py_line_source(kairos_py_line_fn fn) {
  const kairos_core_api* api = Core();
  if (api != NULL) api->py_line_source(fn);
}
void kairos_memory_event(const void* addr, int64_t bytes, int64_t total_allocated,
                         int64_t total_reserved, int32_t device_type, int32_t device_id) {
  if (Recording())
    g_shim.hot.memory_event(addr, bytes, total_allocated, total_reserved, device_type, device_id);
}

/* ---- Injection entry points ---- */

/* Injection loaders (the CUDA driver, NVTX) dlopen() the tool RTLD_LOCAL (found on an H100: a
 * program's dlsym(RTLD_DEFAULT, "kairos_step") came back NULL under CUDA_INJECTION64_PATH, so
 * its iteration window never opened). Re-opening the already loaded shim RTLD_NOLOAD |
 * RTLD_GLOBAL puts the C ABI in the global scope, as LD_PRELOAD does, so programs find
 * kairos_step and the range calls the same way however kairos was attached. The handle is
 * kept: the shim stays loaded for the process. */
static void JoinGlobalScope(void) {
  Dl_info self;
  if (dladdr((void*)&JoinGlobalScope, &self) != 0 && self.dli_fname != NULL)
    (void)dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

#ifdef KAIROS_SHIM_CUDA_INJECTION
/* CUDA_INJECTION64_PATH: the driver calls this once, after its dlopen() returned. Returns 1
 * always: a tracing problem must never fail the application's CUDA initialisation. */
KAIROS_API int InitializeInjection(void);
int InitializeInjection(void) {
  JoinGlobalScope();
  const kairos_core_api* api = Core();
  if (api != NULL && api->initialize_injection != NULL) return api->initialize_injection();
  return 1;
}
#endif

/* NVTX_INJECTION64_PATH: 0 ("no tool") when the core cannot be loaded. */
KAIROS_API int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t));
int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t)) {
  JoinGlobalScope();
  const kairos_core_api* api = Core();
  return api != NULL ? api->initialize_injection_nvtx2(get_export_table) : 0;
}

/* ---- NCCL profiler plugin v4 (NCCL_PROFILER_PLUGIN=libkairos.so) ---- */

static kairos_nccl_result_t NcclInit(void** context, int* activation_mask, const char* comm_name,
                                     uint64_t comm_hash, int n_nodes, int nranks, int rank,
                                     kairos_nccl_debug_logger_t logfn) {
  const kairos_core_api* api = Core();
  if (api == NULL) return kKairosNcclInternalError; /* NCCL then runs without the plugin */
  return api->nccl->init(context, activation_mask, comm_name, comm_hash, n_nodes, nranks, rank,
                         logfn);
}
/* The others run only after a successful init, so the core is loaded; checked anyway. */
static kairos_nccl_result_t NcclStartEvent(void* context, void** handle,
                                           kairos_nccl_event_descr_v4_t* descr) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  if (api == NULL) {
    if (handle != NULL) *handle = NULL;
    return kKairosNcclSuccess;
  }
  return api->nccl->startEvent(context, handle, descr);
}
static kairos_nccl_result_t NcclStopEvent(void* handle) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  return api != NULL ? api->nccl->stopEvent(handle) : kKairosNcclSuccess;
}
static kairos_nccl_result_t NcclRecordEventState(void* handle, int state,
                                                 kairos_nccl_event_state_args_v4_t* args) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  return api != NULL ? api->nccl->recordEventState(handle, state, args) : kKairosNcclSuccess;
}
static kairos_nccl_result_t NcclFinalize(void* context) {
  const kairos_core_api* api = __atomic_load_n(&g_shim.api, __ATOMIC_ACQUIRE);
  return api != NULL ? api->nccl->finalize(context) : kKairosNcclSuccess;
}

KAIROS_API extern const kairos_nccl_profiler_v4_t ncclProfiler_v4;
const kairos_nccl_profiler_v4_t ncclProfiler_v4 = {"kairos", NcclInit, NcclStartEvent,
                                                   NcclStopEvent, NcclRecordEventState,
                                                   NcclFinalize};
