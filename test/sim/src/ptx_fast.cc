// File: test/sim/src/ptx_fast.cc
// Layer: CUDA/CUPTI simulator, kernel execution: the decoded fast path (contract in
//        ptx_fast.h). The scheduler (groups, merging, barriers, budget, clock) is the reference
//        interpreter's, step for step. What differs is the work per instruction: a handler is
//        chosen once per instruction, not by a switch per lane; lane loops are plain enough for
//        the compiler to keep tight; and per-group uniform hints (Group::uniform) let an
//        instruction whose inputs are one value across the group run on one lane. Anything
//        without a specialised handler uses the shared per-lane semantics (ptx_semantics.h), so
//        rarely used instructions cost what they cost in the reference.
// Threading: one launch per call; all state is local to the call.
#include "ptx_fast.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ptx_semantics.h"

namespace kairos::sim::ptx {

namespace {

enum : uint8_t { kVaries = 0, kUniform = 1, kLeadOnly = 2 };

struct Group {
  uint32_t pc = 0;
  bool at_barrier = false;
  std::vector<uint32_t> lanes;  // ascending
  // uniform[r]: kVaries, or register r holds one value in every lane of this group: kUniform
  // (every lane's row entry holds it) or kLeadOnly (only the group's first lane's entry does;
  // the others are written when something reads them per lane). Lets an instruction whose
  // inputs are all uniform compute once for the group.
  std::vector<uint8_t> uniform;
};

}  // namespace

// The state of one block, shared by the scheduler and the handlers.
class FastBlock {
 public:
  FastBlock(const FastKernel& fk, const LaunchDims& d, const uint8_t* params, const GlobalResolver& global,
            uint64_t* budget)
      : k_(*fk.kernel), fk_(fk), params_(params), global_(global), budget_(budget) {
    n_ = d.block[0] * d.block[1] * d.block[2];
    for (int i = 0; i < 3; ++i) d_block_[i] = d.block[i];
    regs_.assign(static_cast<size_t>(k_.nregs) * n_, 0);
    shared_size_ = k_.shared_static + d.dynamic_shared;
    shared_.assign(std::max<size_t>(shared_size_, 16), 0);
    local_.assign(std::max<size_t>(static_cast<size_t>(k_.local_bytes) * n_, 16), 0);
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

  bool Run(uint32_t x, uint32_t y, uint32_t z) {
    std::fill(shared_.begin(), shared_.end(), 0);
    std::fill(local_.begin(), local_.end(), 0);
    std::fill_n(&R(kCtaidX, 0), n_, x);
    std::fill_n(&R(kCtaidY, 0), n_, y);
    std::fill_n(&R(kCtaidZ, 0), n_, z);
    steps_ = 0;
    groups_.clear();
    Group all;
    all.lanes.resize(n_);
    // Registers keep the previous block's values, so only the launch-wide specials start
    // uniform (and a thread index along an axis of extent 1).
    all.uniform.assign(k_.nregs, kVaries);
    for (uint32_t r : {kNtidX, kNtidY, kNtidZ, kCtaidX, kCtaidY, kCtaidZ, kNctaidX, kNctaidY, kNctaidZ}) {
      all.uniform[r] = kUniform;
    }
    auto uniform_if = [](bool c) { return c ? kUniform : kVaries; };
    all.uniform[kTidX] = uniform_if(d_block_[0] == 1);
    all.uniform[kTidY] = uniform_if(d_block_[1] == 1);
    all.uniform[kTidZ] = uniform_if(d_block_[2] == 1);
    all.uniform[kLaneId] = uniform_if(n_ == 1);
    all.uniform[kWarpId] = uniform_if(n_ <= 32);
    for (uint32_t t = 0; t < n_; ++t) all.lanes[t] = t;
    groups_.push_back(std::move(all));
    while (!groups_.empty()) {
      size_t g = PickGroup();
      if (g == groups_.size()) {
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

  // ---- what handlers use ----

  uint64_t& R(uint32_t reg, uint32_t lane) { return regs_[static_cast<size_t>(reg) * n_ + lane]; }
  uint64_t* Row(uint32_t reg) { return &regs_[static_cast<size_t>(reg) * n_]; }

  // Runs f(lane) for the current group's lanes whose guard holds, in ascending lane order; a
  // contiguous group is a plain counted loop. Stops at the first f that returns false.
  template <class F>
  bool Each(const Inst& in, F&& f) {
    if (in.guard < 0) {
      if (dense_) {
        for (uint32_t l = first_, e = first_ + count_; l < e; ++l) {
          if (!f(l)) return false;
        }
      } else {
        for (uint32_t i = 0; i < count_; ++i) {
          if (!f(lanes_[i])) return false;
        }
      }
      return true;
    }
    const uint64_t* g = Row(static_cast<uint32_t>(in.guard));
    const bool neg = in.guard_neg;
    if (dense_) {
      for (uint32_t l = first_, e = first_ + count_; l < e; ++l) {
        if (((g[l] & 1) != 0) != neg && !f(l)) return false;
      }
    } else {
      for (uint32_t i = 0; i < count_; ++i) {
        const uint32_t l = lanes_[i];
        if (((g[l] & 1) != 0) != neg && !f(l)) return false;
      }
    }
    return true;
  }

  // A source operand as (pointer, stride): registers stride 1, immediates and clocks stride 0.
  struct Src {
    const uint64_t* p;
    size_t stride;
    uint64_t at(uint32_t l) const { return p[l * stride]; }
  };
  Src S(const Inst& in, int i) {
    const Opnd& o = in.s[i];
    switch (o.kind) {
      case OpndKind::kReg:
        if (cur_uniform_ != nullptr && cur_uniform_[o.reg] == kLeadOnly) {
          // A copy, not the lead's entry: the instruction may be writing that same row.
          lead_tmp_[i] = R(o.reg, first_);
          return Src{&lead_tmp_[i], 0};
        }
        return Src{Row(o.reg), 1};
      case OpndKind::kClock32:
      case OpndKind::kClock64:
        clock_tmp_[i] = o.kind == OpndKind::kClock32 ? Mask(steps_ * kClockPerStep, 32) : steps_ * kClockPerStep;
        return Src{&clock_tmp_[i], 0};
      default: return Src{&o.imm, 0};
    }
  }

  bool Fail(const std::string& why) {
    problem_ = why;
    return false;
  }
  std::string FaultText(const Inst& in, uint64_t a) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "illegal address 0x%llx at instruction %zu", static_cast<unsigned long long>(a),
                  static_cast<size_t>(&in - k_.code.data()));
    return buf;
  }

  // The reference interpreter's address check (ptx_exec.cc Addr), unchanged.
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

  const Kernel& k_;
  const FastKernel& fk_;
  const uint8_t* params_;
  const GlobalResolver& global_;
  uint64_t* budget_;
  uint32_t n_ = 0;
  uint32_t shared_size_ = 0;
  std::vector<uint64_t> regs_;
  std::vector<uint8_t> shared_;
  std::vector<uint8_t> local_;
  uint64_t steps_ = 0;
  uint64_t clock_tmp_[4] = {0, 0, 0, 0};
  uint64_t lead_tmp_[4] = {0, 0, 0, 0};
  uint64_t lo_ = 1, hi_ = 0;
  uint32_t d_block_[3] = {1, 1, 1};

  // The running group's lanes, set before each handler call.
  const uint32_t* lanes_ = nullptr;
  const uint8_t* cur_uniform_ = nullptr;  // the running group's Group::uniform
  uint32_t count_ = 0;
  uint32_t first_ = 0;
  bool dense_ = false;

 private:
  size_t PickGroup() {
    size_t best = groups_.size();
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (!groups_[i].at_barrier && (best == groups_.size() || groups_[i].pc < groups_[best].pc)) best = i;
    }
    if (best == groups_.size()) return best;
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (i != best && !groups_[i].at_barrier && groups_[i].pc == groups_[best].pc) {
        MergeUniform(groups_[best], groups_[i]);
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

  // Writes a lead-only register's value into every lane of the group.
  void Materialize(Group& gr, uint32_t r) {
    if (gr.uniform[r] != kLeadOnly) return;
    const uint64_t v = R(r, gr.lanes[0]);
    uint64_t* row = Row(r);
    for (uint32_t l : gr.lanes) row[l] = v;
    gr.uniform[r] = kUniform;
  }
  void MaterializeAll(Group& gr) {
    for (uint32_t r = 0; r < k_.nregs; ++r) Materialize(gr, r);
  }

  // `a` absorbs `o` (lanes not merged yet): a register stays uniform when it is in both with one
  // value (the merged group's first lane is one of the two first lanes, so a lead-only value
  // stays readable); otherwise both rows are written out and it varies.
  void MergeUniform(Group& a, Group& o) {
    for (uint32_t r = 0; r < k_.nregs; ++r) {
      if (a.uniform[r] != kVaries && o.uniform[r] != kVaries && R(r, a.lanes[0]) == R(r, o.lanes[0])) {
        a.uniform[r] = a.uniform[r] == kUniform && o.uniform[r] == kUniform ? kUniform : kLeadOnly;
      } else {
        Materialize(a, r);
        Materialize(o, r);
        a.uniform[r] = kVaries;
      }
    }
  }

  uint32_t OtherMinPc(size_t g) const {
    uint32_t m = std::numeric_limits<uint32_t>::max();
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (i != g && !groups_[i].at_barrier) m = std::min(m, groups_[i].pc);
    }
    return m;
  }

  bool GuardOf(const Inst& in, uint32_t lane) {
    return ((R(static_cast<uint32_t>(in.guard), lane) & 1) != 0) != in.guard_neg;
  }

  // Control flow exactly as the reference's Step; everything else goes to the handler.
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
        if (in.guard >= 0 && gr.uniform[static_cast<uint32_t>(in.guard)]) {
          taken = GuardOf(in, gr.lanes[0]) ? gr.lanes.size() : 0;
        } else if (in.guard >= 0) {
          const uint64_t* p = Row(static_cast<uint32_t>(in.guard));
          for (uint32_t l : gr.lanes) taken += ((p[l] & 1) != 0) != in.guard_neg ? 1 : 0;
        }
        if (in.guard < 0 || taken == gr.lanes.size()) {
          gr.pc = in.target;
        } else if (taken == 0) {
          ++gr.pc;
        } else {
          MaterializeAll(gr);  // each part gets its own first lane
          Group t;
          t.pc = in.target;
          t.uniform = gr.uniform;  // a subset of a uniform row is uniform
          std::vector<uint32_t> stay;
          t.lanes.reserve(taken);
          stay.reserve(gr.lanes.size() - taken);
          for (uint32_t l : gr.lanes) (GuardOf(in, l) ? t.lanes : stay).push_back(l);
          gr.lanes = std::move(stay);
          ++gr.pc;
          groups_.push_back(std::move(t));
        }
        *reschedule = true;
        return true;
      }
      case Op::kRet: {
        if (in.guard < 0) {
          gr.lanes.clear();
        } else {
          MaterializeAll(gr);  // the first lane may leave
          std::vector<uint32_t> keep;
          for (uint32_t l : gr.lanes) {
            if (!GuardOf(in, l)) keep.push_back(l);
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
    lanes_ = gr.lanes.data();
    count_ = static_cast<uint32_t>(gr.lanes.size());
    first_ = count_ > 0 ? gr.lanes[0] : 0;
    dense_ = count_ > 0 && gr.lanes[count_ - 1] - first_ + 1 == count_;
    cur_uniform_ = gr.uniform.data();
    if (count_ > 1 && fk_.lane_pure[gr.pc] && InputsUniform(in, gr)) {
      if (!ExecUniform(in, gr)) return false;
    } else {
      // Handlers read guards and address bases straight from the rows, and a guarded write
      // leaves some lanes as they were: those registers must hold every lane's value first.
      if (in.guard >= 0) Materialize(gr, static_cast<uint32_t>(in.guard));
      for (uint8_t i = 0; i < in.ns; ++i) {
        if (in.s[i].kind == OpndKind::kAddr && in.s[i].has_base) Materialize(gr, in.s[i].reg);
      }
      for (uint8_t i = 0; i < in.nd; ++i) {
        if (in.d[i].kind == OpndKind::kAddr && in.d[i].has_base) Materialize(gr, in.d[i].reg);
        if (in.d[i].kind == OpndKind::kReg && in.guard >= 0) Materialize(gr, in.d[i].reg);
      }
      if (!fk_.handler[gr.pc](*this, in)) return false;
      for (uint8_t i = 0; i < in.nd; ++i) {
        if (in.d[i].kind == OpndKind::kReg) gr.uniform[in.d[i].reg] = kVaries;
      }
    }
    ++gr.pc;
    return true;
  }

  bool InputsUniform(const Inst& in, const Group& gr) const {
    if (in.guard >= 0 && !gr.uniform[static_cast<uint32_t>(in.guard)]) return false;
    for (uint8_t i = 0; i < in.ns; ++i) {
      const Opnd& o = in.s[i];
      if ((o.kind == OpndKind::kReg || (o.kind == OpndKind::kAddr && o.has_base)) && !gr.uniform[o.reg]) return false;
    }
    return true;
  }

  // Every input is one value across the group: the first lane computes (faulting there, as the
  // reference's first lane would); its results stand for every lane (kLeadOnly).
  bool ExecUniform(const Inst& in, Group& gr) {
    const uint32_t lead = first_;
    if (in.guard >= 0 && !GuardOf(in, lead)) return true;  // no lane runs it
    const uint32_t all = count_;
    const bool dense = dense_;
    count_ = 1;
    dense_ = true;
    const bool ok = fk_.handler[gr.pc](*this, in);
    count_ = all;
    dense_ = dense;
    if (!ok) return false;
    for (uint8_t i = 0; i < in.nd; ++i) gr.uniform[in.d[i].reg] = kLeadOnly;
    return true;
  }

  bool RunGroup(size_t g) {
    const uint32_t stop_at = OtherMinPc(g);
    for (;;) {
      bool reschedule = false;
      if (groups_[g].pc >= k_.code.size()) return Fail("ran past the end of the kernel");
      if (!Step(g, &reschedule)) return false;
      if (reschedule) return true;
      if (groups_[g].pc >= stop_at) return true;
    }
  }

  std::vector<Group> groups_;
  std::string problem_;
};

namespace {

using Src = FastBlock::Src;

// The hot handlers are compiled as one piece with their lane loop and its body: left to itself
// the compiler keeps the per-lane lambda an out-of-line call, which costs more than the work.
#define KSIM_HOT [[gnu::flatten]]

// ---- generic handlers: the shared per-lane semantics, for every instruction ----

bool GenMov(FastBlock& b, const Inst& in) {
  const Src a = b.S(in, 0);
  uint64_t* d = b.Row(in.d[0].reg);
  const int bits = Bits(in.ty);
  return b.Each(in, [&](uint32_t l) {
    d[l] = Mask(a.at(l), bits);
    return true;
  });
}

bool GenBinary(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  uint64_t* d = b.Row(in.d[0].reg);
  const int bits = Bits(in.ty);
  if (IsFloat(in.ty) && in.op != Op::kAnd && in.op != Op::kOr && in.op != Op::kXor) {
    return b.Each(in, [&](uint32_t l) {
      d[l] = FBits(FloatBinary(in, FVal(x.at(l), in.ty), FVal(y.at(l), in.ty)), in.ty);
      return true;
    });
  }
  return b.Each(in, [&](uint32_t l) {
    d[l] = Mask(IntBinary(in, x.at(l), y.at(l)), bits);
    return true;
  });
}

bool GenMul(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  const Src z = in.ns > 2 ? b.S(in, 2) : x;
  uint64_t* d = b.Row(in.d[0].reg);
  if (IsFloat(in.ty)) {
    return b.Each(in, [&](uint32_t l) {
      double r;
      if (in.op == Op::kMul) {
        r = FloatBinary(in, FVal(x.at(l), in.ty), FVal(y.at(l), in.ty));
      } else {
        r = in.ty == Ty::kF32 ? static_cast<double>(std::fma(F32(x.at(l)), F32(y.at(l)), F32(z.at(l))))
                              : std::fma(F64(x.at(l)), F64(y.at(l)), F64(z.at(l)));
        if (in.sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
      }
      d[l] = FBits(r, in.ty);
      return true;
    });
  }
  const int bits = Bits(in.ty);
  const int rbits = in.mode == kWide ? std::min(64, 2 * bits) : bits;
  const bool mad = in.op != Op::kMul;
  return b.Each(in, [&](uint32_t l) {
    uint64_t r = IntMul(in, x.at(l), y.at(l));
    if (mad) r += z.at(l);
    d[l] = Mask(r, rbits);
    return true;
  });
}

bool GenUnary(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0);
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    d[l] = Unary(in, x.at(l));
    return true;
  });
}

bool GenCvt(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0);
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    d[l] = Convert(in, x.at(l));
    return true;
  });
}

