/* File: kairos.h
 * Layer: the public C ABI of libkairos.so (plain C99; no C++ types).
 * Threading: every function may be called from any thread, before kairos_init (the library
 * then initialises itself from the environment, or does nothing), after kairos_shutdown, and
 * in a forked child (which starts with a clean, idle profiler).
 *
 * Errors: fallible functions return an int: KAIROS_OK (0) or a negative KAIROS_ERR_* code
 * (values pinned; new codes are appended). kairos_last_error() then holds a one-line
 * message for the calling thread. No function ever throws or aborts: every entry point has
 * an exception barrier; an exception inside kairos becomes KAIROS_ERR_INTERNAL (NULL, 0 or
 * nothing for functions without a code) and one rate-limited error line on stderr.
 *
 * Blocking: each function states the longest it can block the calling thread ("Blocks:").
 * The bounds are fixed in the library; the one configurable bound,
 * KAIROS_EXIT_FLUSH_TIMEOUT_MS, is taken from the base config only (file, environment or
 * kairos_init; an on-demand daemon request cannot change it) and never exceeds 60 s.
 * The first call of a process (any function but the hot path, kairos_version,
 * kairos_status_string, kairos_last_error and kairos_current_iteration) also loads the
 * implementation, libkairos_core.so beside libkairos.so (libkairos.so itself is a libc-only
 * shim, so a process that preloads kairos and configures nothing stays cheap), and creates the
 * profiler from the environment: a few ms, plus the wait of a startup window under
 * LD_PRELOAD. When the environment configures kairos (a KAIROS_* / KINETO_* variable), this
 * happens at load instead. If libkairos_core.so cannot be loaded, one error line is printed,
 * the hot path does nothing, and every call with a code returns KAIROS_ERR_UNAVAILABLE with
 * the reason in kairos_last_error().
 *
 * Recording cost: the range, mark and step functions are the hot path. When no trace is
 * recording they cost one relaxed atomic load and a branch (plus the call itself through
 * the PLT); callers that want to skip even the call can test kairos_recording_flag() inline.
 */
#ifndef KAIROS_H_
#define KAIROS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KAIROS_BUILDING_LIBRARY)
#define KAIROS_API __attribute__((visibility("default")))
#else
#define KAIROS_API
#endif

#define KAIROS_VERSION_MAJOR 0
#define KAIROS_VERSION_MINOR 1
#define KAIROS_VERSION_PATCH 0
#define KAIROS_VERSION_NUMBER \
  (KAIROS_VERSION_MAJOR * 10000 + KAIROS_VERSION_MINOR * 100 + KAIROS_VERSION_PATCH)

/* Error codes (pinned). */
#define KAIROS_OK 0
#define KAIROS_ERR_INVALID_ARGUMENT (-1)    /* bad config text or argument */
#define KAIROS_ERR_FAILED_PRECONDITION (-2) /* e.g. "profiler busy", nothing recording */
#define KAIROS_ERR_UNAVAILABLE (-3)         /* timed out waiting for the controller, or no libkairos_core.so */
#define KAIROS_ERR_RESOURCE_EXHAUSTED (-4)  /* e.g. cannot start a thread */
#define KAIROS_ERR_IO (-5)                  /* the trace could not be written */
#define KAIROS_ERR_INTERNAL (-6)            /* a kairos bug (or std::bad_alloc) */
#define KAIROS_ERR_NOT_FOUND (-7)           /* no trace was written */

/* since 0.1: the runtime library's KAIROS_VERSION_NUMBER (compare with the header's). */
KAIROS_API int32_t kairos_version(void); /* Blocks: never. */

/* since 0.1: a static description of `code` ("ok", "invalid argument", ...). */
KAIROS_API const char* kairos_status_string(int32_t code); /* Blocks: never. */

/* since 0.1: the message of the last failed kairos call on this thread ("" if none). The
 * pointer stays valid until the next kairos call on the same thread. Blocks: never. */
KAIROS_API const char* kairos_last_error(void);

