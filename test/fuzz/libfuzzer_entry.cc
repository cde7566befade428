// File: libfuzzer_entry.cc
// Layer: fuzz driver glue. The project's fuzz entry points have plain C names so ctest can
// replay their corpora in every build; under KAIROS_FUZZ this file maps libFuzzer's entry
// onto one of them (KAIROS_FUZZ_ENTRY is set per target in test/fuzz/CMakeLists.txt).
// Threading: libFuzzer calls it from one thread.
#include <cstddef>
#include <cstdint>

extern "C" int KAIROS_FUZZ_ENTRY(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return KAIROS_FUZZ_ENTRY(data, size);
}
