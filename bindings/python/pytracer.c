/* File: pytracer.c
 * Layer: bindings (the Python package's C extension kairos._pytracer; docs/PYTHON_STACKS.md).
 * The Python tracer: CPython's C profiling hook (PyEval_SetProfile's Py_tracefunc) records
 * every Python call and return into kairos' per-thread rings through the C ABI
 * (kairos_py_call / kairos_py_return, resolved from the libkairos the ctypes layer loaded and
 * handed over by address, so there is one libkairos). The hook is installed on every thread
 * only while a window with PROFILE_WITH_STACK warms up or records, and removed right after:
 * kairos calls this module's observer (kairos_py_attach) on its runner thread, the observer
 * signals a watcher thread of this module, and the watcher takes the GIL and installs or
 * removes the hook. Threads started while it is installed get it from threading.setprofile
 * (a trampoline that installs the C hook on the thread's first event).
 *
 * Names: "file.py(line): function" (PyTorch's python_function names) built once per code
 * object and interned by kairos (kairos_py_name); the id is cached in the code object's
 * co_extra slot together with a generation that a fork bumps (a child's kairos has a new
 * name table).
 *
 * Stacks: a thread's first event in a window (its per-thread state has another epoch)
 * records the frames already on its stack, outermost first, before the event itself, so a
 * window that opens deep in a call tree still has every frame, and the returns of those
 * frames match. Frames left by an exception get their PyTrace_RETURN from CPython (profile
 * hooks see every frame exit); generator resumes are calls, yields returns.
 *
 * Lines (CPython 3.11): a call records the line its caller was at (kairos_py_call_line), and
 * kairos asks CurrentLine (kairos_py_line_source) for the line of the thread's innermost frame
 * when an operator or allocation is recorded; both go through a per-thread line cache.
 *
 * Cost of an event while a window records: the recording flag, the per-thread epoch, the
 * code object's co_extra load, on a call the caller's line (cached), and one ring record (no
 * lock, no allocation, no syscall); the first event of each new code object builds and
 * interns its name (cold). C calls (PyTrace_C_*) are not recorded.
 * Threading: the hook runs with the GIL on the thread it traces; the observer runs on a kairos
 * thread without the GIL (mutex + condition variable only); install/remove run with the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030B0000
#error "the kairos Python tracer needs CPython 3.11 or later"
#endif

/* Lines (a frame's current line, from its last instruction) read CPython 3.11's frame layout
 * (its internal header); other versions record no lines (0 = unknown). */
#if PY_VERSION_HEX < 0x030C0000
#define KAIROS_LINES 1
#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE
#endif

#if PY_VERSION_HEX >= 0x030C0000
#define KAIROS_GET_EXTRA PyUnstable_Code_GetExtra
#define KAIROS_SET_EXTRA PyUnstable_Code_SetExtra
#define KAIROS_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#else
#define KAIROS_GET_EXTRA _PyCode_GetExtra
#define KAIROS_SET_EXTRA _PyCode_SetExtra
#define KAIROS_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#endif

/* ---- libkairos entry points (addresses from the ctypes layer, set once by attach()) ---- */
typedef void (*observer_fn)(uint32_t, void*);
static struct {
  const volatile uint32_t* flag; /* kairos_recording_flag(): the recording epoch, 0 = idle */
  uint32_t (*name)(const char*, size_t);
  void (*call)(uint32_t);
  void (*ret)(void);
  int (*attach)(observer_fn, void*);
  void (*call_line)(uint32_t, uint32_t); /* kairos_py_call_line: with the caller's line */
  void (*line_source)(uint32_t (*)(void)); /* kairos_py_line_source */
} k;

/* Module state. One interpreter per process is supported (the main one). */
static Py_ssize_t g_extra_index = -1;
static uint64_t g_generation = 1; /* bumped in a forked child: cached name ids are stale */
static PyObject* g_trampoline = NULL; /* the builtin threading.setprofile gets */
static int g_installed = 0;          /* the hook is (being) installed on every thread */
static int g_lines_wanted = 1;       /* _line_source(False) turns the op line source off */
static PyObject* g_prev_thread_hook = NULL; /* threading's profile hook before ours, restored */
/* nn.Module scopes (PROFILE_WITH_MODULES with PROFILE_WITH_STACK): the frame of
 * torch.nn.Module._call_impl is written "nn.Module: <Class>_<n>" (n: the module's index among
 * the instances of its class, in order of first call), PyTorch's name for a module call. */