/* since 0.1: initialises kairos. `config_text` is a Kineto-syntax config (KEY=VALUE lines,
 * '#' comments) parsed on top of the environment's config (KAIROS_CONFIG / KINETO_CONFIG
 * file, KAIROS_CONFIG_TEXT); NULL or "" means "environment only". It becomes the base config
 * of kairos_start() and later requests. If it names a window (PROFILE_START_TIME,
 * PROFILE_START_ITERATION[_ROUNDUP], ACTIVITIES_ITERATIONS, ACTIVITIES_DURATION_MSECS/_SECS,
 * ACTIVITIES_WARMUP_*), that window is scheduled now. On error the previous config stays in
 * force; kairos_last_error() names the key, line and reason. A window is rejected with
 * KAIROS_ERR_FAILED_PRECONDITION "profiler busy" while another trace is pending, recording
 * or being written; the config is then not installed either. May be called again; re-enables
 * kairos after kairos_shutdown(). Blocks: only for the session mutex (microseconds; never
 * behind a trace being written), and for the first call's initialisation. */
KAIROS_API int kairos_init(const char* config_text);

/* since 0.1: kairos_init(config_text), then `count` (at most 64) KEY=VALUE settings given as
 * data: values[i] is the value of keys[i] byte for byte, never parsed as config text, so a
 * path may contain '#', '=', ';' or leading and trailing blanks (in config text '#' starts a
 * comment and '=' splits the line). The key's type check, the 4096-byte limit and the control
 * character rule still apply; an error names "config value <i>" (1-based) and the key. A
 * value overrides the text's line for the same key. Otherwise exactly kairos_init (same
 * errors, window scheduling and blocking). Used by the Python package for output paths. */
KAIROS_API int kairos_init_values(const char* config_text, const char* const* keys,
                                  const char* const* values, size_t count);

/* since 0.1: closes a window that is still open and waits for its trace, cancels one that
 * has not opened yet, and refuses new traces until the next kairos_init().
 * Blocks: at most KAIROS_EXIT_FLUSH_TIMEOUT_MS (base config; default 5 s, never over 60 s).
 * The same bound applies at exit() and, with KAIROS_FLUSH_ON_SIGNAL=1, to SIGTERM/SIGINT. */
KAIROS_API void kairos_shutdown(void);

/* since 0.1: opens a nested range on the calling thread; closed by kairos_range_pop() on the
 * same thread. `name` is copied when needed (temporaries are fine); NULL records "".
 * Blocks: never (range, mark and step functions lock nothing on their fast path; the first
 * record of a thread in a window takes the thread registry's mutex once). */
KAIROS_API void kairos_range_push(const char* name);
/* since 0.1: closes the innermost range opened by kairos_range_push() on this thread. */
KAIROS_API void kairos_range_pop(void);

/* since 0.1: opens a range that may end on another thread. Returns its id (0 when nothing
 * records: kairos_range_end(0) does nothing). */
KAIROS_API uint64_t kairos_range_start(const char* name);
/* since 0.1: closes the range `id` returned by kairos_range_start(), from any thread. */
KAIROS_API void kairos_range_end(uint64_t id);

/* since 0.1: an instant event on the calling thread. */
KAIROS_API void kairos_mark(const char* name);

/* since 0.1: iteration hooks. kairos_optimizer_pre_step() opens the range "Optimizer.step"
 * on the calling thread. kairos_optimizer_post_step() closes it (if this thread opened it)
 * and then counts one iteration, exactly like kairos_step(). kairos_step() counts one
 * iteration: iteration N+1 begins, and while recording the ProfilerStep#N range of the trace
 * ends here. Call post_step OR step once per iteration, not both. Iteration windows
 * (PROFILE_START_ITERATION, ACTIVITIES_ITERATIONS) count these calls. Blocks: never, except
 * at the few boundaries a trace waits for (its warm-up, start and end), where the step takes
 * the session mutex to wake the session thread (microseconds). */
KAIROS_API void kairos_optimizer_pre_step(void);
KAIROS_API void kairos_optimizer_post_step(void);
KAIROS_API void kairos_step(void);

/* since 0.1: synchronous session. kairos_start() begins recording now with the base config
 * (it cancels an on-demand trace that is still warming up; KAIROS_ERR_FAILED_PRECONDITION
 * "profiler busy" while another trace records). kairos_stop() closes the window at this
 * instant; the trace is written on a kairos thread (use kairos_flush() to wait for it).
 * Blocks: kairos_start until the window is open, at most 10 s (then KAIROS_ERR_UNAVAILABLE
 * and the window is cancelled); kairos_stop never (session mutex only). */