bool GenCvta(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0);
  uint64_t* d = b.Row(in.d[0].reg);
  const int bits = Bits(in.ty);
  return b.Each(in, [&](uint32_t l) {
    uint64_t base = 0;
    if (in.space == Space::kShared) base = reinterpret_cast<uint64_t>(b.shared_.data());
    if (in.space == Space::kLocal) {
      base = reinterpret_cast<uint64_t>(b.local_.data()) + static_cast<uint64_t>(l) * b.k_.local_bytes;
    }
    d[l] = Mask(in.to_space ? x.at(l) - base : x.at(l) + base, bits);
    return true;
  });
}

bool GenSetp(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  const Src c = in.ns > 2 ? b.S(in, 2) : x;
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    bool r = Compare(in, x.at(l), y.at(l));
    if (in.combine != kCombNone) {
      const bool cv = (c.at(l) & 1) != 0;
      r = in.combine == kCombAnd ? (r && cv) : in.combine == kCombOr ? (r || cv) : (r != cv);
    }
    d[l] = r ? 1 : 0;
    return true;
  });
}

bool GenSelp(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1), c = b.S(in, 2);
  uint64_t* d = b.Row(in.d[0].reg);
  const int bits = Bits(in.ty);
  return b.Each(in, [&](uint32_t l) {
    d[l] = Mask((c.at(l) & 1) != 0 ? x.at(l) : y.at(l), bits);
    return true;
  });
}

