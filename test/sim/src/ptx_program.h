// File: test/sim/src/ptx_program.h
// Layer: CUDA/CUPTI simulator, kernel execution: a PTX kernel decoded for the interpreter
//        (ptx_parse.cc builds it, ptx_exec.cc runs it).
// Threading: immutable once built.
//
// Registers are 64-bit slots per thread; an instruction reads and writes the width its type
// says, so a register's declared type is not needed. The first kNumSpecial slots hold the
// special registers (%tid, %ntid, %ctaid, %nctaid, %laneid, %warpid), filled per block.
#ifndef KAIROS_TEST_SIM_SRC_PTX_PROGRAM_H_
#define KAIROS_TEST_SIM_SRC_PTX_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kairos::sim::ptx {

enum class Op : uint8_t {
  kLd, kSt, kMov, kAdd, kSub, kMul, kMad, kFma, kDiv, kRem, kMin, kMax, kAnd, kOr, kXor, kNot, kCnot,
  kShl, kShr, kNeg, kAbs, kCvt, kCvta, kSetp, kSelp, kBra, kRet, kBar, kNop, kAtom, kSqrt, kRcp,
};

enum class Ty : uint8_t { kNone, kB8, kB16, kB32, kB64, kU8, kU16, kU32, kU64, kS8, kS16, kS32, kS64, kF32, kF64, kPred };

inline int Bits(Ty t) {
  switch (t) {
    case Ty::kB8: case Ty::kU8: case Ty::kS8: return 8;
    case Ty::kB16: case Ty::kU16: case Ty::kS16: return 16;
    case Ty::kB32: case Ty::kU32: case Ty::kS32: case Ty::kF32: return 32;
    case Ty::kPred: return 1;
    default: return 64;
  }
}
inline bool IsSigned(Ty t) { return t == Ty::kS8 || t == Ty::kS16 || t == Ty::kS32 || t == Ty::kS64; }
inline bool IsFloat(Ty t) { return t == Ty::kF32 || t == Ty::kF64; }

enum class Space : uint8_t { kGeneric, kGlobal, kShared, kLocal, kParam, kConst };

// Modes in Inst::mode.
enum MulMode : uint8_t { kLo = 0, kHi = 1, kWide = 2 };
enum Cmp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kLo_, kLs, kHi_, kHs, kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan };
enum Round : uint8_t { kRDefault, kRn, kRz, kRm, kRp, kRni, kRzi, kRmi, kRpi };
enum AtomOp : uint8_t { kAtomAdd, kAtomMin, kAtomMax, kAtomExch, kAtomCas, kAtomAnd, kAtomOr, kAtomXor, kAtomInc, kAtomDec };
enum Combine : uint8_t { kCombNone, kCombAnd, kCombOr, kCombXor };

enum class OpndKind : uint8_t { kNone, kReg, kImm, kClock32, kClock64, kAddr };

struct Opnd {
  OpndKind kind = OpndKind::kNone;
  uint32_t reg = 0;     // kReg; kAddr: base register when has_base
  bool has_base = false;
  uint64_t imm = 0;     // kImm: the bits; kAddr: the offset (symbol resolved into it)
};

struct Inst {
  Op op = Op::kNop;
  Ty ty = Ty::kNone;
  Ty ty2 = Ty::kNone;  // cvt: source type
  Space space = Space::kGeneric;
  uint8_t mode = 0;    // MulMode / Cmp / Round / AtomOp
  uint8_t combine = kCombNone;
  uint8_t vec = 1;     // ld/st: elements
  bool sat = false;
  bool to_space = false;  // cvta.to.<space> (generic -> space) versus cvta.<space>
  bool guard_neg = false;
  int32_t guard = -1;  // predicate register, -1 = none
  uint32_t target = 0; // bra: instruction index
  uint8_t nd = 0, ns = 0;
  Opnd d[4];
  Opnd s[4];
};

struct Kernel {
  std::string name;
  std::vector<uint32_t> param_offset;  // byte offset of each parameter in the param buffer
  std::vector<uint32_t> param_size;
  uint32_t param_bytes = 0;
  uint32_t shared_static = 0;  // bytes; dynamic shared memory follows at this offset
  uint32_t local_bytes = 0;    // per thread
  uint32_t nregs = 0;
  std::vector<Inst> code;
};

constexpr uint32_t kNumSpecial = 14;
enum Special : uint32_t {
  kTidX, kTidY, kTidZ, kNtidX, kNtidY, kNtidZ, kCtaidX, kCtaidY, kCtaidZ, kNctaidX, kNctaidY, kNctaidZ,
  kLaneId, kWarpId,
};

}  // namespace kairos::sim::ptx

#endif  // KAIROS_TEST_SIM_SRC_PTX_PROGRAM_H_