KAIROS_API int kairos_start(void);
KAIROS_API int kairos_stop(void);

/* since 0.1: ends a recording window now (a window still warming up is cancelled), waits
 * until its trace is written and returns the path; with no trace active it returns the
 * outcome of the most recent trace: its path, or NULL with that trace's error (so
 * kairos_stop() then kairos_flush() answers the same whenever the write finishes).
 * NULL on error (KAIROS_ERR_NOT_FOUND if no trace was ever written; see
 * kairos_last_error()). The string stays valid until the next kairos_flush() on this thread.
 * A window that had not opened yet is cancelled at once (KAIROS_ERR_NOT_FOUND).
 * Blocks: until the trace is written, at most 60 s (then KAIROS_ERR_UNAVAILABLE; the trace
 * is still written in the background). */
KAIROS_API const char* kairos_flush(void);

/* since 0.1: a key/value pair added to the top-level metadata of every later trace (a key
 * set again replaces its value). NULL or empty key, a key over 256 bytes or a value over
 * 64 KiB: KAIROS_ERR_INVALID_ARGUMENT; a 1025th distinct key: KAIROS_ERR_RESOURCE_EXHAUSTED
 * (nothing changes). Blocks: session mutex only (constant time). */
KAIROS_API int kairos_set_metadata(const char* key, const char* value);

/* since 0.1: the address of the recording flag: non-zero while a window records. Valid for
 * the life of the process; read it with a plain load to skip calls when not recording:
 *   static const volatile uint32_t* rec; if (!rec) rec = kairos_recording_flag();
 *   if (*rec) kairos_range_push("x");
 * Blocks: never.
 */
KAIROS_API const volatile uint32_t* kairos_recording_flag(void);

/* ---- Framework operators (bindings/c/kairos_ops.cc; used by the torch bridge) ---- */

/* since 0.1: client metadata of one framework operator (PyTorch's RecordFunction). */
typedef struct kairos_op_args {
  int64_t sequence_nr;         /* "Sequence number" (and "Fwd thread id") written when >= 0 */
  uint64_t fwd_thread_id;      /* "Fwd thread id" */
  uint64_t record_function_id; /* "Record function id" */
  const char* input_dims;      /* "Input Dims" as JSON array text ("[[2, 3], [3, 4]]"); NULL = none */
  const char* input_types;     /* "Input type" as JSON array text ("[\"float\"]"); NULL = none */
} kairos_op_args;

/* since 0.1: opens a nested range on the calling thread written as a "cpu_op" event (not
 * "user_annotation") with `args` (NULL = none); close it with kairos_range_pop(). GPU work
 * launched inside it links to it ("External id"), like any range. Strings are copied when
 * needed. Text that is not a plain JSON array is written as a JSON string. Hot path: one
 * relaxed load while nothing records. Blocks: never. */
KAIROS_API void kairos_op_push(const char* name, const kairos_op_args* args);

/* since 0.1: kairos_op_push() with the operator's floating-point operation count, written as
 * the cpu_op's "flops" arg (flops < 0: none, as kairos_op_push). A trace whose config does
 * not set PROFILE_WITH_FLOPS=true drops it at collection (after kairos_op_attach()), so the
 * bridge may pass it whenever it can compute it. Hot path as kairos_op_push. */
KAIROS_API void kairos_op_push_flops(const char* name, const kairos_op_args* args,
                                     int64_t flops);

/* since 0.1: an operator's inputs as raw sizes, for "Input Dims" / "Input type" formatted at
 * collection (on the session's thread) instead of by the caller on its hot path. Input i has
 * ranks[i] sizes, stored one input after another in `sizes`; types[i] is its type text
 * without quotes ("float", "Scalar", "" for none), a string that stays valid and unchanged
 * for the life of the process (only its address is recorded; the text is read when the
 * trace is collected, at most 256 bytes of it). A rank of
 * 0 writes "[]" (a 0-d tensor, or an input that is not a tensor). */
typedef struct kairos_op_inputs {
  uint32_t count;           /* inputs */
  const uint32_t* ranks;    /* count entries */
  const int64_t* sizes;     /* sum(ranks) entries */
  const char* const* types; /* count entries; NULL entry = "" */
} kairos_op_inputs;

