// File: test/sim/src/ptx_exec.cc
// Layer: CUDA/CUPTI simulator, kernel execution: the SIMT interpreter (model in ptx_exec.h).
// Threading: one launch per call; all state is local to the call.
#include "ptx_exec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ptx_semantics.h"

namespace kairos::sim::ptx {
namespace {

struct Group {
  uint32_t pc = 0;
  bool at_barrier = false;
  std::vector<uint32_t> lanes;  // ascending
};

class Block {
 public:
  Block(const Kernel& k, const LaunchDims& d, const uint8_t* params, const GlobalResolver& global,
        uint64_t* budget)
      : k_(k), d_(d), params_(params), global_(global), budget_(budget) {
    n_ = d.block[0] * d.block[1] * d.block[2];
    regs_.assign(static_cast<size_t>(k.nregs) * n_, 0);
    shared_size_ = k.shared_static + d.dynamic_shared;
    shared_.assign(std::max<size_t>(shared_size_, 16), 0);
    local_.assign(std::max<size_t>(static_cast<size_t>(k.local_bytes) * n_, 16), 0);
    for (uint32_t t = 0; t < n_; ++t) {
      R(kTidX, t) = t % d.block[0];
      R(kTidY, t) = (t / d.block[0]) % d.block[1];
      R(kTidZ, t) = t / (d.block[0] * d.block[1]);
      R(kNtidX, t) = d.block[0];
      R(kNtidY, t) = d.block[1];
      R(kNtidZ, t) = d.block[2];
      R(kNctaidX, t) = d.grid[0];
      R(kNctaidY, t) = d.grid[1];
      R(kNctaidZ, t) = d.grid[2];
      R(kLaneId, t) = t % 32;
      R(kWarpId, t) = t / 32;
    }
  }

  // Runs block (x, y, z); false with problem() set when it stopped early.
  bool Run(uint32_t x, uint32_t y, uint32_t z) {
    std::fill(shared_.begin(), shared_.end(), 0);
    std::fill(local_.begin(), local_.end(), 0);
    for (uint32_t t = 0; t < n_; ++t) {
      R(kCtaidX, t) = x;
      R(kCtaidY, t) = y;
      R(kCtaidZ, t) = z;
    }
    steps_ = 0;
    groups_.clear();
    Group all;
    all.lanes.resize(n_);
    for (uint32_t t = 0; t < n_; ++t) all.lanes[t] = t;
    groups_.push_back(std::move(all));
    while (!groups_.empty()) {
      size_t g = PickGroup();
      if (g == groups_.size()) {
        // Every live lane waits at a barrier: release them all.
        for (Group& gr : groups_) {
          gr.at_barrier = false;
          ++gr.pc;
        }
        continue;
      }
      if (!RunGroup(g)) return false;
    }
    return true;
  }

  const std::string& problem() const { return problem_; }

 private:
  uint64_t& R(uint32_t reg, uint32_t lane) { return regs_[static_cast<size_t>(reg) * n_ + lane]; }

  // The running group with the lowest pc, merged with every other running group at that pc;
  // groups_.size() when all groups wait at a barrier.
  size_t PickGroup() {
    size_t best = groups_.size();
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (!groups_[i].at_barrier && (best == groups_.size() || groups_[i].pc < groups_[best].pc)) best = i;
    }
    if (best == groups_.size()) return best;
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (i != best && !groups_[i].at_barrier && groups_[i].pc == groups_[best].pc) {
        std::vector<uint32_t> merged;
        merged.reserve(groups_[best].lanes.size() + groups_[i].lanes.size());
        std::merge(groups_[best].lanes.begin(), groups_[best].lanes.end(), groups_[i].lanes.begin(),
                   groups_[i].lanes.end(), std::back_inserter(merged));
        groups_[best].lanes = std::move(merged);
        groups_.erase(groups_.begin() + static_cast<long>(i));
        if (i < best) --best;
        --i;
      }
    }
    return best;
  }

