// File: test/sim/src/ptx_parse.cc
// Layer: CUDA/CUPTI simulator, kernel execution: PTX text -> ptx::Kernel.
// Threading: pure functions.
//
// The parser reads what nvcc emits, not all of PTX: one statement per ';', labels
// "name:", .loc/.file lines (no ';'), nested { } scopes flattened. Anything outside the
// subset makes the whole kernel unsupported, so a kernel either runs completely or not at all.
#include "ptx_parse.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

namespace kairos::sim::ptx {
namespace {

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.';
}

// Comments removed, and the line-based directives (.loc, .file) that end without ';'.
std::string Clean(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    if (in.compare(i, 2, "//") == 0) {
      while (i < in.size() && in[i] != '\n') ++i;
    } else if (in.compare(i, 2, "/*") == 0) {
      size_t e = in.find("*/", i + 2);
      i = e == std::string::npos ? in.size() : e + 2;
    } else if (in[i] == '"') {  // strings (in .file, .pragma) copied whole
      size_t e = in.find('"', i + 1);
      e = e == std::string::npos ? in.size() : e + 1;
      out.append(in, i, e - i);
      i = e;
    } else {
      out.push_back(in[i++]);
    }
  }
  std::string res;
  res.reserve(out.size());
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    std::string line = out.substr(pos, nl - pos);
    std::string t = Trim(line);
    // ".loc" and ".file" exactly (".local" is a declaration).
    auto directive = [&t](const char* d, size_t n) {
      return t.compare(0, n, d) == 0 && (t.size() == n || std::isspace(static_cast<unsigned char>(t[n])));
    };
    if (!directive(".loc", 4) && !directive(".file", 5)) {
      res += line;
      res += '\n';
    }
    pos = nl + 1;
  }
  return res;
}

bool ParseTy(const std::string& s, Ty* t) {
  static const std::map<std::string, Ty> kTypes = {
      {"b8", Ty::kB8},   {"b16", Ty::kB16}, {"b32", Ty::kB32}, {"b64", Ty::kB64}, {"u8", Ty::kU8},
      {"u16", Ty::kU16}, {"u32", Ty::kU32}, {"u64", Ty::kU64}, {"s8", Ty::kS8},   {"s16", Ty::kS16},
      {"s32", Ty::kS32}, {"s64", Ty::kS64}, {"f32", Ty::kF32}, {"f64", Ty::kF64}, {"pred", Ty::kPred}};
  auto it = kTypes.find(s);
  if (it == kTypes.end()) return false;
  *t = it->second;
  return true;
}

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  const char* p = s.c_str();
  char* end = nullptr;
  bool neg = false;
  if (*p == '-') {
    neg = true;
    ++p;
  }
  if (!std::isdigit(static_cast<unsigned char>(*p))) return false;
  unsigned long long u = std::strtoull(p, &end, 0);  // 0x.., 0.., decimal
  if (*end == 'U') ++end;
  if (*end != '\0') return false;
  // Negated as unsigned: "-9223372036854775808" (nvcc writes 64-bit constants with the top bit
  // set this way) has no positive int64_t to negate.
  *v = static_cast<int64_t>(neg ? 0 - u : u);
  return true;
}

struct Symbol {
  uint64_t value;
};

struct Ctx {
  const GlobalLookup* globals;
  std::unordered_map<std::string, uint32_t> regs;
  std::unordered_map<std::string, uint64_t> params, shared, local;
  std::unordered_map<std::string, uint32_t> labels;
  uint32_t next_reg = kNumSpecial;
  std::string why;

  bool Fail(const std::string& w) {
    if (why.empty()) why = w;
    return false;
  }
  uint32_t Reg(const std::string& name) {
    auto it = regs.find(name);
    if (it != regs.end()) return it->second;
    regs.emplace(name, next_reg);
    return next_reg++;
  }
  // A symbol's address in its own space (param/shared/local offset, host address of a global).
  bool SymbolValue(const std::string& name, uint64_t* v) {
    if (name == "WARP_SZ") {
      *v = 32;
      return true;
    }
    for (auto* table : {&params, &shared, &local}) {
      auto it = table->find(name);
      if (it != table->end()) {
        *v = it->second;
        return true;
      }
    }
    return *globals && (*globals)(name, v);
  }
};