bool GenLd(FastBlock& b, const Inst& in) {
  const uint32_t eb = ElemBytes(in.ty);
  const Opnd& ad = in.s[0];
  const uint64_t* base = ad.has_base ? b.Row(ad.reg) : nullptr;
  return b.Each(in, [&](uint32_t l) {
    const uint64_t a = (base != nullptr ? base[l] : 0) + ad.imm;
    uint8_t* p = b.Addr(in.space, a, eb * in.vec, l);
    if (p == nullptr) return b.Fail(b.FaultText(in, a));
    for (uint8_t i = 0; i < in.vec; ++i) b.R(in.d[i].reg, l) = LoadElem(p + i * eb, in.ty);
    return true;
  });
}

bool GenSt(FastBlock& b, const Inst& in) {
  const uint32_t eb = ElemBytes(in.ty);
  const Opnd& ad = in.d[0];
  const uint64_t* base = ad.has_base ? b.Row(ad.reg) : nullptr;
  Src v[4];
  for (int i = 0; i < in.vec; ++i) v[i] = b.S(in, i);
  return b.Each(in, [&](uint32_t l) {
    const uint64_t a = (base != nullptr ? base[l] : 0) + ad.imm;
    uint8_t* p = b.Addr(in.space, a, eb * in.vec, l);
    if (p == nullptr) return b.Fail(b.FaultText(in, a));
    for (uint8_t i = 0; i < in.vec; ++i) {
      const uint64_t x = v[i].at(l);
      std::memcpy(p + i * eb, &x, eb);
    }
    return true;
  });
}

