// File: test/sim/src/ptx_fatbin.cc
// Layer: CUDA/CUPTI simulator, kernel execution: PTX images out of registered fat binaries
//        (format facts in ptx_fatbin.h).
// Threading: pure functions; the libzstd handle is resolved once (thread-safe static).
#include "ptx_fatbin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace kairos::sim {
namespace {

constexpr uint32_t kWrapperMagic = 0x466243B1u;
constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kKindPtx = 1;
constexpr uint64_t kFlagCompressedLz4 = 0x2000;
constexpr uint64_t kFlagCompressedZstd = 0x8000;
// A fat binary bigger than this is not one (guards against reading garbage as sizes).
constexpr uint64_t kMaxFatbinBytes = 1ull << 32;

template <class T>
T Read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

using ZstdDecompress = size_t (*)(void*, size_t, const void*, size_t);
using ZstdIsError = unsigned (*)(size_t);

struct Zstd {
  ZstdDecompress decompress = nullptr;
  ZstdIsError is_error = nullptr;
};

const Zstd& ZstdLib() {
  static const Zstd lib = [] {
    Zstd z;
    // Leaked on purpose: the library stays loaded for the life of the process.
    void* h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      z.decompress = reinterpret_cast<ZstdDecompress>(dlsym(h, "ZSTD_decompress"));
      z.is_error = reinterpret_cast<ZstdIsError>(dlsym(h, "ZSTD_isError"));
    }
    return z;
  }();
  return lib;
}

}  // namespace

void ExtractPtxFromFatbin(const void* fatbin, std::vector<PtxText>* out, std::vector<std::string>* problems) {
  const auto* base = static_cast<const uint8_t*>(fatbin);
  if (base == nullptr) return;
  if (Read<uint32_t>(base) != kFatbinMagic) {
    problems->push_back("fat binary: bad magic");
    return;
  }
  const uint16_t header_size = Read<uint16_t>(base + 6);
  const uint64_t total = Read<uint64_t>(base + 8);
  if (header_size < 16 || total > kMaxFatbinBytes) {
    problems->push_back("fat binary: implausible header");
    return;
  }
  const uint8_t* e = base + header_size;
  const uint8_t* end = e + total;
  while (e + 64 <= end) {
    const uint16_t kind = Read<uint16_t>(e);
    const uint32_t ehs = Read<uint32_t>(e + 4);
    const uint64_t payload = Read<uint64_t>(e + 8);
    if (ehs < 64 || payload > total) {
      problems->push_back("fat binary: implausible entry");
      return;
    }
    if (kind == kKindPtx) {
      const uint32_t compressed = Read<uint32_t>(e + 16);
      const uint32_t arch = Read<uint32_t>(e + 28);
      const uint64_t flags = Read<uint64_t>(e + 40);
      const uint64_t plain = Read<uint64_t>(e + 56);
      const uint8_t* p = e + ehs;
      PtxText t;
      t.arch = arch;
      if ((flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) == 0) {
        const size_t n = strnlen(reinterpret_cast<const char*>(p), payload);
        t.text.assign(reinterpret_cast<const char*>(p), n);
        out->push_back(std::move(t));
      } else if (compressed >= 4 && compressed <= payload && Read<uint32_t>(p) == 0xFD2FB528u) {
        const Zstd& z = ZstdLib();
        if (z.decompress == nullptr) {
          problems->push_back("PTX is zstd-compressed and libzstd.so.1 is not available (build with "
                              "-Xfatbin -compress=false)");
        } else if (plain == 0 || plain > kMaxFatbinBytes) {
          problems->push_back("PTX: implausible decompressed size");
        } else {
          std::string buf(plain, '\0');
          size_t n = z.decompress(buf.data(), buf.size(), p, compressed);
          if (z.is_error != nullptr && z.is_error(n)) {
            problems->push_back("PTX: zstd decompression failed");
          } else {
            buf.resize(strnlen(buf.data(), std::min(n, buf.size())));
            t.text = std::move(buf);
            out->push_back(std::move(t));
          }
        }
      } else {
        problems->push_back("PTX is compressed in a format the simulator does not read (build with "
                            "-Xfatbin -compress=false)");
      }
    }
    e += ehs + payload;
  }
}

std::vector<PtxText> ExtractPtx(const void* wrapper, std::vector<std::string>* problems) {
  std::vector<PtxText> out;
  if (wrapper == nullptr) return out;
  const auto* w = static_cast<const uint8_t*>(wrapper);
  if (Read<uint32_t>(w) != kWrapperMagic) {
    problems->push_back("fat binary wrapper: bad magic");
    return out;
  }
  const int version = Read<int>(w + 4);
  ExtractPtxFromFatbin(Read<const void*>(w + 8), &out, problems);
  if (version == 2) {
    // -rdc: the objects' own fat binaries (with their PTX) hang off the linked wrapper.
    auto* const* list = Read<void* const*>(w + 16);
    for (size_t i = 0; list != nullptr && list[i] != nullptr && i < 4096; ++i) {
      ExtractPtxFromFatbin(list[i], &out, problems);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PtxText& a, const PtxText& b) { return a.arch < b.arch; });
  return out;
}

}  // namespace kairos::sim
