// File: test/sim/tests/cupti_dump.cc
// Layer: simulator tests: a small CUPTI client written against the real
//        CUDA 13 headers, loaded as a CUDA injection library.
// Threading: buffer callbacks may run on CUPTI's worker thread; the record
//            tables are guarded by a mutex.
//
// CUDA_INJECTION64_PATH=libksim_cupti_dump.so <program> prints one line per
// activity record (unless KSIM_DUMP_QUIET=1) and, at exit, a summary with
// consistency checks: GPU records whose correlation id has no runtime record,
// and streams whose records overlap or go back in time.
#include <cupti.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

std::mutex g_mu;
std::map<std::string, size_t> g_counts;
std::set<uint32_t> g_api_corr;
std::vector<uint32_t> g_gpu_corr;
std::map<std::pair<uint32_t, uint32_t>, uint64_t> g_stream_end;  // (ctx, stream) -> last end
size_t g_non_monotonic = 0;
size_t g_dropped = 0;
bool g_quiet = false;

void CheckStream(uint32_t ctx, uint32_t stream, uint64_t start, uint64_t end) {
  auto key = std::make_pair(ctx, stream);
  auto it = g_stream_end.find(key);
  if (it != g_stream_end.end() && start < it->second) ++g_non_monotonic;
  if (end < start) ++g_non_monotonic;
  g_stream_end[key] = end;
}

const char* ApiName(CUpti_CallbackDomain domain, uint32_t cbid) {
  const char* name = "?";
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) name = "?";
  return name;
}

void Print(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Print(const char* fmt, ...) {
  if (g_quiet) return;
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
}

void Handle(const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      ++g_counts["kernel"];
      g_gpu_corr.push_back(k->correlationId);
      CheckStream(k->contextId, k->streamId, k->start, k->end);
      Print("KERNEL corr=%u dev=%u ctx=%u stream=%u start=%" PRIu64 " dur_ns=%" PRIu64
            " grid=(%d,%d,%d) block=(%d,%d,%d) graph=%u node=%" PRIu64 " name=%s\n",
            k->correlationId, k->deviceId, k->contextId, k->streamId, k->start, k->end - k->start, k->gridX,
            k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->graphId, k->graphNodeId,
            k->name != nullptr ? k->name : "(null)");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      ++g_counts["memcpy"];
      g_gpu_corr.push_back(m->correlationId);
      CheckStream(m->contextId, m->streamId, m->start, m->end);
      Print("MEMCPY corr=%u kind=%u src=%u dst=%u async=%u bytes=%" PRIu64 " stream=%u start=%" PRIu64
            " dur_ns=%" PRIu64 "\n",
            m->correlationId, m->copyKind, m->srcKind, m->dstKind, m->flags, m->bytes, m->streamId, m->start,
            m->end - m->start);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      ++g_counts["memset"];
      g_gpu_corr.push_back(m->correlationId);
      CheckStream(m->contextId, m->streamId, m->start, m->end);
      Print("MEMSET corr=%u value=%u bytes=%" PRIu64 " stream=%u\n", m->correlationId, m->value, m->bytes,
            m->streamId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      ++g_counts[runtime ? "runtime" : "driver"];
      if (runtime) g_api_corr.insert(a->correlationId);
      Print("%s corr=%u cbid=%u name=%s ret=%u dur_ns=%" PRIu64 "\n", runtime ? "RUNTIME" : "DRIVER",
            a->correlationId, a->cbid,
            ApiName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid), a->returnValue,
            a->end - a->start);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      ++g_counts["sync"];
      Print("SYNC corr=%u type=%u stream=%u dur_ns=%" PRIu64 "\n", s->correlationId, s->type, s->streamId,
            s->end - s->start);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      ++g_counts["external"];
      Print("EXTERNAL corr=%u kind=%u id=%" PRIu64 "\n", e->correlationId, e->externalKind, e->externalId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(rec);
      ++g_counts["graph"];
      g_gpu_corr.push_back(g->correlationId);
      Print("GRAPH corr=%u graph=%u stream=%u dur_ns=%" PRIu64 "\n", g->correlationId, g->graphId, g->streamId,
            g->end - g->start);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      ++g_counts["device"];
      Print("DEVICE id=%u sms=%u cc=%u.%u mem=%" PRIu64 " name=%s\n", d->id, d->numMultiprocessors,
            d->computeCapabilityMajor, d->computeCapabilityMinor, d->globalMemorySize, d->name);
      std::free(const_cast<char*>(d->name));  // client-owned, as documented
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(rec);
      ++g_counts["context"];
      Print("CONTEXT id=%u dev=%u null_stream=%u\n", c->contextId, c->deviceId, c->nullStreamId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      ++g_counts["overhead"];
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(rec);
      ++g_counts["memory"];
      Print("MEMORY op=%u kind=%u bytes=%" PRIu64 " corr=%u\n", m->memoryOperationType, m->memoryKind, m->bytes,
            m->correlationId);
      break;
    }
    default:
      ++g_counts["other"];
      break;
  }
}

void BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 64 * 1024;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mu);
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) Handle(rec);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  g_dropped += dropped;
  std::free(buffer);
}

void AtExit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mu);
  size_t unmatched = 0;
  for (uint32_t c : g_gpu_corr) unmatched += g_api_corr.count(c) == 0 ? 1 : 0;
  std::printf("cupti-dump summary:");
  for (const auto& [name, n] : g_counts) std::printf(" %s=%zu", name.c_str(), n);
  std::printf(" dropped=%zu unmatched_gpu_correlation=%zu non_monotonic_stream_records=%zu\n", g_dropped, unmatched,
              g_non_monotonic);
  std::fflush(stdout);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  g_quiet = std::getenv("KSIM_DUMP_QUIET") != nullptr;
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS || version != CUPTI_API_VERSION) {
    std::fprintf(stderr, "cupti-dump: CUPTI version %u, built for %u\n", version, CUPTI_API_VERSION);
    return 0;
  }
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
      CUPTI_ACTIVITY_KIND_DEVICE,            CUPTI_ACTIVITY_KIND_CONTEXT,  CUPTI_ACTIVITY_KIND_MEMORY2};
  for (CUpti_ActivityKind k : kinds) {
    CUptiResult r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) std::fprintf(stderr, "cupti-dump: enable kind %d failed: %d\n", k, r);
  }
  std::atexit(AtExit);
  return 1;
}