  // The lowest pc of the other running groups (where this group must stop to merge).
  uint32_t OtherMinPc(size_t g) const {
    uint32_t m = std::numeric_limits<uint32_t>::max();
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (i != g && !groups_[i].at_barrier) m = std::min(m, groups_[i].pc);
    }
    return m;
  }

  bool Fail(const std::string& why) {
    problem_ = why;
    return false;
  }

  bool Guard(const Inst& in, uint32_t lane) {
    if (in.guard < 0) return true;
    return ((R(static_cast<uint32_t>(in.guard), lane) & 1) != 0) != in.guard_neg;
  }

  uint64_t Val(const Opnd& o, uint32_t lane) {
    switch (o.kind) {
      case OpndKind::kReg: return R(o.reg, lane);
      case OpndKind::kImm: return o.imm;
      case OpndKind::kClock32: return Mask(steps_ * kClockPerStep, 32);
      case OpndKind::kClock64: return steps_ * kClockPerStep;
      default: return 0;
    }
  }

  // Host pointer for `size` bytes at address `a` of space `sp`, or nullptr (a fault).
  uint8_t* Addr(Space sp, uint64_t a, uint32_t size, uint32_t lane) {
    switch (sp) {
      case Space::kParam:
        return a + size <= k_.param_bytes ? const_cast<uint8_t*>(params_) + a : nullptr;
      case Space::kShared:
        return a + size <= shared_size_ ? shared_.data() + a : nullptr;
      case Space::kLocal:
        return a + size <= k_.local_bytes ? local_.data() + static_cast<size_t>(lane) * k_.local_bytes + a : nullptr;
      case Space::kGeneric: {
        auto sb = reinterpret_cast<uint64_t>(shared_.data());
        if (a >= sb && a + size <= sb + shared_size_) return reinterpret_cast<uint8_t*>(a);
        auto lb = reinterpret_cast<uint64_t>(local_.data());
        if (k_.local_bytes > 0 && a >= lb && a + size <= lb + static_cast<uint64_t>(k_.local_bytes) * n_) {
          return reinterpret_cast<uint8_t*>(a);
        }
        [[fallthrough]];
      }
      default:
        if (a >= lo_ && a + size <= hi_ && a + size >= a) return reinterpret_cast<uint8_t*>(a);
        if (global_ && global_(a, size, &lo_, &hi_)) return reinterpret_cast<uint8_t*>(a);
        return nullptr;
    }
  }

  std::string FaultText(const Inst& in, uint64_t a) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "illegal address 0x%llx at instruction %zu", static_cast<unsigned long long>(a),
                  static_cast<size_t>(&in - k_.code.data()));
    return buf;
  }

  bool Atomic(const Inst& in, uint32_t lane) {
    const uint64_t a = (in.s[0].has_base ? R(in.s[0].reg, lane) : 0) + in.s[0].imm;
    const uint32_t size = ElemBytes(in.ty);
    uint8_t* p = Addr(in.space, a, size, lane);
    if (p == nullptr) return Fail(FaultText(in, a));
    const uint64_t old = LoadElem(p, in.ty);
    const uint64_t nv = AtomicResult(in, old, Val(in.s[1], lane), Val(in.s[2], lane));
    const int bits = Bits(in.ty);
    std::memcpy(p, &nv, size);  // little-endian: the low bytes
    if (in.nd == 1) R(in.d[0].reg, lane) = IsSigned(in.ty) ? static_cast<uint64_t>(SExt(old, bits)) : old;
    return true;
  }

  // Executes instruction `in` for the lanes of group `g`; updates its pc (and may split it).
  // Returns false on a fault; *reschedule when the scheduler must pick again.
  bool Step(size_t g, bool* reschedule) {
    Group& gr = groups_[g];
    const Inst& in = k_.code[gr.pc];
    const uint64_t count = gr.lanes.size();
    if (*budget_ < count) return Fail("instruction cap reached (KAIROS_SIM_EXEC_MAX_INSTRUCTIONS)");
    *budget_ -= count;
    ++steps_;
    switch (in.op) {
      case Op::kBra: {
        size_t taken = 0;
        if (in.guard >= 0) {
          for (uint32_t l : gr.lanes) taken += Guard(in, l) ? 1 : 0;
        }
        if (in.guard < 0 || taken == gr.lanes.size()) {
          gr.pc = in.target;
        } else if (taken == 0) {
          ++gr.pc;
        } else {
          // Divergence: the taken lanes become their own group.
          Group t;
          t.pc = in.target;
          std::vector<uint32_t> stay;
          t.lanes.reserve(taken);
          stay.reserve(gr.lanes.size() - taken);
          for (uint32_t l : gr.lanes) (Guard(in, l) ? t.lanes : stay).push_back(l);
          gr.lanes = std::move(stay);
          ++gr.pc;
          groups_.push_back(std::move(t));  // invalidates `gr`
        }
        *reschedule = true;
        return true;
      }
      case Op::kRet: {
        if (in.guard < 0) {
          gr.lanes.clear();
        } else {
          std::vector<uint32_t> keep;
          for (uint32_t l : gr.lanes) {
            if (!Guard(in, l)) keep.push_back(l);
          }
          gr.lanes = std::move(keep);
          ++gr.pc;
        }
        if (gr.lanes.empty()) {
          groups_.erase(groups_.begin() + static_cast<long>(g));
          *reschedule = true;
        }
        return true;
      }
      case Op::kBar:
        gr.at_barrier = true;
        *reschedule = true;
        return true;
      default:
        break;
    }
    if (!ExecAll(in, gr.lanes)) return false;
    ++gr.pc;
    return true;
  }

  // An operand as a lane-indexed array: registers have stride 1, immediates stride 0.
  struct Src {
    const uint64_t* p;
    size_t stride;
    uint64_t at(uint32_t l) const { return p[l * stride]; }
  };
  Src S(const Inst& in, int i) {
    const Opnd& o = in.s[i];
    switch (o.kind) {
      case OpndKind::kReg: return Src{&regs_[static_cast<size_t>(o.reg) * n_], 1};
      case OpndKind::kClock32:
      case OpndKind::kClock64:
        clock_tmp_[i] = o.kind == OpndKind::kClock32 ? Mask(steps_ * kClockPerStep, 32) : steps_ * kClockPerStep;
        return Src{&clock_tmp_[i], 0};
      default: return Src{&o.imm, 0};
    }
  }
  uint64_t* D(const Inst& in, int i = 0) { return &regs_[static_cast<size_t>(in.d[i].reg) * n_]; }

  // Runs `f(lane)` for every lane whose guard holds; the op switch stays outside the loop.
  template <class F>
  bool Lanes(const Inst& in, const std::vector<uint32_t>& lanes, F&& f) {
    if (in.guard < 0) {
      for (uint32_t l : lanes) {
        if (!f(l)) return false;
      }
      return true;
    }
    const uint64_t* g = &regs_[static_cast<size_t>(in.guard) * n_];
    for (uint32_t l : lanes) {
      if (((g[l] & 1) != 0) != in.guard_neg && !f(l)) return false;
    }
    return true;
  }

  bool ExecAll(const Inst& in, const std::vector<uint32_t>& lanes) {
    const int bits = Bits(in.ty);
    switch (in.op) {
      case Op::kLd: {
        const uint32_t eb = ElemBytes(in.ty);
        const Opnd& ad = in.s[0];
        const uint64_t* base = ad.has_base ? &regs_[static_cast<size_t>(ad.reg) * n_] : nullptr;
        return Lanes(in, lanes, [&](uint32_t l) {
          const uint64_t a = (base != nullptr ? base[l] : 0) + ad.imm;
          uint8_t* p = Addr(in.space, a, eb * in.vec, l);
          if (p == nullptr) return Fail(FaultText(in, a));
          for (uint8_t i = 0; i < in.vec; ++i) R(in.d[i].reg, l) = LoadElem(p + i * eb, in.ty);
          return true;
        });
      }
      case Op::kSt: {
        const uint32_t eb = ElemBytes(in.ty);
        const Opnd& ad = in.d[0];
        const uint64_t* base = ad.has_base ? &regs_[static_cast<size_t>(ad.reg) * n_] : nullptr;
        Src v[4];
        for (int i = 0; i < in.vec; ++i) v[i] = S(in, i);
        return Lanes(in, lanes, [&](uint32_t l) {
          const uint64_t a = (base != nullptr ? base[l] : 0) + ad.imm;
          uint8_t* p = Addr(in.space, a, eb * in.vec, l);
          if (p == nullptr) return Fail(FaultText(in, a));
          for (uint8_t i = 0; i < in.vec; ++i) {
            const uint64_t x = v[i].at(l);
            std::memcpy(p + i * eb, &x, eb);
          }
          return true;
        });
      }
      case Op::kMov: {
        const Src a = S(in, 0);
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          d[l] = Mask(a.at(l), bits);
          return true;
        });
      }
      case Op::kAdd:
      case Op::kSub:
      case Op::kDiv:
      case Op::kRem:
      case Op::kMin:
      case Op::kMax:
      case Op::kAnd:
      case Op::kOr:
      case Op::kXor:
      case Op::kShl:
      case Op::kShr: {
        const Src a = S(in, 0), b = S(in, 1);
        uint64_t* d = D(in);
        if (IsFloat(in.ty) && in.op != Op::kAnd && in.op != Op::kOr && in.op != Op::kXor) {
          return Lanes(in, lanes, [&](uint32_t l) {
            d[l] = FBits(FloatBinary(in, FVal(a.at(l), in.ty), FVal(b.at(l), in.ty)), in.ty);
            return true;
          });
        }
        if (!in.sat && in.op == Op::kAdd) {  // the most common instruction: no per-lane dispatch
          return Lanes(in, lanes, [&](uint32_t l) {
            d[l] = Mask(a.at(l) + b.at(l), bits);
            return true;
          });
        }
        return Lanes(in, lanes, [&](uint32_t l) {
          d[l] = Mask(IntBinary(in, a.at(l), b.at(l)), bits);
          return true;
        });
      }
      case Op::kMul:
      case Op::kMad:
      case Op::kFma: {
        const Src a = S(in, 0), b = S(in, 1);
        const Src c = in.ns > 2 ? S(in, 2) : a;
        uint64_t* d = D(in);
        if (IsFloat(in.ty)) {
          return Lanes(in, lanes, [&](uint32_t l) {
            const uint64_t x = a.at(l), y = b.at(l);
            double r;
            if (in.op == Op::kMul) {
              r = FloatBinary(in, FVal(x, in.ty), FVal(y, in.ty));
            } else {  // mad.f32/f64 is a fused multiply-add on every target nvcc 13 supports
              const uint64_t z = c.at(l);
              r = in.ty == Ty::kF32 ? static_cast<double>(std::fma(F32(x), F32(y), F32(z)))
                                    : std::fma(F64(x), F64(y), F64(z));
              if (in.sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
            }
            d[l] = FBits(r, in.ty);
            return true;
          });
        }
        const int rbits = in.mode == kWide ? std::min(64, 2 * bits) : bits;
        const bool mad = in.op != Op::kMul;
        return Lanes(in, lanes, [&](uint32_t l) {
          uint64_t r = IntMul(in, a.at(l), b.at(l));
          if (mad) r += c.at(l);
          d[l] = Mask(r, rbits);
          return true;
        });
      }
      case Op::kNot:
      case Op::kCnot:
      case Op::kNeg:
      case Op::kAbs:
      case Op::kSqrt:
      case Op::kRcp: {
        const Src a = S(in, 0);
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          d[l] = Unary(in, a.at(l));
          return true;
        });
      }
      case Op::kCvt: {
        const Src a = S(in, 0);
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          d[l] = Convert(in, a.at(l));
          return true;
        });
      }
      case Op::kCvta: {
        const Src a = S(in, 0);
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          uint64_t base = 0;
          if (in.space == Space::kShared) base = reinterpret_cast<uint64_t>(shared_.data());
          if (in.space == Space::kLocal) {
            base = reinterpret_cast<uint64_t>(local_.data()) + static_cast<uint64_t>(l) * k_.local_bytes;
          }
          d[l] = Mask(in.to_space ? a.at(l) - base : a.at(l) + base, bits);
          return true;
        });
      }
      case Op::kSetp: {
        const Src a = S(in, 0), b = S(in, 1);
        const Src c = in.ns > 2 ? S(in, 2) : a;
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          bool r = Compare(in, a.at(l), b.at(l));
          if (in.combine != kCombNone) {
            const bool cv = (c.at(l) & 1) != 0;
            r = in.combine == kCombAnd ? (r && cv) : in.combine == kCombOr ? (r || cv) : (r != cv);
          }
          d[l] = r ? 1 : 0;
          return true;
        });
      }
      case Op::kSelp: {
        const Src a = S(in, 0), b = S(in, 1), c = S(in, 2);
        uint64_t* d = D(in);
        return Lanes(in, lanes, [&](uint32_t l) {
          d[l] = Mask((c.at(l) & 1) != 0 ? a.at(l) : b.at(l), bits);
          return true;
        });
      }
      case Op::kAtom: return Lanes(in, lanes, [&](uint32_t l) { return Atomic(in, l); });
      case Op::kNop: return true;
      default: return Fail("unexpected instruction");
    }
  }

  bool RunGroup(size_t g) {
    uint32_t stop_at = OtherMinPc(g);
    for (;;) {
      bool reschedule = false;
      if (groups_[g].pc >= k_.code.size()) return Fail("ran past the end of the kernel");
      if (!Step(g, &reschedule)) return false;
      if (reschedule) return true;
      if (groups_[g].pc >= stop_at) return true;  // meets another group: merge first
    }
  }

  const Kernel& k_;
  const LaunchDims& d_;
  const uint8_t* params_;
  const GlobalResolver& global_;
  uint64_t* budget_;
  uint32_t n_ = 0;
  uint32_t shared_size_ = 0;
  std::vector<uint64_t> regs_;
  std::vector<uint8_t> shared_;
  std::vector<uint8_t> local_;
  std::vector<Group> groups_;
  uint64_t steps_ = 0;
  uint64_t clock_tmp_[4] = {0, 0, 0, 0};
  uint64_t lo_ = 1, hi_ = 0;  // the last valid global range (empty at first)
  std::string problem_;
};

}  // namespace

ExecResult Execute(const Kernel& kernel, const LaunchDims& dims, const uint8_t* params, const GlobalResolver& global,
                   uint64_t max_thread_instructions) {
  ExecResult res;
  uint64_t budget = max_thread_instructions;
  Block block(kernel, dims, params, global, &budget);
  for (uint32_t z = 0; z < dims.grid[2]; ++z) {
    for (uint32_t y = 0; y < dims.grid[1]; ++y) {
      for (uint32_t x = 0; x < dims.grid[0]; ++x) {
        if (!block.Run(x, y, z)) {
          res.problem = block.problem();
          res.thread_instructions = max_thread_instructions - budget;
          return res;
        }
      }
    }
  }
  res.completed = true;
  res.thread_instructions = max_thread_instructions - budget;
  return res;
}

}  // namespace kairos::sim::ptx