bool GenAtom(FastBlock& b, const Inst& in) {
  return b.Each(in, [&](uint32_t l) {
    const uint64_t a = (in.s[0].has_base ? b.R(in.s[0].reg, l) : 0) + in.s[0].imm;
    const uint32_t size = ElemBytes(in.ty);
    uint8_t* p = b.Addr(in.space, a, size, l);
    if (p == nullptr) return b.Fail(b.FaultText(in, a));
    const uint64_t old = LoadElem(p, in.ty);
    const uint64_t nv = AtomicResult(in, old, b.S(in, 1).at(l), b.S(in, 2).at(l));
    std::memcpy(p, &nv, size);
    const int bits = Bits(in.ty);
    if (in.nd == 1) b.R(in.d[0].reg, l) = IsSigned(in.ty) ? static_cast<uint64_t>(SExt(old, bits)) : old;
    return true;
  });
}

bool GenNop(FastBlock&, const Inst&) { return true; }

// ---- specialised handlers for what sample-sized kernels spend their time on ----

// Integer ops whose result is a pure function of two operands at a fixed width.
struct AddOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a + b; }
};
struct SubOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a - b; }
};
struct AndOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a & b; }
};
struct OrOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a | b; }
};
struct XorOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a ^ b; }
};
struct MulLoOp {
  static uint64_t F(uint64_t a, uint64_t b) { return a * b; }
};