static int g_modules = 0;
static PyObject* g_module_code = NULL;   /* Module._call_impl.__code__, when torch is imported */
static PyObject* g_module_names = NULL;  /* id(module) -> generation << 32 | name id */
static PyObject* g_class_counts = NULL;  /* class name -> instances named so far */

/* Tallies since the module loaded (stats()). Written with the GIL held. */
static struct {
  uint64_t installs, removes, threads_hooked, threads_foreign, names, syncs, synced_frames;
  uint64_t name_failures;
} g_stats;

/* Observer -> watcher: the latest request (flags) and its sequence number. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static uint64_t g_request_seq = 0;
static uint32_t g_request_flags = 0;
static int g_watcher_running = 0;
static int g_detached = 0; /* the interpreter is finalizing: the observer does nothing */
static PyThreadState* g_watcher_tstate = NULL;

/* ---- Per-thread state: the profile hook's `obj` (one per traced thread) ---- */
typedef struct {
  PyObject_HEAD
  uint32_t epoch; /* the recording epoch this thread's stack was synced for */
} TracerState;

static PyTypeObject TracerStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kairos._pytracer.ThreadState",
    .tp_basicsize = sizeof(TracerState),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
};

/* ---- Lines ---- */

/* The line a frame is at: PyCode_Addr2Line walks the code's line table up to the instruction
 * (linear in its offset), so lines are cached per thread by (code object, instruction): a
 * loop's call sites hit. A slot is valid only for the window generation it was filled in
 * (bumped at every install), so a code object freed and another allocated at its address can
 * give a stale line only within one window, never a crash. The cache is per thread because the
 * operator path (CurrentLine) runs without the GIL. */
static uint32_t g_line_generation = 1;
#ifdef KAIROS_LINES
typedef struct {
  const PyCodeObject* code;
  int lasti;
  uint32_t generation;
  uint32_t line;
} LineSlot;
static __thread LineSlot t_lines[64];

/* The current line of `f` (a frame's _PyInterpreterFrame) or of the first complete frame
 * outside it; 0 = none. Reads only `f`'s thread's own frames and immutable code data. */
static uint32_t LineAt(_PyInterpreterFrame* f) {
  while (f != NULL && _PyFrame_IsIncomplete(f)) f = f->previous;
  if (f == NULL) return 0;
  PyCodeObject* co = f->f_code;
  const int lasti = _PyInterpreterFrame_LASTI(f);
  if (lasti < 0) return 0; /* not started */
  const uint32_t gen = __atomic_load_n(&g_line_generation, __ATOMIC_RELAXED);
  LineSlot* s = &t_lines[(((uintptr_t)co >> 4) ^ ((uintptr_t)lasti * 40503u)) & 63u];
  if (s->code == co && s->lasti == lasti && s->generation == gen) return s->line;
  const int line = PyCode_Addr2Line(co, lasti * (int)sizeof(_Py_CODEUNIT));
  s->code = co;
  s->lasti = lasti;
  s->generation = gen;
  s->line = line > 0 ? (uint32_t)line : 0;
  return s->line;
}

/* The line of the frame that called `frame` (at the moment of the call). */
static inline uint32_t CallerLine(PyFrameObject* frame) { return LineAt(frame->f_frame->previous); }

/* kairos_py_line_source: the line the calling thread's innermost Python frame is at, for an
 * operator or allocation kairos records. Runs on that thread, usually inside a C function
 * that released the GIL: only this thread changes its own frames, and nothing here
 * allocates, counts references or takes a lock. 0 while no window has the hook in. */
static uint32_t CurrentLine(void) {
  /* Written with the GIL by the installing thread, read here without it: a relaxed load. */
  if (!__atomic_load_n(&g_installed, __ATOMIC_RELAXED)) return 0;
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == NULL || ts->cframe == NULL) return 0;
  return LineAt(ts->cframe->current_frame);
}
#else
static inline uint32_t CallerLine(PyFrameObject* frame) {
  (void)frame;
  return 0;
}
#endif

/* ---- Names ---- */

