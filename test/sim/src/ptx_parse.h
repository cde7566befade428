// File: test/sim/src/ptx_parse.h
// Layer: CUDA/CUPTI simulator, kernel execution: decodes one .entry of a PTX module into a
//        ptx::Kernel for the interpreter, for the subset simple kernels use (see
//        docs/SIMULATOR.md, "Kernel execution").
// Threading: pure function.
#ifndef KAIROS_TEST_SIM_SRC_PTX_PARSE_H_
#define KAIROS_TEST_SIM_SRC_PTX_PARSE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "ptx_program.h"

namespace kairos::sim::ptx {

// Module-scope variables (__device__/__constant__): name -> host address of their storage.
using GlobalLookup = std::function<bool(const std::string& name, uint64_t* address)>;

enum class ParseResult { kOk, kNotFound, kUnsupported };

// Decodes the kernel `name` of `ptx`. kUnsupported: `*why` names the first construct the
// interpreter does not run (e.g. "instruction call.uni"); nothing of the kernel is usable.
ParseResult ParseKernel(const std::string& ptx, const std::string& name, const GlobalLookup& globals, Kernel* out,
                        std::string* why);

}  // namespace kairos::sim::ptx

#endif  // KAIROS_TEST_SIM_SRC_PTX_PARSE_H_
