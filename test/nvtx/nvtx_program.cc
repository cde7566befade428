// File: nvtx_program.cc
// Layer: test/nvtx. An NVTX-annotated program built with NVIDIA's nvtx3 headers only: it
// never calls kairos. nvtx_injection_test runs it with NVTX_INJECTION64_PATH=libkairos.so
// and a duration window in the environment, then checks the trace against the exact
// sequence below. It prints the values the NVTX calls returned (nesting levels), one per
// line, for the test to compare.
// Threading: main thread plus one worker (cross-thread range end, thread naming).
#include <dlfcn.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <nvtx3/nvToolsExt.h>

extern "C" int NvtxPeerWork();

namespace {

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

nvtxEventAttributes_t Attr(const char* message) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

// Test-only synchronisation: wait until the tool (loaded by NVTX on the first call) is
// recording, so every annotation below falls inside the window. Reads the flag through the
// already-loaded library; the annotations themselves use NVTX only.
bool WaitForRecording() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  void* lib = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
  if (lib == nullptr) return false;
  using FlagFn = const volatile uint32_t* (*)();
  auto flag_fn = reinterpret_cast<FlagFn>(dlsym(lib, "kairos_recording_flag"));
  if (flag_fn == nullptr) return false;
  const volatile uint32_t* flag = flag_fn();
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (*flag == 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) return false;
    sched_yield();
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "first") == 0) {
    // No waiting: the range that makes NVTX load the tool must itself be recorded.
    nvtxRangePushA("first-range");
    nvtxRangePop();
    std::puts("first");
    std::fflush(stdout);
    return 0;
  }
  nvtxNameOsThreadA(Tid(), "nvtx-main");  // first NVTX call: NVTX loads the tool
  if (!WaitForRecording()) {
    std::puts("not recording");
    return 2;
  }
  // Loaded by NVTX (RTLD_LOCAL), the tool still puts its C ABI in the global scope, as
  // under LD_PRELOAD: a program finds kairos_step the documented way.
  std::printf("kairos_step in the global scope: %s\n",
              dlsym(RTLD_DEFAULT, "kairos_step") != nullptr ? "yes" : "no");
  nvtxNameCategoryA(1, "Compute");

  // Nesting in the default domain; color, category and u64 payload on the inner range.
  std::printf("%d\n", nvtxRangePushA("outer"));  // 0
  nvtxEventAttributes_t inner = Attr("inner");
  inner.category = 1;
  inner.colorType = NVTX_COLOR_ARGB;
  inner.color = 0xFF112233u;
  inner.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  inner.payload.ullValue = 42;
  std::printf("%d\n", nvtxRangePushEx(&inner));  // 1
  std::printf("%d\n", nvtxRangePop());           // 1
  std::printf("%d\n", nvtxRangePop());           // 0
  nvtxMarkA("mark-a");

  // A named domain: category, registered string, double payload, domain mark.
  nvtxDomainHandle_t app = nvtxDomainCreateA("app");
  nvtxDomainNameCategoryA(app, 7, "IO");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(app, "registered-name");
  nvtxEventAttributes_t r = Attr(nullptr);
  r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r.message.registered = reg;
  r.category = 7;
  r.colorType = NVTX_COLOR_ARGB;
  r.color = 0xFFAABBCCu;
  r.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  r.payload.dValue = 2.5;
  std::printf("%d\n", nvtxDomainRangePushEx(app, &r));  // 0
  std::printf("%d\n", nvtxDomainRangePop(app));         // 0
  nvtxEventAttributes_t m = Attr("app-mark");
  m.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  m.payload.iValue = -5;
  nvtxDomainMarkEx(app, &m);

  // A filtered domain (KAIROS_NVTX_DOMAINS=-noisy): nothing recorded, no tracking.
  nvtxDomainHandle_t noisy = nvtxDomainCreateA("noisy");
  nvtxEventAttributes_t h = Attr("hidden");
  std::printf("%d\n", nvtxDomainRangePushEx(noisy, &h));  // -2
  std::printf("%d\n", nvtxDomainRangePop(noisy));         // -2
  nvtxDomainMarkEx(noisy, &h);

  // Wide strings, a float payload on a start/end range.
  std::printf("%d\n", nvtxRangePushW(L"wide-\u00e9\u2713"));  // 0
  std::printf("%d\n", nvtxRangePop());                          // 0
  nvtxEventAttributes_t f = Attr("float-range");
  f.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
  f.payload.fValue = 1.5f;
  nvtxRangeEnd(nvtxRangeStartEx(&f));

  // Cross-thread start/end; the worker names itself and pushes its own range.
  const nvtxRangeId_t cross = nvtxRangeStartA("cross");
  std::thread worker([cross] {
    nvtxNameOsThreadA(Tid(), "nvtx-worker");
    nvtxRangePushA("worker-range");
    nvtxRangePop();
    nvtxRangeEnd(cross);
  });
  worker.join();

  // The second shared object (its own NVTX instance) annotates in the same domain.
  std::printf("%d\n", NvtxPeerWork());  // 0

  // One pop too many: counted, returns -1.
  std::printf("%d\n", nvtxRangePop());  // -1

  // Still open at exit: closed at the window end and marked unfinished.
  std::printf("%d\n", nvtxRangePushA("left-open"));  // 0
  std::fflush(stdout);
  return 0;
}