/* Builds "file(line): name", interns it and caches the id in co_extra. Cold: once per code
 * object (and per generation). Keeps any pending exception (the hook runs during unwinding). */
static uint32_t InternCode(PyCodeObject* co) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uint32_t id = 0;
  PyObject* text = PyUnicode_FromFormat("%U(%d): %U", co->co_filename, co->co_firstlineno,
                                        co->co_name);
  if (text != NULL) {
    /* A file name from undecodable bytes holds lone surrogates: written escaped, so the
     * name is valid UTF-8 and still says which bytes it had. */
    PyObject* bytes = PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace");
    if (bytes != NULL) {
      id = k.name(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
      Py_DECREF(bytes);
    }
    Py_DECREF(text);
  }
  if (id == 0) ++g_stats.name_failures;
  ++g_stats.names;
  /* Cached also when 0 (table full): the frame is recorded unnamed, never retried per call. */
  KAIROS_SET_EXTRA((PyObject*)co, g_extra_index, (void*)(uintptr_t)((g_generation << 32) | id));
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return id;
}

/* The module-call name of a Module._call_impl frame ("nn.Module: Linear_0"), interned once
 * per module; 0 when `self` cannot be read (the frame then keeps its own name). Runs once per
 * module call while modules are on: reads the frame's locals (a dict CPython builds). */
static uint32_t ModuleName(PyFrameObject* frame) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uint32_t id = 0;
  PyObject* locals = PyFrame_GetLocals(frame);
  PyObject* self = locals != NULL && PyDict_Check(locals) ? PyDict_GetItemString(locals, "self") : NULL;
  PyObject* key = self != NULL ? PyLong_FromVoidPtr(self) : NULL;
  if (key != NULL && g_module_names != NULL && g_class_counts != NULL) {
    PyObject* cached = PyDict_GetItem(g_module_names, key); /* borrowed */
    const unsigned long long v = cached != NULL ? PyLong_AsUnsignedLongLong(cached) : 0;
    if (cached != NULL && (v >> 32) == g_generation) {
      id = (uint32_t)v;
    } else {
      const char* cls = Py_TYPE(self)->tp_name;
      PyObject* n = PyDict_GetItemString(g_class_counts, cls);
      const long index = n != NULL ? PyLong_AsLong(n) : 0;
      PyObject* text = PyUnicode_FromFormat("nn.Module: %s_%ld", cls, index);
      PyObject* bytes = text != NULL ? PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace") : NULL;
      if (bytes != NULL) {
        id = k.name(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
        PyObject* next = PyLong_FromLong(index + 1);
        PyObject* val = PyLong_FromUnsignedLongLong((g_generation << 32) | id);
        if (next != NULL) PyDict_SetItemString(g_class_counts, cls, next);
        if (val != NULL) PyDict_SetItem(g_module_names, key, val);
        Py_XDECREF(next);
        Py_XDECREF(val);
      }
      Py_XDECREF(bytes);
      Py_XDECREF(text);
    }
  }
  Py_XDECREF(key);
  Py_XDECREF(locals);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return id;
}

static inline uint32_t NameOf(PyFrameObject* frame) {
  PyCodeObject* co = PyFrame_GetCode(frame); /* strong reference */
  void* extra = NULL;
  uint32_t id;
  if (__builtin_expect(g_modules && (PyObject*)co == g_module_code, 0)) {
    id = ModuleName(frame);
    if (id != 0) {
      Py_DECREF(co);
      return id;
    }
  }
  if (KAIROS_GET_EXTRA((PyObject*)co, g_extra_index, &extra) == 0 &&
      ((uintptr_t)extra >> 32) == g_generation) {
    id = (uint32_t)(uintptr_t)extra;
  } else {
    PyErr_Clear();
    id = InternCode(co);
  }
  Py_DECREF(co);
  return id;
}

/* Records the frames on the stack from the outermost down to `frame` (included when
 * `include` is set, else down to its caller). Cold: a thread's first event in a window. */
