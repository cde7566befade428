// File: rank_name.cc
// Layer: kairos_util. RankFromFileName (rank_name.h).
// Threading: pure function.
#include "util/rank_name.h"

#include <cctype>

namespace kairos {

int64_t RankFromFileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (size_t pos = base.find("rank"); pos != std::string::npos; pos = base.find("rank", pos + 1)) {
    // "rank" must start the name or follow a separator, so "cranky3" is not rank 3.
    if (pos > 0 && std::isalnum(static_cast<unsigned char>(base[pos - 1]))) continue;
    size_t d = pos + 4;
    if (d < base.size() && (base[d] == '_' || base[d] == '-')) ++d;
    if (d >= base.size() || !std::isdigit(static_cast<unsigned char>(base[d]))) continue;
    int64_t v = 0;
    while (d < base.size() && std::isdigit(static_cast<unsigned char>(base[d]))) {
      v = v * 10 + (base[d++] - '0');
      if (v > (int64_t{1} << 40)) return -1;
    }
    return v;
  }
  return -1;
}

}  // namespace kairos