bool ParseOpnd(const std::string& raw, Ctx& c, Opnd* o) {
  std::string s = Trim(raw);
  if (s.empty()) return c.Fail("empty operand");
  if (s[0] == '[') {
    if (s.back() != ']') return c.Fail("operand " + s);
    std::string in = Trim(s.substr(1, s.size() - 2));
    o->kind = OpndKind::kAddr;
    size_t split = std::string::npos;
    for (size_t i = 1; i < in.size(); ++i) {
      if (in[i] == '+' || in[i] == '-') {
        split = i;
        break;
      }
    }
    std::string base = Trim(in.substr(0, split));
    int64_t off = 0;
    if (split != std::string::npos) {
      std::string o2 = Trim(in.substr(split + (in[split] == '+' ? 1 : 0)));
      if (!o2.empty() && o2[0] == '+') o2 = o2.substr(1);
      if (!ParseInt(o2, &off)) return c.Fail("address " + s);
    }
    int64_t num = 0;
    uint64_t sym = 0;
    if (base[0] == '%') {
      o->has_base = true;
      o->reg = c.Reg(base);
    } else if (ParseInt(base, &num)) {
      off += num;
    } else if (c.SymbolValue(base, &sym)) {
      off += static_cast<int64_t>(sym);
    } else {
      return c.Fail("symbol " + base);
    }
    o->imm = static_cast<uint64_t>(off);
    return true;
  }
  if (s[0] == '%') {
    static const std::map<std::string, uint32_t> kSpecial = {
        {"%tid.x", kTidX},       {"%tid.y", kTidY},       {"%tid.z", kTidZ},       {"%ntid.x", kNtidX},
        {"%ntid.y", kNtidY},     {"%ntid.z", kNtidZ},     {"%ctaid.x", kCtaidX},   {"%ctaid.y", kCtaidY},
        {"%ctaid.z", kCtaidZ},   {"%nctaid.x", kNctaidX}, {"%nctaid.y", kNctaidY}, {"%nctaid.z", kNctaidZ},
        {"%laneid", kLaneId},    {"%warpid", kWarpId}};
    auto it = kSpecial.find(s);
    if (it != kSpecial.end()) {
      o->kind = OpndKind::kReg;
      o->reg = it->second;
      return true;
    }
    if (s == "%clock") {
      o->kind = OpndKind::kClock32;
      return true;
    }
    if (s == "%clock64") {
      o->kind = OpndKind::kClock64;
      return true;
    }
    // Other special registers (%smid, %envreg<n>, %globaltimer...) are not modelled.
    static const char* kUnmodelled[] = {"%smid", "%nsmid", "%nwarpid", "%gridid", "%globaltimer", "%envreg",
                                        "%lanemask", "%pm", "%dynamic_smem_size", "%total_smem_size", "%clusterid",
                                        "%nclusterid", "%cluster"};
    for (const char* u : kUnmodelled) {
      if (s.compare(0, std::strlen(u), u) == 0) return c.Fail("special register " + s);
    }
    if (s.find('|') != std::string::npos) return c.Fail("operand " + s);
    o->kind = OpndKind::kReg;
    o->reg = c.Reg(s);
    return true;
  }
  o->kind = OpndKind::kImm;
  if (s.size() == 10 && (s.compare(0, 2, "0f") == 0 || s.compare(0, 2, "0F") == 0)) {
    o->imm = std::strtoull(s.c_str() + 2, nullptr, 16);
    return true;
  }
  if (s.size() == 18 && (s.compare(0, 2, "0d") == 0 || s.compare(0, 2, "0D") == 0)) {
    o->imm = std::strtoull(s.c_str() + 2, nullptr, 16);
    return true;
  }
  int64_t v = 0;
  if (ParseInt(s, &v)) {
    o->imm = static_cast<uint64_t>(v);
    return true;
  }
  uint64_t sym = 0;
  if (c.params.count(s) != 0) return c.Fail("address of a parameter (" + s + ")");
  if (c.SymbolValue(s, &sym)) {
    o->imm = sym;
    return true;
  }
  return c.Fail("operand " + s);
}

