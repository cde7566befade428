// File: nvtx_peer.cc
// Layer: test/nvtx. A shared object that uses NVTX on its own (its own hidden copy of the
// NVTX globals, so NVTX initialises kairos a second time for it). It annotates in the
// domain "app", which the executable also creates: both must see one domain.
// Threading: called from the program's main thread.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) int NvtxPeerWork() {
  nvtxDomainHandle_t app = nvtxDomainCreateA("app");
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 7;  // named "IO" by the executable in the same domain
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "peer-range";
  const int level = nvtxDomainRangePushEx(app, &a);
  nvtxDomainRangePop(app);
  return level;
}