/* since 0.1: kairos_op_push_flops() with the operator's inputs as raw sizes (`inputs` NULL =
 * none; args->input_dims / input_types are then ignored). "Input Dims" is written as
 * [[d0, d1], [], ...] and "Input type" as ["float", "Scalar", ...], byte for byte what the
 * text form of kairos_op_push would carry. Inputs that do not fit the thread's args area
 * (over 256 inputs or 1024 sizes, or a full area) are left out and counted with the dropped
 * args. Hot path as kairos_op_push: no lock, no allocation. */
KAIROS_API void kairos_op_push_inputs(const char* name, const kairos_op_args* args,
                                      int64_t flops, const kairos_op_inputs* inputs);

/* since 0.1: a framework operator scope whose nesting kairos keeps per thread: one call at
 * the operator's start and one at its end, the caller keeping no thread-local state (the torch
 * bridge's hot path). kairos_op_enter() records what kairos_op_push_inputs() records or, with
 * `args` NULL, a plain range as kairos_range_push() does (a framework's user scope; `flops`
 * and the inputs are then ignored), and counts the scope on the calling thread. The inputs
 * come packed as 8-byte words, the form kairos stores them in (copied as one block): per
 * input its rank r, the address of its type text (as kairos_op_inputs' types[i]: valid and
 * unchanged for the life of the process; 0 = ""), then its r sizes. `input_words` NULL =
 * none; 0 words = no inputs ("[]"); more than KAIROS_OP_MAX_INPUT_WORDS words, or words
 * that do not fit the thread's args area, are left out and counted with the dropped args;
 * words that do not parse (a rank past the end) are written without shapes. `thread_key` is
 * the framework's id of the calling thread (0 = none). Returns 1 when this is the calling
 * thread's first scope of the window (a bridge may set up per-thread state then), 0
 * otherwise and while nothing records. Hot path as kairos_op_push. */
#define KAIROS_OP_MAX_INPUT_WORDS 1536u
KAIROS_API int kairos_op_enter(const char* name, const kairos_op_args* args, int64_t flops,
                               const uint64_t* input_words, uint32_t n_input_words,
                               uint64_t thread_key);

/* since 0.1: kairos_op_enter() for an operator (`args` not NULL) whose inputs the caller
 * writes straight into kairos' storage, in the same packed words: while a window records,
 * kairos calls `capture(ctx, words, room)` once, on the calling thread, before anything of
 * the operator is stored for the collector to see; it writes at most `room` words at `words`
 * and returns how many (0 = no inputs, "[]"), or any count over `room` to leave the inputs out
 * (counted with the dropped args: an operator with more inputs than fit, or one whose inputs
 * could not be read). `room` is at most KAIROS_OP_MAX_INPUT_WORDS and less when the thread's
 * args area is nearly full. `capture` must not throw, block or call into kairos; it is not
 * called while nothing records or when the args area is full (the operator is then recorded
 * as kairos_op_enter records it without inputs). This saves the caller's copy of the words
 * and kairos' copy of them. Returns as kairos_op_enter. Hot path as kairos_op_push. */
typedef uint32_t (*kairos_op_capture_fn)(void* ctx, uint64_t* words, uint32_t room);
KAIROS_API int kairos_op_enter_captured(const char* name, const kairos_op_args* args,
                                        int64_t flops, kairos_op_capture_fn capture,
                                        void* ctx, uint64_t thread_key);

/* since 0.1: closes the innermost scope kairos_op_enter() opened on the calling thread in
 * the current window, as kairos_range_pop() would. Does nothing when there is none (the
 * scope began before the window or in an earlier one, or was not recorded), or when
 * `thread_key` is non-zero and differs from the calling thread's (the `thread_key` of its
 * last kairos_op_enter): an asynchronous scope ending on another thread stays open on the
 * thread that opened it, written unfinished, instead of closing an unrelated range. Ranges
 * pushed with kairos_range_push() in between are not counted: pop them yourself. Hot path:
 * one relaxed load while nothing records. Blocks: never. */
KAIROS_API void kairos_op_exit(uint64_t thread_key);