static void SyncStack(PyFrameObject* frame, int include) {
  PyFrameObject* small[64];
  PyFrameObject** frames = small;
  size_t n = 0, cap = 64;
  PyFrameObject* f = include ? (Py_XINCREF(frame), frame) : PyFrame_GetBack(frame);
  while (f != NULL) {
    if (n == cap) {
      PyFrameObject** grown = PyMem_RawMalloc(sizeof(*grown) * cap * 2);
      if (grown == NULL) { /* out of memory: the outer frames are left out */
        Py_DECREF(f);
        break;
      }
      memcpy(grown, frames, sizeof(*grown) * n);
      if (frames != small) PyMem_RawFree(frames);
      frames = grown;
      cap *= 2;
    }
    frames[n++] = f;
    f = PyFrame_GetBack(f);
  }
  g_stats.synced_frames += n;
  ++g_stats.syncs;
  uint32_t parent_line = 0; /* outermost first: a frame's caller line is its parent's line now */
  while (n > 0) {
    PyFrameObject* g = frames[--n];
    k.call_line(NameOf(g), parent_line);
#ifdef KAIROS_LINES
    parent_line = LineAt(g->f_frame);
#endif
    Py_DECREF(g);
  }
  if (frames != small) PyMem_RawFree(frames);
}

/* ---- The hook ---- */

static int Tracer(PyObject* obj, PyFrameObject* frame, int what, PyObject* arg) {
  (void)arg;
  const uint32_t epoch = *k.flag;
  if (epoch == 0) return 0; /* warm-up or between windows: nothing records */
  TracerState* st = (TracerState*)obj;
  switch (what) {
    case PyTrace_CALL:
      if (st->epoch != epoch) {
        st->epoch = epoch;
        SyncStack(frame, 0);
      }
      k.call_line(NameOf(frame), CallerLine(frame));
      break;
    case PyTrace_RETURN:
      if (st->epoch != epoch) {
        st->epoch = epoch;
        SyncStack(frame, 1);
      }
      k.ret();
      break;
    default:
      break;
  }
  return 0;
}

/* Installs the hook on the calling thread (GIL held). */
static int HookThisThread(void) {
  PyObject* st = PyType_GenericNew(&TracerStateType, NULL, NULL);
  if (st == NULL) return -1;
  PyEval_SetProfile(Tracer, st);
  Py_DECREF(st);
  return 0;
}

/* threading.setprofile's hook: runs on a thread started while the hook is installed, at its
 * first event; replaces itself with the C hook and records that event. */
static PyObject* Trampoline(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 3 || !PyFrame_Check(args[0]) || !PyUnicode_Check(args[1])) Py_RETURN_NONE;
  if (!g_installed) {
    PyEval_SetProfile(NULL, NULL);
    Py_RETURN_NONE;
  }
  if (HookThisThread() < 0) return NULL;
  ++g_stats.threads_hooked;
  PyThreadState* ts = PyThreadState_Get();
  int what = -1;
  if (PyUnicode_CompareWithASCIIString(args[1], "call") == 0) what = PyTrace_CALL;
  if (PyUnicode_CompareWithASCIIString(args[1], "return") == 0) what = PyTrace_RETURN;
  if (what >= 0) Tracer(ts->c_profileobj, (PyFrameObject*)args[0], what, Py_None);
  Py_RETURN_NONE;
}

/* ---- Install / remove on every thread (GIL held) ---- */

/* Sets threading's profile hook (threading.setprofile); with `prev`, returns the one it
 * replaces there (a new reference; NULL when none could be read). */
static int SetThreadingHook(PyObject* hook, PyObject** prev) {
  PyObject* threading = PyImport_ImportModule("threading");
  if (threading == NULL) return -1;
  if (prev != NULL) {
    *prev = PyObject_GetAttrString(threading, "_profile_hook");
    if (*prev == NULL) PyErr_Clear();
  }
  PyObject* r = PyObject_CallMethod(threading, "setprofile", "O", hook);
  Py_DECREF(threading);
  if (r == NULL) return -1;
  Py_DECREF(r);
  return 0;
}

