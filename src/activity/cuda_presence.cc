// File: cuda_presence.cc — see cuda_presence.h.
#include "activity/cuda_presence.h"

#include <link.h>

namespace kairos::internal {

bool IsCudaLibraryPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // libcudart.so.13, libcudart-<hash>.so.12 (pip wheels), libcuda.so.1; not libcudnn,
  // libcupti or libcuda_foo.
  if (base.substr(0, 9) == "libcudart") return true;
  return base.substr(0, 10) == "libcuda.so";
}

namespace {
int VisitObject(dl_phdr_info* info, size_t, void* found) {
  if (info->dlpi_name != nullptr && IsCudaLibraryPath(info->dlpi_name)) {
    *static_cast<bool*>(found) = true;
    return 1;  // stop
  }
  return 0;
}
}  // namespace

bool ProcessUsesCuda(bool cuda_injected) {
  if (cuda_injected) return true;
  bool found = false;
  dl_iterate_phdr(VisitObject, &found);
  return found;
}

}  // namespace kairos::internal