/* since 0.1: a framework bridge calls this once before its first kairos_op_push() (later
 * calls do nothing). From then on a trace whose config does not set
 * PROFILE_REPORT_INPUT_SHAPES=true has "Input Dims" / "Input type" removed from its cpu_op
 * events, so the bridge may pass shapes whenever its framework hands it the inputs.
 * Blocks: only for the session mutex (microseconds). */
KAIROS_API void kairos_op_attach(void);

/* since 0.1: the iteration the process is in: the number of kairos_step() /
 * kairos_optimizer_post_step() calls so far (PROFILE_START_ITERATION counts the same).
 * Blocks: never. */
KAIROS_API int64_t kairos_current_iteration(void);

/* ---- Python stacks (bindings/c/kairos_ops.cc; used by the kairos package's tracer,
 * docs/PYTHON_STACKS.md) ---- */

/* Window observer flags: what the window about to warm up asks for. */
#define KAIROS_PY_STACKS 1u  /* PROFILE_WITH_STACK=true */
#define KAIROS_PY_MODULES 2u /* PROFILE_WITH_MODULES=true */
typedef void (*kairos_py_observer)(uint32_t flags, void* ctx);

/* since 0.1: attaches a Python tracer: `observer(flags, ctx)` is called on a kairos thread when
 * a window whose config asks for Python stacks or modules begins its warm-up (flags != 0), and
 * with flags 0 when that window stops recording or is cancelled. It must not block (signal a
 * thread of your own). Once per process (a forked child keeps it); returns 1 when attached, 0
 * when a tracer was already attached or observer is NULL. Blocks: the session mutex. */
KAIROS_API int kairos_py_attach(kairos_py_observer observer, void* ctx);

/* since 0.1: interns a Python frame name (`len` bytes, UTF-8, e.g. "train.py(12): step") and
 * returns its id (>= 1), valid for the life of the process image (re-intern in a forked
 * child); 0 when the process-wide name table is full (the frame is then written as
 * "<python name dropped>" and counted). Cold: call once per code object. Blocks: a mutex. */
KAIROS_API uint32_t kairos_py_name(const char* name, size_t len);

/* since 0.1: a Python frame named `name` (kairos_py_name) entered / the innermost one entered
 * on this thread left. Written as python_function events with PyTorch's "Python id",
 * "Python parent id" and "Python thread". Hot path: one relaxed load while nothing records.
 * Blocks: never. */
KAIROS_API void kairos_py_call(uint32_t name);
KAIROS_API void kairos_py_return(void);

/* since 0.1: kairos_py_call() with the line of the calling (parent) frame at which the call
 * was made (0 = unknown), written as the python_function's "Python caller line" arg: the line
 * of the user's code that led to what runs under the frame. Hot path as kairos_py_call. */
KAIROS_API void kairos_py_call_line(uint32_t name, uint32_t caller_line);

/* since 0.1: the line the calling thread's innermost Python frame is at now (0 = unknown). */
typedef uint32_t (*kairos_py_line_fn)(void);
/* since 0.1: sets (NULL: clears) the function kairos calls on the recording thread, without
 * the GIL, when a framework operator (kairos_op_push*) or an allocator event
 * (kairos_memory_event) is recorded, for the "Python line" arg of its cpu_op / [memory] event.
 * It must not block, allocate, take locks or call into the interpreter. Blocks: never. */
KAIROS_API void kairos_py_line_source(kairos_py_line_fn fn);

/* since 0.1: one event of a framework's own allocator (the torch bridge reports PyTorch's
 * caching allocator with it): `bytes` > 0 an allocation at `addr`, < 0 a free; the
 * allocator's totals on that device after the event; `device_type` is c10::DeviceType (0 CPU,
 * 1 CUDA), `device_id` the ordinal (-1 for host memory). Written as PyTorch's "[memory]"
 * instant (docs/MEMORY.md) on the calling thread, under its innermost open range; kept only
 * in a trace whose config sets PROFILE_PROFILE_MEMORY=true. Hot path: one relaxed load while
 * nothing records; a full args area drops the event (counted). Blocks: never. */
KAIROS_API void kairos_memory_event(const void* addr, int64_t bytes, int64_t total_allocated,
                                    int64_t total_reserved, int32_t device_type,
                                    int32_t device_id);

#ifdef __cplusplus
}
#endif

#endif /* KAIROS_H_ */