/* Module._call_impl's code object when torch.nn is imported (modules on), else NULL. */
static void ResolveModuleCode(int modules) {
  Py_CLEAR(g_module_code);
  g_modules = 0;
  if (!modules) return;
  PyObject* name = PyUnicode_FromString("torch.nn.modules.module");
  PyObject* mod = name != NULL ? PyImport_GetModule(name) : NULL;
  Py_XDECREF(name);
  PyObject* cls = mod != NULL ? PyObject_GetAttrString(mod, "Module") : NULL;
  PyObject* fn = cls != NULL ? PyObject_GetAttrString(cls, "_call_impl") : NULL;
  PyObject* code = fn != NULL ? PyObject_GetAttrString(fn, "__code__") : NULL;
  Py_XDECREF(fn);
  Py_XDECREF(cls);
  Py_XDECREF(mod);
  PyErr_Clear();
  if (code == NULL || !PyCode_Check(code)) {
    Py_XDECREF(code);
    return;
  }
  if (g_module_names == NULL) g_module_names = PyDict_New();
  if (g_class_counts == NULL) g_class_counts = PyDict_New();
  if (g_module_names == NULL || g_class_counts == NULL) {
    PyErr_Clear();
    Py_DECREF(code);
    return;
  }
  g_module_code = code;
  g_modules = 1;
}

static int Install(uint32_t flags) {
  if (g_installed) return 0;
  __atomic_store_n(&g_line_generation, g_line_generation + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&g_installed, 1, __ATOMIC_RELAXED); /* CurrentLine reads it without the GIL */
  ++g_stats.installs;
  ResolveModuleCode((flags & 2u) != 0);
#ifdef KAIROS_LINES /* registered only while the hook is in: outside, an op pays one load */
  if (k.line_source != NULL && g_lines_wanted) k.line_source(CurrentLine);
#endif
  PyInterpreterState* interp = PyInterpreterState_Get();
  for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts != NULL;
       ts = PyThreadState_Next(ts)) {
    if (ts == g_watcher_tstate) continue;
    if (ts->c_profilefunc == Tracer) continue;
    /* Another profiler (cProfile, torch) is left alone; our trampoline is replaced. */
    if (ts->c_profilefunc != NULL && ts->c_profileobj != g_trampoline) {
      ++g_stats.threads_foreign;
      continue;
    }
    PyObject* st = PyType_GenericNew(&TracerStateType, NULL, NULL);
    if (st == NULL) return -1;
    int rc = _PyEval_SetProfile(ts, Tracer, st);
    Py_DECREF(st);
    if (rc < 0) return -1;
    ++g_stats.threads_hooked;
  }
  /* A hook the program set for its own threads is put back when the window ends. */
  Py_CLEAR(g_prev_thread_hook);
  return SetThreadingHook(g_trampoline, &g_prev_thread_hook);
}

static int Remove(void) {
  if (!g_installed) return 0;
  __atomic_store_n(&g_installed, 0, __ATOMIC_RELAXED);
  if (k.line_source != NULL) k.line_source(NULL);
  ++g_stats.removes;
  PyInterpreterState* interp = PyInterpreterState_Get();
  for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts != NULL;
       ts = PyThreadState_Next(ts)) {
    /* Ours, or a thread whose trampoline has not run yet. */
    if (ts->c_profilefunc == Tracer || (ts->c_profileobj == g_trampoline && g_trampoline)) {
      if (_PyEval_SetProfile(ts, NULL, NULL) < 0) return -1;
    }
  }
  /* threading's hook only when it is still ours. */
  PyObject* threading = PyImport_ImportModule("threading");
  if (threading == NULL) return -1;
  PyObject* cur = PyObject_GetAttrString(threading, "_profile_hook");
  Py_DECREF(threading);
  if (cur == NULL) {
    PyErr_Clear();
    return 0;
  }
  int ours = cur == g_trampoline;
  Py_DECREF(cur);
  PyObject* prev = g_prev_thread_hook;
  g_prev_thread_hook = NULL;
  int rc = 0;
  if (ours) rc = SetThreadingHook(prev != NULL ? prev : Py_None, NULL);
  Py_XDECREF(prev);
  return rc;
}

/* ---- Observer (kairos runner thread, no GIL) and watcher (a Python thread of ours) ---- */

/* Applies the latest request on the main thread (a pending call: the next bytecode boundary,
 * microseconds while the main thread runs Python); the watcher does the same when the main
 * thread is blocked outside Python. Both are idempotent and read the latest flags. */
static int PendingApply(void* unused) {
  (void)unused;
  pthread_mutex_lock(&g_mu);
  const uint32_t flags = g_request_flags;
  pthread_mutex_unlock(&g_mu);
  if (((flags & 1u) ? Install(flags) : Remove()) < 0) PyErr_WriteUnraisable(NULL);
  return 0;
}