// Splits at top-level commas (not inside [] or {}).
std::vector<std::string> SplitOperands(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : s) {
    if (ch == '[' || ch == '{') ++depth;
    if (ch == ']' || ch == '}') --depth;
    if (ch == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  if (!Trim(cur).empty()) out.push_back(Trim(cur));
  return out;
}

// A value list: "{%f1, %f2}" or one operand.
bool ParseValues(const std::string& s, Ctx& c, Opnd* out, uint8_t* n, uint8_t max) {
  std::string t = Trim(s);
  if (!t.empty() && t[0] == '{') {
    if (t.back() != '}') return c.Fail("operand " + t);
    auto parts = SplitOperands(t.substr(1, t.size() - 2));
    if (parts.empty() || parts.size() > max) return c.Fail("vector " + t);
    for (const auto& p : parts) {
      if (!ParseOpnd(p, c, &out[*n])) return false;
      ++*n;
    }
    return true;
  }
  if (*n >= max) return c.Fail("operands");
  if (!ParseOpnd(t, c, &out[*n])) return false;
  ++*n;
  return true;
}

bool HasMod(const std::vector<std::string>& mods, const char* m) {
  for (const auto& x : mods) {
    if (x == m) return true;
  }
  return false;
}

Space SpaceOf(const std::vector<std::string>& mods) {
  for (const auto& m : mods) {
    if (m == "global") return Space::kGlobal;
    if (m == "shared") return Space::kShared;
    if (m == "local") return Space::kLocal;
    if (m == "param") return Space::kParam;
    if (m == "const") return Space::kConst;
  }
  return Space::kGeneric;
}

bool DecodeInst(const std::string& stmt, Ctx& c, Inst* in) {
  std::string s = Trim(stmt);
  if (s[0] == '@') {
    size_t sp = s.find_first_of(" \t");
    std::string g = s.substr(1, sp - 1);
    if (!g.empty() && g[0] == '!') {
      in->guard_neg = true;
      g = g.substr(1);
    }
    if (g.empty() || g[0] != '%') return c.Fail("guard " + g);
    in->guard = static_cast<int32_t>(c.Reg(g));
    s = Trim(s.substr(sp));
  }
  size_t sp = s.find_first_of(" \t");
  std::string opcode = s.substr(0, sp);
  std::string rest = sp == std::string::npos ? "" : Trim(s.substr(sp));
  std::vector<std::string> mods;
  size_t pos = 0;
  while (pos <= opcode.size()) {
    size_t dot = opcode.find('.', pos);
    if (dot == std::string::npos) dot = opcode.size();
    mods.push_back(opcode.substr(pos, dot - pos));
    pos = dot + 1;
  }
  const std::string base = mods[0];
  mods.erase(mods.begin());
  std::vector<Ty> types;
  for (const auto& m : mods) {
    Ty t;
    if (ParseTy(m, &t)) types.push_back(t);
    // Half and packed types, carry chains and the like are outside the subset.
    if (m == "f16" || m == "f16x2" || m == "bf16" || m == "bf16x2" || m == "cc" || m == "tf32" || m == "b128" ||
        m == "u128" || m == "s128" || m == "e4m3" || m == "e5m2" || m == "v8") {
      return c.Fail("instruction " + opcode);
    }
  }
  in->ty = types.empty() ? Ty::kNone : types[0];
  in->sat = HasMod(mods, "sat");
  auto ops = SplitOperands(rest);
  auto need = [&](size_t n) { return ops.size() == n ? true : c.Fail("instruction " + opcode + " operands"); };
  auto dst_src = [&](size_t nsrc) {
    if (!need(1 + nsrc)) return false;
    in->nd = 1;
    if (!ParseOpnd(ops[0], c, &in->d[0])) return false;
    for (size_t i = 0; i < nsrc; ++i) {
      if (!ParseOpnd(ops[1 + i], c, &in->s[i])) return false;
    }
    in->ns = static_cast<uint8_t>(nsrc);
    return in->d[0].kind == OpndKind::kReg ? true : c.Fail("instruction " + opcode + " destination");
  };
  auto rounding = [&]() {
    static const std::map<std::string, Round> kRound = {{"rn", kRn},   {"rz", kRz},   {"rm", kRm},
                                                        {"rp", kRp},   {"rni", kRni}, {"rzi", kRzi},
                                                        {"rmi", kRmi}, {"rpi", kRpi}};
    for (const auto& m : mods) {
      auto it = kRound.find(m);
      if (it != kRound.end()) return it->second;
    }
    return kRDefault;
  };
  if (in->ty == Ty::kNone && base != "bra" && base != "ret" && base != "exit" && base != "bar" &&
      base != "barrier" && base != "membar" && base != "fence") {
    return c.Fail("instruction " + opcode);
  }
  if (base == "ld" || base == "ldu") {
    in->op = Op::kLd;
    in->space = SpaceOf(mods);
    if (!need(2)) return false;
    if (!ParseValues(ops[0], c, in->d, &in->nd, 4)) return false;
    in->vec = in->nd;
    if (!ParseOpnd(ops[1], c, &in->s[0]) || in->s[0].kind != OpndKind::kAddr) return c.Fail("instruction " + opcode);
    in->ns = 1;
    return true;
  }
  if (base == "st") {
    in->op = Op::kSt;
    in->space = SpaceOf(mods);
    if (!need(2)) return false;
    if (!ParseOpnd(ops[0], c, &in->d[0]) || in->d[0].kind != OpndKind::kAddr) return c.Fail("instruction " + opcode);
    in->nd = 1;
    if (!ParseValues(ops[1], c, in->s, &in->ns, 4)) return false;
    in->vec = in->ns;
    return true;
  }
  if (base == "mov") {
    in->op = Op::kMov;
    if (ops.size() == 2 && (Trim(ops[0])[0] == '{' || Trim(ops[1])[0] == '{')) return c.Fail("instruction mov (vector)");
    return dst_src(1);
  }
  static const std::map<std::string, Op> kBinary = {
      {"add", Op::kAdd}, {"sub", Op::kSub}, {"div", Op::kDiv}, {"rem", Op::kRem}, {"min", Op::kMin},
      {"max", Op::kMax}, {"and", Op::kAnd}, {"or", Op::kOr},   {"xor", Op::kXor}, {"shl", Op::kShl},
      {"shr", Op::kShr}};
  auto bin = kBinary.find(base);
  if (bin != kBinary.end()) {
    in->op = bin->second;
    return dst_src(2);
  }
  if (base == "mul" || base == "mad") {
    in->op = base == "mul" ? Op::kMul : Op::kMad;
    in->mode = HasMod(mods, "hi") ? kHi : HasMod(mods, "wide") ? kWide : kLo;
    return dst_src(base == "mul" ? 2 : 3);
  }
  if (base == "fma") {
    in->op = Op::kFma;
    return dst_src(3);
  }
  static const std::map<std::string, Op> kUnary = {{"not", Op::kNot}, {"cnot", Op::kCnot}, {"neg", Op::kNeg},
                                                   {"abs", Op::kAbs}, {"sqrt", Op::kSqrt}, {"rcp", Op::kRcp}};
  auto un = kUnary.find(base);
  if (un != kUnary.end()) {
    in->op = un->second;
    return dst_src(1);
  }
  if (base == "cvt") {
    if (types.size() != 2) return c.Fail("instruction " + opcode);
    in->op = Op::kCvt;
    in->ty2 = types[1];
    in->mode = rounding();
    return dst_src(1);
  }
  if (base == "cvta") {
    in->op = Op::kCvta;
    in->space = SpaceOf(mods);
    in->to_space = HasMod(mods, "to");
    if (in->space == Space::kGeneric || in->space == Space::kParam || in->space == Space::kConst) {
      return c.Fail("instruction " + opcode);
    }
    return dst_src(1);
  }
  if (base == "setp") {
    static const std::map<std::string, Cmp> kCmp = {
        {"eq", kEq},   {"ne", kNe},   {"lt", kLt},   {"le", kLe},   {"gt", kGt},   {"ge", kGe},
        {"lo", kLo_},  {"ls", kLs},   {"hi", kHi_},  {"hs", kHs},   {"equ", kEqu}, {"neu", kNeu},
        {"ltu", kLtu}, {"leu", kLeu}, {"gtu", kGtu}, {"geu", kGeu}, {"num", kNum}, {"nan", kNan}};
    in->op = Op::kSetp;
    bool found = false;
    for (const auto& m : mods) {
      auto it = kCmp.find(m);
      if (it != kCmp.end()) {
        in->mode = it->second;
        found = true;
      }
    }
    if (!found) return c.Fail("instruction " + opcode);
    in->combine = HasMod(mods, "and") ? kCombAnd : HasMod(mods, "or") ? kCombOr : HasMod(mods, "xor") ? kCombXor
                                                                                                         : kCombNone;
    if (in->combine != kCombNone) {
      if (!ops.empty() && !Trim(ops.back()).empty() && Trim(ops.back())[0] == '!') {
        return c.Fail("instruction " + opcode + " (negated predicate)");
      }
      return dst_src(3);
    }
    return dst_src(2);
  }
  if (base == "selp") {
    in->op = Op::kSelp;
    return dst_src(3);
  }
  if (base == "bra") {
    in->op = Op::kBra;
    if (ops.size() != 1) return c.Fail("instruction " + opcode);
    auto it = c.labels.find(Trim(ops[0]));
    if (it == c.labels.end()) return c.Fail("branch target " + ops[0]);
    in->target = it->second;
    return true;
  }
  if (base == "ret" || base == "exit") {
    in->op = Op::kRet;
    return true;
  }
  if (base == "bar" || base == "barrier") {
    // bar.sync / barrier.sync [.aligned] id[, count]: every live thread of the block waits.
    if (!HasMod(mods, "sync") && !(mods.empty() && base == "barrier")) return c.Fail("instruction " + opcode);
    if (ops.empty() || ops.size() > 2) return c.Fail("instruction " + opcode);
    in->op = Op::kBar;
    return true;
  }
  if (base == "membar" || base == "fence") {
    in->op = Op::kNop;  // one thread at a time sees every store in order
    return true;
  }
  if (base == "atom" || base == "red") {
    static const std::map<std::string, AtomOp> kAtom = {
        {"add", kAtomAdd}, {"min", kAtomMin}, {"max", kAtomMax}, {"exch", kAtomExch}, {"cas", kAtomCas},
        {"and", kAtomAnd}, {"or", kAtomOr},   {"xor", kAtomXor}, {"inc", kAtomInc},   {"dec", kAtomDec}};
    in->op = Op::kAtom;
    in->space = SpaceOf(mods);
    bool found = false;
    for (const auto& m : mods) {
      auto it = kAtom.find(m);
      if (it != kAtom.end()) {
        in->mode = it->second;
        found = true;
      }
    }
    if (!found || (in->space != Space::kGeneric && in->space != Space::kGlobal && in->space != Space::kShared)) {
      return c.Fail("instruction " + opcode);
    }
    const bool has_dst = base == "atom";
    const size_t nsrc = in->mode == kAtomCas ? 2 : 1;
    if (!need((has_dst ? 1 : 0) + 1 + nsrc)) return false;
    size_t k = 0;
    if (has_dst) {
      if (!ParseOpnd(ops[k++], c, &in->d[0]) || in->d[0].kind != OpndKind::kReg) return c.Fail("instruction " + opcode);
      in->nd = 1;
    }
    if (!ParseOpnd(ops[k++], c, &in->s[0]) || in->s[0].kind != OpndKind::kAddr) return c.Fail("instruction " + opcode);
    for (size_t i = 0; i < nsrc; ++i) {
      if (!ParseOpnd(ops[k++], c, &in->s[1 + i])) return false;
    }
    in->ns = static_cast<uint8_t>(1 + nsrc);
    return true;
  }
  return c.Fail("instruction " + opcode);
}

// Size in bytes of a declaration's tail such as ".align 8 .b8 name[256]"; the name out.
bool ParseDecl(const std::string& decl, std::string* name, uint64_t* size, uint64_t* align, bool* unsized) {
  std::vector<std::string> toks;
  std::string cur;
  for (char ch : decl) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      if (!cur.empty()) toks.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  if (!cur.empty()) toks.push_back(cur);
  Ty ty = Ty::kNone;
  *align = 0;
  *unsized = false;
  for (size_t i = 0; i < toks.size(); ++i) {
    const std::string& t = toks[i];
    if (t == ".align" && i + 1 < toks.size()) {
      *align = std::strtoull(toks[++i].c_str(), nullptr, 10);
    } else if (t[0] == '.') {
      Ty x;
      if (ParseTy(t.substr(1), &x)) ty = x;
    } else {
      size_t br = t.find('[');
      *name = t.substr(0, br);
      uint64_t elem = ty == Ty::kNone ? 1 : static_cast<uint64_t>(Bits(ty) / 8);
      if (ty == Ty::kPred) elem = 1;
      uint64_t count = 1;
      if (br != std::string::npos) {
        std::string n = t.substr(br + 1, t.find(']') - br - 1);
        if (n.empty()) {
          *unsized = true;
          count = 0;
        } else {
          count = std::strtoull(n.c_str(), nullptr, 10);
        }
      }
      *size = elem * count;
      if (*align == 0) *align = elem;
      return !name->empty();
    }
  }
  return false;
}

uint64_t AlignUp(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

// Finds ".entry <name>" as a whole token; returns the position after the name or npos.
size_t FindEntry(const std::string& text, const std::string& name) {
  size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string::npos) {
    size_t p = pos + 6;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (text.compare(p, name.size(), name) == 0 &&
        (p + name.size() >= text.size() || !IsIdentChar(text[p + name.size()]))) {
      return p + name.size();
    }
    pos = p;
  }
  return std::string::npos;
}

// Statements at module scope (outside every function body), e.g. ".extern .shared .b8 s[]".
std::vector<std::string> ModuleStatements(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : text) {
    if (ch == '{') ++depth;
    if (ch == '}') {
      --depth;
      if (depth == 0) {
        cur.clear();  // a function body ended
        continue;
      }
    }
    if (depth != 0) continue;
    if (ch == ';') {
      if (!Trim(cur).empty()) out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  return out;
}

}  // namespace

ParseResult ParseKernel(const std::string& ptx, const std::string& name, const GlobalLookup& globals, Kernel* out,
                        std::string* why) {
  if (FindEntry(ptx, name) == std::string::npos) return ParseResult::kNotFound;
  const std::string text = Clean(ptx);
  size_t p = FindEntry(text, name);
  if (p == std::string::npos) return ParseResult::kNotFound;
  Ctx c;
  c.globals = &globals;
  Kernel k;
  k.name = name;
  auto unsupported = [&](const std::string& w) {
    *why = w;
    return ParseResult::kUnsupported;
  };
  // Parameters: "( .param .u64 a, .param .align 8 .b8 b[16] )".
  size_t open = text.find_first_not_of(" \t\r\n", p);
  if (open != std::string::npos && text[open] == '(') {
    size_t close = text.find(')', open);
    if (close == std::string::npos) return unsupported("unterminated parameter list");
    uint64_t off = 0;
    for (const std::string& decl : SplitOperands(text.substr(open + 1, close - open - 1))) {
      std::string pname;
      uint64_t size = 0, align = 0;
      bool unsized = false;
      std::string d = Trim(decl);
      if (d.compare(0, 6, ".param") != 0 || !ParseDecl(d.substr(6), &pname, &size, &align, &unsized) || unsized) {
        return unsupported("parameter " + d);
      }
      off = AlignUp(off, align);
      c.params[pname] = off;
      k.param_offset.push_back(static_cast<uint32_t>(off));
      k.param_size.push_back(static_cast<uint32_t>(size));
      off += size;
    }
    k.param_bytes = static_cast<uint32_t>(off);
    p = close + 1;
  }
  size_t body = text.find('{', p);
  if (body == std::string::npos) return unsupported("no kernel body");
  // Statements of the body, nested scopes flattened.
  std::vector<std::string> stmts;
  int depth = 1, vec_depth = 0;
  std::string cur;
  size_t i = body + 1;
  for (; i < text.size() && depth > 0; ++i) {
    char ch = text[i];
    if (ch == '"') {
      size_t e = text.find('"', i + 1);
      if (e == std::string::npos) break;
      cur.append(text, i, e - i + 1);
      i = e;
      continue;
    }
    // Braces inside a statement are a vector operand ({%f1, %f2}); at its start, a scope.
    if (ch == '{' && !Trim(cur).empty()) ++vec_depth;
    if (vec_depth > 0 && (ch == '{' || ch == '}')) {
      if (ch == '}') --vec_depth;
      cur.push_back(ch);
      continue;
    }
    if (ch == '{' || ch == '}' || ch == ';') {
      if (!Trim(cur).empty()) stmts.push_back(Trim(cur));
      cur.clear();
      if (ch == '{') ++depth;
      if (ch == '}') --depth;
      continue;
    }
    cur.push_back(ch);
    // A label ends its own statement.
    if (ch == ':') {
      std::string t = Trim(cur);
      bool ident = t.size() > 1;
      for (size_t j = 0; j + 1 < t.size() && ident; ++j) ident = IsIdentChar(t[j]) && t[j] != '%';
      if (ident) {
        stmts.push_back(t);
        cur.clear();
      }
    }
  }
  if (depth != 0) return unsupported("unterminated kernel body");
  // Pass 1: labels and declarations; module-scope shared variables first.
  std::vector<const std::string*> insts;
  uint64_t shared_off = 0, local_off = 0;
  std::string dyn_shared;
  std::vector<std::string> module = ModuleStatements(text);
  std::vector<const std::string*> decls;
  for (const std::string& st : module) {
    if (st.compare(0, 7, ".shared") == 0 || st.compare(0, 15, ".extern .shared") == 0) decls.push_back(&st);
  }
  for (const std::string& st : stmts) decls.push_back(&st);
  for (const std::string* stp : decls) {
    const std::string& st = *stp;
    if (st.back() == ':') {
      c.labels[st.substr(0, st.size() - 1)] = static_cast<uint32_t>(insts.size());
      continue;
    }
    if (st[0] != '.') {
      insts.push_back(&st);
      continue;
    }
    std::string dname;
    uint64_t size = 0, align = 0;
    bool unsized = false;
    if (st.compare(0, 7, ".shared") == 0 || st.compare(0, 15, ".extern .shared") == 0) {
      std::string rest = st.substr(st.find(".shared") + 7);
      if (!ParseDecl(rest, &dname, &size, &align, &unsized)) return unsupported("declaration " + st);
      if (rest.find('=') != std::string::npos) return unsupported("initialized shared variable");
      if (unsized) {
        dyn_shared = dname;
        continue;
      }
      shared_off = AlignUp(shared_off, align);
      c.shared[dname] = shared_off;
      shared_off += size;
    } else if (st.compare(0, 6, ".local") == 0) {
      if (!ParseDecl(st.substr(6), &dname, &size, &align, &unsized) || unsized) return unsupported("declaration " + st);
      local_off = AlignUp(local_off, align);
      c.local[dname] = local_off;
      local_off += size;
    } else if (st.compare(0, 4, ".reg") == 0 || st.compare(0, 7, ".pragma") == 0) {
      continue;
    } else {
      return unsupported("directive " + st.substr(0, st.find_first_of(" \t")));
    }
  }
  k.shared_static = static_cast<uint32_t>(AlignUp(shared_off, 16));
  if (!dyn_shared.empty()) c.shared[dyn_shared] = k.shared_static;
  k.local_bytes = static_cast<uint32_t>(AlignUp(local_off, 16));
  // Pass 2: instructions.
  k.code.resize(insts.size());
  for (size_t n = 0; n < insts.size(); ++n) {
    if (!DecodeInst(*insts[n], c, &k.code[n])) return unsupported(c.why);
  }
  if (k.code.empty() || k.code.back().op != Op::kRet) {
    Inst r;
    r.op = Op::kRet;  // falling off the end of the body returns
    k.code.push_back(r);
  }
  k.nregs = c.next_reg;
  *out = std::move(k);
  return ParseResult::kOk;
}

}  // namespace kairos::sim::ptx
