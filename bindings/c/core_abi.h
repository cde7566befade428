/* File: core_abi.h
 * Layer: bindings/c. The private interface between libkairos.so (the preload shim,
 * shim.c) and libkairos_core.so (the implementation: every layer, abseil, zstd, libstdc++).
 * The core exports one symbol, kairos_core_get(), returning this table; the shim dlopen()s
 * the core beside itself and calls through it. Not a public ABI: the shim and the core of one
 * build go together, and the shim refuses a table whose version or size differs.
 * Plain C (the shim is C: no libstdc++ in a process that only preloads kairos).
 * Threading: the table is constant; its functions have kairos.h's threading rules.
 */
#ifndef KAIROS_BINDINGS_C_CORE_ABI_H_
#define KAIROS_BINDINGS_C_CORE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "kairos.h"
#include "model/nccl_profiler_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a member is added, removed or changes meaning. */
#define KAIROS_CORE_ABI_VERSION 5u
/* The core's file name, in the shim's directory. */
#define KAIROS_CORE_FILE_NAME "libkairos_core.so"

typedef struct kairos_core_api {
  uint32_t abi_version; /* KAIROS_CORE_ABI_VERSION */
  uint32_t size;        /* sizeof(kairos_core_api) */
  /* What a library constructor did before the split (api::OnLibraryLoad): creates the
   * profiler from the environment and, under LD_PRELOAD, waits (bounded) for a window the
   * environment opens at once. The shim calls it once, right after the dlopen() returned, so
   * it never runs inside the core's own load (under the dynamic loader's lock). */
  void (*on_load)(void);
  /* kairos.h, one member per entry point the shim forwards. */
  const char* (*last_error)(void);
  int (*init)(const char* config_text);
  int (*init_values)(const char* config_text, const char* const* keys,
                     const char* const* values, size_t count);
  void (*shutdown)(void);
  void (*range_push)(const char* name);
  void (*range_pop)(void);
  uint64_t (*range_start)(const char* name);
  void (*range_end)(uint64_t id);
  void (*mark)(const char* name);
  void (*optimizer_pre_step)(void);
  void (*optimizer_post_step)(void);
  void (*step)(void);
  int (*start)(void);
  int (*stop)(void);
  const char* (*flush)(void);
  int (*set_metadata)(const char* key, const char* value);
  const volatile uint32_t* (*recording_flag)(void);
  void (*op_push)(const char* name, const kairos_op_args* args);
  void (*op_push_flops)(const char* name, const kairos_op_args* args, int64_t flops);
  void (*op_attach)(void);
  int64_t (*current_iteration)(void);
  int (*py_attach)(kairos_py_observer observer, void* ctx);
  uint32_t (*py_name)(const char* name, size_t len);
  void (*py_call)(uint32_t name);
  void (*py_return)(void);
  /* CUDA injection (InitializeInjection); NULL in a core built without CUDA. */
  int (*initialize_injection)(void);
  /* NVTX injection (InitializeInjectionNvtx2). */
  int (*initialize_injection_nvtx2)(const void* (*get_export_table)(uint32_t));
  /* NCCL profiler plugin v4: the core's functions (the shim exports ncclProfiler_v4). */
  const kairos_nccl_profiler_v4_t* nccl;
  /* Appended in version 2: allocator events (kairos_memory_event). */
  void (*memory_event)(const void* addr, int64_t bytes, int64_t total_allocated,
                       int64_t total_reserved, int32_t device_type, int32_t device_id);
  /* Appended in version 2: operator inputs as raw sizes (kairos_op_push_inputs). */
  void (*op_push_inputs)(const char* name, const kairos_op_args* args, int64_t flops,
                         const kairos_op_inputs* inputs);
  /* Appended in version 3: Python call lines (kairos_py_call_line, kairos_py_line_source). */
  void (*py_call_line)(uint32_t name, uint32_t caller_line);
  void (*py_line_source)(kairos_py_line_fn fn);
  /* Appended in version 4: operator scopes with nesting kept by kairos (kairos_op_enter/exit). */
  int (*op_enter)(const char* name, const kairos_op_args* args, int64_t flops,
                  const uint64_t* input_words, uint32_t n_input_words, uint64_t thread_key);
  void (*op_exit)(uint64_t thread_key);
  /* Appended in version 5: an operator's inputs written in place (kairos_op_enter_captured). */
  int (*op_enter_captured)(const char* name, const kairos_op_args* args, int64_t flops,
                           kairos_op_capture_fn capture, void* ctx, uint64_t thread_key);
} kairos_core_api;

typedef const kairos_core_api* (*kairos_core_get_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KAIROS_BINDINGS_C_CORE_ABI_H_ */