template <int kBits>
constexpr uint64_t kMaskOf = kBits >= 64 ? ~0ull : (1ull << kBits) - 1;

template <class O, int kBits>
KSIM_HOT bool IntBin(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  uint64_t* d = b.Row(in.d[0].reg);
  if (in.guard < 0 && b.dense_ && y.stride == 0) {  // register op immediate: the common loop form
    const uint64_t* xp = x.p;
    const uint64_t yv = *y.p, xs = x.stride;
    for (uint32_t l = b.first_, e = b.first_ + b.count_; l < e; ++l) d[l] = O::F(xp[l * xs], yv) & kMaskOf<kBits>;
    return true;
  }
  return b.Each(in, [&](uint32_t l) {
    d[l] = O::F(x.at(l), y.at(l)) & kMaskOf<kBits>;
    return true;
  });
}

// mad.lo / mul.wide for 32-bit integers (index arithmetic: blockIdx.x * blockDim.x + threadIdx.x).
template <bool kSigned, bool kWideMul, bool kMad>
KSIM_HOT bool IntMul32(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  const Src z = kMad ? b.S(in, 2) : x;
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    uint64_t r;
    if (kWideMul) {
      r = kSigned ? static_cast<uint64_t>(SExt(x.at(l), 32) * SExt(y.at(l), 32))
                  : (x.at(l) & 0xffffffffull) * (y.at(l) & 0xffffffffull);
      if (kMad) r += z.at(l);
    } else {
      r = ((x.at(l) & 0xffffffffull) * (y.at(l) & 0xffffffffull) + (kMad ? z.at(l) : 0)) & 0xffffffffull;
    }
    d[l] = r;
    return true;
  });
}

