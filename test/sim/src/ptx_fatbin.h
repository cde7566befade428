// File: test/sim/src/ptx_fatbin.h
// Layer: CUDA/CUPTI simulator, kernel execution: finds the PTX text in the fat binary a
//        program registers through __cudaRegisterFatBinary.
// Threading: pure functions over read-only program data.
//
// Facts relied on (checked against nvcc 13.0's output, fatbinary_section.h for the wrapper):
// - The wrapper is {int magic = 0x466243B1; int version; const void* data; void* extra}.
//   version 1: `data` is one fat binary. version 2 (-rdc, the nvlink'ed wrapper): `extra`
//   is a NULL-terminated array of the objects' own ("prelinked") fat binaries, which carry
//   the PTX; `data` holds the linked SASS.
// - A fat binary is a 16-byte header {u32 magic 0xBA55ED50; u16 version; u16 header_size;
//   u64 size of the entries} followed by entries, each {u16 kind (1 PTX, 2 ELF); u16;
//   u32 header_size; u64 payload_size; u32 compressed_size; u32; u32 version; u32 arch
//   (75 for sm_75); ...; u64 flags at +40; ...; u64 decompressed_size at +56} and its payload.
// - nvcc 13 compresses PTX by default with zstd (flags bit 0x8000, payload starts with the
//   zstd frame magic 28 b5 2f fd). `-Xfatbin -compress=false` (or --compress-mode=none)
//   leaves it as NUL-terminated text. zstd payloads are decompressed with libzstd.so.1 when
//   the machine has it (dlopen; no build dependency). Other compression is reported.
#ifndef KAIROS_TEST_SIM_SRC_PTX_FATBIN_H_
#define KAIROS_TEST_SIM_SRC_PTX_FATBIN_H_

#include <string>
#include <vector>

namespace kairos::sim {

struct PtxText {
  unsigned arch = 0;  // the virtual architecture, e.g. 75 for compute_75
  std::string text;
};

// Every PTX image in the registered wrapper `wrapper` (lowest arch first). Problems (bad
// magic, undecodable compression) are appended to `problems`, one line each.
std::vector<PtxText> ExtractPtx(const void* wrapper, std::vector<std::string>* problems);

// The PTX images of one fat binary (header first), as above.
void ExtractPtxFromFatbin(const void* fatbin, std::vector<PtxText>* out, std::vector<std::string>* problems);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_PTX_FATBIN_H_