static void Observer(uint32_t flags, void* ctx) {
  (void)ctx;
  pthread_mutex_lock(&g_mu);
  if (g_detached) { /* after the interpreter's atexit: no pending call, no wake-up */
    pthread_mutex_unlock(&g_mu);
    return;
  }
  g_request_flags = flags;
  ++g_request_seq;
  pthread_cond_signal(&g_cv);
  pthread_mutex_unlock(&g_mu);
  /* Needs neither the GIL nor a thread state; a full queue (-1) leaves it to the watcher. */
  (void)Py_AddPendingCall(PendingApply, NULL);
}

static void WatcherMain(void* unused) {
  (void)unused;
  PyGILState_STATE gil = PyGILState_Ensure();
  g_watcher_tstate = PyThreadState_Get();
  uint64_t seen = 0;
  for (;;) {
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&g_mu);
    while (g_request_seq == seen) pthread_cond_wait(&g_cv, &g_mu);
    seen = g_request_seq;
    pthread_mutex_unlock(&g_mu);
    Py_END_ALLOW_THREADS
    /* The latest request, read with the GIL held (a newer one may have come meanwhile).
     * Only Python stacks are recorded; a modules-only request installs nothing. */
    pthread_mutex_lock(&g_mu);
    const uint32_t flags = g_request_flags;
    const int detached = g_detached;
    pthread_mutex_unlock(&g_mu);
    if (detached) break;
    if (((flags & 1u) ? Install(flags) : Remove()) < 0) PyErr_WriteUnraisable(NULL);
  }
  g_watcher_tstate = NULL;
  PyGILState_Release(gil);
}

static int StartWatcher(void) {
  if (g_watcher_running) return 0;
  if (PyThread_start_new_thread(WatcherMain, NULL) == PYTHREAD_INVALID_THREAD_ID) {
    PyErr_SetString(PyExc_RuntimeError, "kairos: cannot start the Python tracer's watcher");
    return -1;
  }
  g_watcher_running = 1;
  return 0;
}

/* ---- Module functions ---- */

/* attach(flag_addr, name_addr, call_addr, return_addr, attach_addr, call_line_addr,
 * line_source_addr) -> bool: the libkairos entry points by address (kairos._stacks passes the
 * ctypes copy's); starts the watcher, registers the observer and the line source. True the
 * first time. */
static PyObject* Attach(PyObject* self, PyObject* args) {
  (void)self;
  unsigned long long a[7];
  if (!PyArg_ParseTuple(args, "KKKKKKK", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6]))
    return NULL;
  for (int i = 0; i < 7; ++i) {
    if (a[i] == 0) {
      PyErr_SetString(PyExc_ValueError, "kairos._pytracer.attach: a null entry point");
      return NULL;
    }
  }
  if (k.attach != NULL) Py_RETURN_FALSE;
  k.flag = (const volatile uint32_t*)(uintptr_t)a[0];
  k.name = (uint32_t(*)(const char*, size_t))(uintptr_t)a[1];
  k.call = (void (*)(uint32_t))(uintptr_t)a[2];
  k.ret = (void (*)(void))(uintptr_t)a[3];
  k.attach = (int (*)(observer_fn, void*))(uintptr_t)a[4];
  k.call_line = (void (*)(uint32_t, uint32_t))(uintptr_t)a[5];
  k.line_source = (void (*)(uint32_t (*)(void)))(uintptr_t)a[6];
  if (StartWatcher() < 0) return NULL;
  k.attach(Observer, NULL);
  Py_RETURN_TRUE;
}

/* install() / remove(): the same as the watcher does, now, on the calling thread (GIL held):
 * kairos.profile(with_stack=True) installs as soon as its window is started. */