template <int kBits>
KSIM_HOT bool MovReg(FastBlock& b, const Inst& in) {
  const Src a = b.S(in, 0);
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    d[l] = a.at(l) & kMaskOf<kBits>;
    return true;
  });
}

// setp with an integer comparison and no combine, as a 0/1 predicate.
template <Cmp kC, bool kSigned, int kBits>
KSIM_HOT bool SetpInt(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    bool r;
    if (kSigned) {
      const int64_t p = SExt(x.at(l), kBits), q = SExt(y.at(l), kBits);
      r = kC == kEq ? p == q : kC == kNe ? p != q : kC == kLt ? p < q : kC == kLe ? p <= q : kC == kGt ? p > q : p >= q;
    } else {
      const uint64_t p = x.at(l) & kMaskOf<kBits>, q = y.at(l) & kMaskOf<kBits>;
      r = kC == kEq ? p == q : kC == kNe ? p != q : kC == kLt ? p < q : kC == kLe ? p <= q : kC == kGt ? p > q : p >= q;
    }
    d[l] = r ? 1 : 0;
    return true;
  });
}

// f32 add/sub/mul and fma.rn.f32: IEEE single operations, as the shared semantics compute them.
template <Op kO>
KSIM_HOT bool F32Arith(FastBlock& b, const Inst& in) {
  const Src x = b.S(in, 0), y = b.S(in, 1);
  const Src z = kO == Op::kFma ? b.S(in, 2) : x;
  uint64_t* d = b.Row(in.d[0].reg);
  return b.Each(in, [&](uint32_t l) {
    const float p = F32(x.at(l)), q = F32(y.at(l));
    float r;
    if (kO == Op::kAdd) r = p + q;
    else if (kO == Op::kSub) r = p - q;
    else if (kO == Op::kMul) r = p * q;
    else r = std::fma(p, q, F32(z.at(l)));
    d[l] = Bits32(r);
    return true;
  });
}

// A loaded element as a register holds it (LoadElem): signed types sign-extended.
template <class T>
uint64_t ToReg(T v) {
  return std::is_signed<T>::value ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
}

// A scalar (one-element) load or store in global or generic space. A lane that reads the
// address the previous lane read takes its value (no store happens inside one instruction), so
// a load every lane makes from one address (a kernel argument behind a pointer) costs one read.
// Both keep the allocation bounds, the offset and the row pointers in locals: every store the
// loop makes (a register row, or memory through a byte pointer) could otherwise alias them and
// force a reload per lane.
template <class T>
KSIM_HOT bool LdGlobal(FastBlock& b, const Inst& in) {
  const uint64_t off = in.s[0].imm;
  const uint64_t* base = b.Row(in.s[0].reg);
  uint64_t* d = b.Row(in.d[0].reg);
  uint64_t lo = b.lo_, hi = b.hi_;
  uint64_t last_a = 0, last_v = 0;
  bool have_last = false;
  return b.Each(in, [&](uint32_t l) {
    const uint64_t a = base[l] + off;
    if (have_last && a == last_a) {
      d[l] = last_v;
      return true;
    }
    const uint8_t* p = reinterpret_cast<const uint8_t*>(a);
    if (!(a >= lo && a + sizeof(T) <= hi && a + sizeof(T) >= a)) {
      p = b.Addr(in.space, a, sizeof(T), l);
      if (p == nullptr) return b.Fail(b.FaultText(in, a));
      lo = b.lo_;
      hi = b.hi_;
    }
    T v;
    std::memcpy(&v, p, sizeof(T));
    last_a = a;
    last_v = ToReg(v);
    d[l] = last_v;
    have_last = true;
    return true;
  });
}

template <class T>
KSIM_HOT bool StGlobal(FastBlock& b, const Inst& in) {
  const uint64_t off = in.d[0].imm;
  const uint64_t* base = b.Row(in.d[0].reg);
  const Src v = b.S(in, 0);
  const uint64_t* vp = v.p;
  const size_t vs = v.stride;
  uint64_t lo = b.lo_, hi = b.hi_;
  return b.Each(in, [&](uint32_t l) {
    const uint64_t a = base[l] + off;
    uint8_t* p = reinterpret_cast<uint8_t*>(a);
    if (!(a >= lo && a + sizeof(T) <= hi && a + sizeof(T) >= a)) {
      p = b.Addr(in.space, a, sizeof(T), l);
      if (p == nullptr) return b.Fail(b.FaultText(in, a));
      lo = b.lo_;
      hi = b.hi_;
    }
    const T x = static_cast<T>(vp[l * vs]);
    std::memcpy(p, &x, sizeof(T));
    return true;
  });
}

