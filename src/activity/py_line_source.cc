// File: py_line_source.cc
// Layer: kairos_activity. The Python tracer's line source (kairos_py_line_source): the function
// the recorder calls, on the recording thread, for the "Python line" of a framework operator or
// allocator event (cpu_recorder.h PythonLineNow). Its own global, not a field of the recorder's
// ProcessRecorder: the op and memory hot paths are inline in cpu_recorder.h and read it with one
// relaxed load, like g_cpu_epoch. docs/ARCHITECTURE.md lists it.
#include "activity/cpu_recorder.h"

namespace kairos::internal {

std::atomic<PythonLineFn> g_python_line_source{nullptr};

void SetPythonLineSource(PythonLineFn fn) {
  g_python_line_source.store(fn, std::memory_order_release);
}

}  // namespace kairos::internal
