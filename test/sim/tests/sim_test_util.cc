// File: test/sim/tests/sim_test_util.cc
// Layer: simulator tests: CUPTI activity collector.
// Threading: see sim_test_util.h.
#include "sim_test_util.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace ksim_test {
namespace {

std::mutex g_mu;
std::vector<Record> g_records;
std::vector<std::thread::id> g_threads;
size_t g_buffers = 0;
size_t g_buffer_size = 256 * 1024;

void Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  size_t want;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    want = g_buffer_size;
  }
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, want));
  *size = want;
  *max_records = 0;
}

void Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Record> got;
  CUpti_Activity* rec = nullptr;
  uint8_t* prev = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    auto* cur = reinterpret_cast<uint8_t*>(rec);
    if (prev != nullptr) got.emplace_back(prev, cur);
    prev = cur;
  }
  if (prev != nullptr) got.emplace_back(prev, buffer + valid);
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_mu);
  for (Record& r : got) g_records.push_back(std::move(r));
  g_threads.push_back(std::this_thread::get_id());
  ++g_buffers;
}

}  // namespace

void EnsureRegistered() {
  static bool done = [] {
    cuptiActivityRegisterCallbacks(Requested, Completed);
    return true;
  }();
  (void)done;
}

void SetBufferSize(size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_buffer_size = bytes;
}

std::vector<Record> Take(uint32_t flush_flag, bool no_sync) {
  if (!no_sync) cudaDeviceSynchronize();
  cuptiActivityFlushAll(flush_flag);
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Record> out;
  out.swap(g_records);
  return out;
}

size_t DeliveredBuffers() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_buffers;
}

std::vector<std::thread::id> DeliveringThreads() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_threads;
}

Kinds::Kinds(std::initializer_list<CUpti_ActivityKind> kinds) : kinds_(kinds) {
  EnsureRegistered();
  Take();  // start from an empty record stream
  for (CUpti_ActivityKind k : kinds_) cuptiActivityEnable(k);
}

Kinds::~Kinds() {
  for (CUpti_ActivityKind k : kinds_) cuptiActivityDisable(k);
  Take();
}

}  // namespace ksim_test