// A load without a base register (a kernel parameter, a __device__ variable, a fixed shared
// offset) reads one address for every lane: checked and read at the first active lane, as the
// reference would fault there; local space is per lane and stays generic.
KSIM_HOT bool LdNoBase(FastBlock& b, const Inst& in) {
  const uint32_t eb = ElemBytes(in.ty);
  uint64_t v[4] = {0, 0, 0, 0};
  uint64_t* d[4] = {nullptr, nullptr, nullptr, nullptr};
  for (uint8_t i = 0; i < in.vec; ++i) d[i] = b.Row(in.d[i].reg);
  bool loaded = false;
  return b.Each(in, [&](uint32_t l) {
    if (!loaded) {
      const uint8_t* p = b.Addr(in.space, in.s[0].imm, eb * in.vec, l);
      if (p == nullptr) return b.Fail(b.FaultText(in, in.s[0].imm));
      for (uint8_t i = 0; i < in.vec; ++i) v[i] = LoadElem(p + i * eb, in.ty);
      loaded = true;
    }
    for (uint8_t i = 0; i < in.vec; ++i) d[i][l] = v[i];
    return true;
  });
}

bool IsReg(const Opnd& o) { return o.kind == OpndKind::kReg; }
bool IsRegOrImm(const Opnd& o) { return o.kind == OpndKind::kReg || o.kind == OpndKind::kImm; }

template <class O>
FastHandler IntBinFor(Ty t) {
  if (Bits(t) == 32) return &IntBin<O, 32>;
  if (Bits(t) == 64) return &IntBin<O, 64>;
  return nullptr;
}

template <Cmp kC>
FastHandler SetpFor(Ty t) {
  switch (t) {
    case Ty::kS32: return &SetpInt<kC, true, 32>;
    case Ty::kS64: return &SetpInt<kC, true, 64>;
    case Ty::kU32: case Ty::kB32: return &SetpInt<kC, false, 32>;
    case Ty::kU64: case Ty::kB64: return &SetpInt<kC, false, 64>;
    default: return nullptr;
  }
}

// The specialised handler for `in`, or nullptr when only the generic one applies.
FastHandler Specialised(const Inst& in) {
  const bool int_ty = !IsFloat(in.ty) && in.ty != Ty::kPred && in.ty != Ty::kNone;
  switch (in.op) {
    case Op::kMov:
      if (!IsRegOrImm(in.s[0]) || !int_ty) return nullptr;
      return Bits(in.ty) == 32 ? &MovReg<32> : Bits(in.ty) == 64 ? &MovReg<64> : nullptr;
    case Op::kAdd:
    case Op::kSub:
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor:
      if (!IsRegOrImm(in.s[0]) || !IsRegOrImm(in.s[1])) return nullptr;
      if (in.op == Op::kAdd && in.ty == Ty::kF32 && !in.sat) return &F32Arith<Op::kAdd>;
      if (in.op == Op::kSub && in.ty == Ty::kF32 && !in.sat) return &F32Arith<Op::kSub>;
      if (!int_ty || in.sat) return nullptr;
      switch (in.op) {
        case Op::kAdd: return IntBinFor<AddOp>(in.ty);
        case Op::kSub: return IntBinFor<SubOp>(in.ty);
        case Op::kAnd: return IntBinFor<AndOp>(in.ty);
        case Op::kOr: return IntBinFor<OrOp>(in.ty);
        default: return IntBinFor<XorOp>(in.ty);
      }
    case Op::kMul:
    case Op::kMad: {
      if (!IsRegOrImm(in.s[0]) || !IsRegOrImm(in.s[1]) || (in.ns > 2 && !IsRegOrImm(in.s[2]))) return nullptr;
      const bool mad = in.op == Op::kMad;
      if (in.op == Op::kMul && in.ty == Ty::kF32 && !in.sat) return &F32Arith<Op::kMul>;
      if (!int_ty || Bits(in.ty) != 32) return in.op == Op::kMul && in.mode == kLo && int_ty && Bits(in.ty) == 64
                                                  ? IntBinFor<MulLoOp>(in.ty)
                                                  : nullptr;
      const bool sg = IsSigned(in.ty);
      if (in.mode == kWide) {
        if (sg) return mad ? &IntMul32<true, true, true> : &IntMul32<true, true, false>;
        return mad ? &IntMul32<false, true, true> : &IntMul32<false, true, false>;
      }
      if (in.mode == kLo) return mad ? &IntMul32<false, false, true> : &IntMul32<false, false, false>;
      return nullptr;
    }
    case Op::kFma:
      if (in.ty == Ty::kF32 && !in.sat && IsRegOrImm(in.s[0]) && IsRegOrImm(in.s[1]) && IsRegOrImm(in.s[2])) {
        return &F32Arith<Op::kFma>;
      }
      return nullptr;
    case Op::kSetp:
      if (in.combine != kCombNone || !int_ty || !IsRegOrImm(in.s[0]) || !IsRegOrImm(in.s[1])) return nullptr;
      switch (in.mode) {
        case kEq: return SetpFor<kEq>(in.ty);
        case kNe: return SetpFor<kNe>(in.ty);
        case kLt: return SetpFor<kLt>(in.ty);
        case kLe: return SetpFor<kLe>(in.ty);
        case kGt: return SetpFor<kGt>(in.ty);
        case kGe: return SetpFor<kGe>(in.ty);
        default: return nullptr;
      }
    case Op::kCvta:
      // To or from global space is the identity here (global addresses are host addresses).
      if (in.space == Space::kGlobal && IsReg(in.s[0])) return Bits(in.ty) == 64 ? &MovReg<64> : &MovReg<32>;
      return nullptr;
    case Op::kLd:
    case Op::kSt: {
      if (in.op == Op::kLd && !in.s[0].has_base && in.space != Space::kLocal) return &LdNoBase;
      if (in.op == Op::kLd ? !in.s[0].has_base : !in.d[0].has_base) return nullptr;
      if (in.vec != 1 || (in.space != Space::kGlobal && in.space != Space::kGeneric)) return nullptr;
      if (in.op == Op::kSt && !IsRegOrImm(in.s[0])) return nullptr;
      const bool ld = in.op == Op::kLd;
      switch (in.ty) {
        case Ty::kU32: case Ty::kB32: case Ty::kF32: return ld ? &LdGlobal<uint32_t> : &StGlobal<uint32_t>;
        case Ty::kU64: case Ty::kB64: case Ty::kF64: case Ty::kS64:
          return ld ? &LdGlobal<uint64_t> : &StGlobal<uint64_t>;
        case Ty::kS32: return ld ? &LdGlobal<int32_t> : &StGlobal<uint32_t>;
        default: return nullptr;
      }
    }
    default: return nullptr;
  }
}