static PyObject* InstallNow(PyObject* self, PyObject* args) {
  (void)self;
  unsigned int flags = 1;
  if (!PyArg_ParseTuple(args, "|I", &flags)) return NULL;
  if (k.attach == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "kairos._pytracer: attach() first");
    return NULL;
  }
  if (Install(flags | 1u) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* RemoveNow(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (Remove() < 0) return NULL;
  Py_RETURN_NONE;
}

/* atexit (registered by kairos._stacks): from now on kairos' window events (its own exit
 * handler closes a window after the interpreter is gone) reach neither the interpreter nor the
 * watcher. */
static PyObject* Detach(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  pthread_mutex_lock(&g_mu);
  g_detached = 1;
  pthread_mutex_unlock(&g_mu);
  if (k.line_source != NULL) k.line_source(NULL); /* no frame to read once finalizing */
  if (Remove() < 0) return NULL;
  Py_RETURN_NONE;
}

/* _line_source(on): registers (or clears) the operator line source; benchmarks compare the
 * op path with and without it in one run. */
static PyObject* LineSourceNow(PyObject* self, PyObject* args) {
  (void)self;
  int on = 1;
  if (!PyArg_ParseTuple(args, "p", &on)) return NULL;
  if (k.line_source == NULL) Py_RETURN_FALSE;
#ifdef KAIROS_LINES
  g_lines_wanted = on;
  if (g_installed) k.line_source(on ? CurrentLine : NULL);
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

static PyObject* Installed(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyBool_FromLong(g_installed);
}

/* Whether the calling thread has the hook (tests: no hook outside windows). */
static PyObject* ThreadHooked(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  PyThreadState* ts = PyThreadState_Get();
  return PyBool_FromLong(ts->c_profilefunc == Tracer);
}

static PyObject* Stats(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue(
      "{sKsKsKsKsKsKsKsK}", "installs", (unsigned long long)g_stats.installs, "removes",
      (unsigned long long)g_stats.removes, "threads_hooked",
      (unsigned long long)g_stats.threads_hooked, "threads_foreign",
      (unsigned long long)g_stats.threads_foreign, "names", (unsigned long long)g_stats.names,
      "name_failures", (unsigned long long)g_stats.name_failures, "syncs",
      (unsigned long long)g_stats.syncs, "synced_frames",
      (unsigned long long)g_stats.synced_frames);
}

/* os.register_at_fork(after_in_child=...): the child has no watcher and a fresh kairos (new
 * name table, idle, the observer kept by kairos): new generation, no hook, a new watcher. */
static PyObject* AfterForkChild(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  ++g_generation;
  pthread_mutex_init(&g_mu, NULL);
  pthread_cond_init(&g_cv, NULL);
  g_request_seq = 0;
  g_request_flags = 0;
  g_watcher_tstate = NULL;
  g_watcher_running = 0;
  if (Remove() < 0) return NULL;
  if (k.attach != NULL && StartWatcher() < 0) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef kMethods[] = {
    {"attach", Attach, METH_VARARGS, "attach(flag, name, call, ret, attach, call_line, line_source) -> bool"},
    {"install", InstallNow, METH_VARARGS, "install(flags=1): the hook on every thread now (flags 2: modules)."},
    {"remove", RemoveNow, METH_NOARGS, "Remove the hook from every thread now."},
    {"installed", Installed, METH_NOARGS, "Whether the hook is installed."},
    {"_line_source", LineSourceNow, METH_VARARGS, "Register (True) or clear the op line source."},
    {"thread_hooked", ThreadHooked, METH_NOARGS, "Whether this thread has the hook."},
    {"stats", Stats, METH_NOARGS, "Tallies since load."},
    {"_after_fork_child", AfterForkChild, METH_NOARGS, "Fork handler (child)."},
    {"_detach", Detach, METH_NOARGS, "atexit handler: stop reacting to kairos."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef kTrampolineDef = {"_thread_hook", (PyCFunction)(void (*)(void))Trampoline,
                                     METH_FASTCALL, "threading.setprofile hook"};

static struct PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_pytracer",
                                     "kairos' Python tracer (docs/PYTHON_STACKS.md)", -1,
                                     kMethods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pytracer(void) {
  if (PyType_Ready(&TracerStateType) < 0) return NULL;
  if (g_extra_index < 0) {
    g_extra_index = KAIROS_EXTRA_INDEX(NULL);
    if (g_extra_index < 0) {
      PyErr_SetString(PyExc_RuntimeError, "kairos: no code-object extra slot left");
      return NULL;
    }
  }
  PyObject* m = PyModule_Create(&kModule);
  if (m == NULL) return NULL;
  if (g_trampoline == NULL) g_trampoline = PyCFunction_New(&kTrampolineDef, NULL);
  if (g_trampoline == NULL || PyModule_AddObjectRef(m, "_thread_hook", g_trampoline) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
