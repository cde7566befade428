// File: py_line_source.cc
// Layer: kairos_activity. The Python tracer's line source (kairos_py_line_source): the function
// the recorder calls, on the recording thread, for the "Python line" of a framework operator or
// allocator event (cpu_recorder.h PythonLineNow). A hot word of the recorder's process part
// (ProcessRecorder::python_line_source): the op and memory hot paths are inline in
// cpu_recorder.h and read it with one relaxed load, beside the epoch.
#include "activity/cpu_recorder.h"

namespace kairos::internal {

void SetPythonLineSource(PythonLineFn fn) {
  g_recorder.python_line_source.store(fn, std::memory_order_release);
}

}  // namespace kairos::internal