FastHandler Generic(const Inst& in) {
  switch (in.op) {
    case Op::kLd: return &GenLd;
    case Op::kSt: return &GenSt;
    case Op::kMov: return &GenMov;
    case Op::kAdd: case Op::kSub: case Op::kDiv: case Op::kRem: case Op::kMin: case Op::kMax:
    case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
      return &GenBinary;
    case Op::kMul: case Op::kMad: case Op::kFma: return &GenMul;
    case Op::kNot: case Op::kCnot: case Op::kNeg: case Op::kAbs: case Op::kSqrt: case Op::kRcp: return &GenUnary;
    case Op::kCvt: return &GenCvt;
    case Op::kCvta: return &GenCvta;
    case Op::kSetp: return &GenSetp;
    case Op::kSelp: return &GenSelp;
    case Op::kAtom: return &GenAtom;
    case Op::kNop: return &GenNop;
    default: return nullptr;  // bra, ret, bar: the scheduler's
  }
}

// See FastKernel::lane_pure. Excluded: stores and atomics (effects per lane), local memory
// and cvta to or from it (per-thread addresses), clock reads only through an operand (a clock
// is one value per step, so those stay pure), control flow (the scheduler's).
bool LanePure(const Inst& in) {
  switch (in.op) {
    case Op::kLd:
    case Op::kCvta:
      return in.space != Space::kLocal;
    case Op::kMov: case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kMad: case Op::kFma: case Op::kDiv:
    case Op::kRem: case Op::kMin: case Op::kMax: case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kNot:
    case Op::kCnot: case Op::kShl: case Op::kShr: case Op::kNeg: case Op::kAbs: case Op::kCvt: case Op::kSetp:
    case Op::kSelp: case Op::kSqrt: case Op::kRcp:
      return true;
    default:
      return false;
  }
}

}  // namespace

FastKernel CompileFast(const Kernel& kernel) {
  FastKernel fk;
  fk.kernel = &kernel;
  fk.handler.reserve(kernel.code.size());
  for (const Inst& in : kernel.code) {
    FastHandler h = Specialised(in);
    fk.handler.push_back(h != nullptr ? h : Generic(in));
    fk.lane_pure.push_back(LanePure(in) ? 1 : 0);
  }
  return fk;
}

ExecResult ExecuteFast(const FastKernel& fk, const LaunchDims& dims, const uint8_t* params,
                       const GlobalResolver& global, uint64_t max_thread_instructions) {
  ExecResult res;
  uint64_t budget = max_thread_instructions;
  FastBlock block(fk, dims, params, global, &budget);
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
