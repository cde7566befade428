// File: detail_rows.cc — see json_reader.h (internal::DetailRows).
// Layer: kairos_output. The side-table rows the trace readers (JSON and Perfetto) add: kept
// as read, or, for the analysis read, cut to the fields src/analysis reads and interned so
// that equal rows are stored once.
// Threading: no shared state.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "output/json_reader.h"

namespace kairos {

template <typename Row>
uint32_t internal::DetailRows::Intern(const Row& row, std::vector<Row>& table,
                                      absl::flat_hash_map<std::string, uint32_t>& index) {
  // absl's string_view: this absl build's heterogeneous lookup takes it, not std's.
  const absl::string_view bytes(reinterpret_cast<const char*>(&row), sizeof(Row));
  auto it = index.find(bytes);
  if (it != index.end()) return it->second;
  const uint32_t i = static_cast<uint32_t>(table.size());
  table.push_back(row);
  index.emplace(std::string(bytes), i);
  return i;
}

// Each for_analysis row copies the fields src/analysis reads into a zero-filled row (so the
// padding and every unread field are zero) and interns it. A field the analysis starts to
// read must be copied here too.
uint32_t internal::DetailRows::Add(const KernelDetail& row, std::vector<KernelDetail>& table) {
  if (!for_analysis_) {
    table.push_back(row);
    return static_cast<uint32_t>(table.size() - 1);
  }
  KernelDetail k;
  memset(&k, 0, sizeof(k));
  memcpy(k.grid, row.grid, sizeof(k.grid));  // ShapeOf (sm_metrics.cc): blocks, occupancy
  memcpy(k.block, row.block, sizeof(k.block));
  k.registers_per_thread = row.registers_per_thread;
  k.static_shared_memory = row.static_shared_memory;
  k.dynamic_shared_memory = row.dynamic_shared_memory;
  return Intern(k, table, kernels_);
}

uint32_t internal::DetailRows::Add(const MemcpyDetail& row, std::vector<MemcpyDetail>& table) {
  if (!for_analysis_) {
    table.push_back(row);
    return static_cast<uint32_t>(table.size() - 1);
  }
  MemcpyDetail m;
  memset(&m, 0, sizeof(m));
  m.bytes = row.bytes;  // the copy detectors (antipatterns_*.cc, ResolveLaunches)
  m.copy_kind = row.copy_kind;
  m.src_kind = row.src_kind;
  m.dst_kind = row.dst_kind;
  return Intern(m, table, memcpys_);
}

uint32_t internal::DetailRows::Add(const MemsetDetail& row, std::vector<MemsetDetail>& table) {
  if (!for_analysis_) {
    table.push_back(row);
    return static_cast<uint32_t>(table.size() - 1);
  }
  MemsetDetail m;  // the analysis reads no memset field: one all-zero row
  memset(&m, 0, sizeof(m));
  return Intern(m, table, memsets_);
}

uint32_t internal::DetailRows::Add(const SyncDetail& row, std::vector<SyncDetail>& table) {
  if (!for_analysis_) {
    table.push_back(row);
    return static_cast<uint32_t>(table.size() - 1);
  }
  SyncDetail d;
  memset(&d, 0, sizeof(d));
  d.sync_type = row.sync_type;  // ExcessiveSync (antipatterns_host.cc) skips Stream Wait Event
  return Intern(d, table, syncs_);
}

}  // namespace kairos
