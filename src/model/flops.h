// File: flops.h
// Layer: kairos_model (header-only, no dependencies: the torch bridge includes it too). The FLOP
// formulas of framework operators, one free function per formula, on raw sizes. The torch
// bridge applies them to an operator's inputs while recording (PROFILE_WITH_FLOPS); the table
// of which operator uses which formula, with the sources of each, is docs/FLOPS.md.
// PyTorch's own profiler (with_flops) computes mm, addmm, bmm, baddbmm, mul, add and conv2d:
// for those the functions give exactly its values (checked against torch 1.13 in
// test/python/torch_flops_test.py); the others are the standard counts (2 FLOPs per
// multiply-add) for operators PyTorch leaves without.
// All functions return -1 when the sizes do not fit the formula or the count does not fit
// 63 bits (the caller then writes no "flops"), never throw, and compute in checked 64-bit
// unsigned arithmetic (PyTorch's own values wherever they fit, which real shapes always do).
#ifndef KAIROS_SRC_FLOPS_H_
#define KAIROS_SRC_FLOPS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kairos::flops {

// A tensor's sizes, borrowed.
struct Dims {
  const int64_t* d = nullptr;
  size_t n = 0;
  int64_t operator[](size_t i) const { return d[i]; }
};

// Checked arithmetic. Real shapes never come near 2^63 FLOPs, but a read trace's "Input Dims"
// can say anything (negative sizes, sizes whose product overflows): a count that does not fit
// is unknown, never a wrapped number. kBad marks a negative size or an overflow and stays
// kBad through every operation below; Result turns it (and anything past INT64_MAX) into -1.
inline constexpr uint64_t kBad = UINT64_MAX;
inline uint64_t Size(int64_t v) { return v < 0 ? kBad : static_cast<uint64_t>(v); }
inline uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (a == kBad || b == kBad || __builtin_mul_overflow(a, b, &r)) return kBad;
  return r;
}
inline uint64_t Add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (a == kBad || b == kBad || __builtin_add_overflow(a, b, &r)) return kBad;
  return r;
}
// a / b for b > 0 (callers check 0).
inline uint64_t Div(uint64_t a, uint64_t b) { return a == kBad || b == kBad ? kBad : a / b; }

inline uint64_t Product(Dims x, size_t from = 0) {
  uint64_t p = 1;
  for (size_t i = from; i < x.n; ++i) p = Mul(p, Size(x[i]));
  return p;
}

inline int64_t Result(uint64_t v) { return v > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v); }

// aten::mm / aten::addmm (PyTorch's rule): 2 * prod(mat1) / mat1[-1] * prod(mat2), i.e.
// 2*M*K*N for [M,K] x [K,N]; 0 when K is 0.
inline int64_t Gemm(Dims mat1, Dims mat2) {
  if (mat1.n == 0) return 0;
  const int64_t k = mat1[mat1.n - 1];
  if (k == 0) return 0;
  return Result(Mul(Mul(Div(Product(mat1), Size(k)), Product(mat2)), 2));
}

// aten::bmm / aten::baddbmm (PyTorch's rule): 2 * prod(mat1) / mat1[-1] / mat1[0] *
// prod(mat2), i.e. 2*B*M*K*N for [B,M,K] x [B,K,N].
inline int64_t BatchedGemm(Dims mat1, Dims mat2) {
  if (mat1.n == 0) return 0;
  const int64_t b = mat1[0], k = mat1[mat1.n - 1];
  if (b == 0 || k == 0) return 0;
  return Result(Mul(Mul(Div(Div(Product(mat1), Size(k)), Size(b)), Product(mat2)), 2));
}

// aten::mul / aten::add (PyTorch's rule): one FLOP per element of the first input.
inline int64_t Elementwise(Dims self) { return Result(Product(self)); }

// Output size of one spatial dimension of a convolution (PyTorch's shape formula):
// (in + 2*padding - dilation*(kernel-1) - 1) / stride + 1; kBad for negative sizes, a
// stride of 0, an empty output or a value past 64 bits.
inline uint64_t ConvOut(int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                        int64_t dilation) {
  if (in < 0 || kernel < 1 || stride < 1 || padding < 0 || dilation < 0) return kBad;
  const __int128 num = static_cast<__int128>(in) + 2 * static_cast<__int128>(padding) -
                       static_cast<__int128>(dilation) * (kernel - 1) - 1;
  if (num < 0) return kBad;
  const __int128 out = num / stride + 1;
  return out > static_cast<__int128>(INT64_MAX) ? kBad : static_cast<uint64_t>(out);
}

// aten::conv1d/2d/3d: input [N, C_in, s...], weight [C_out, C_in/groups, k...], stride,
// padding, dilation with one entry per spatial dimension (or one for all).
// 2 * N * prod(out spatial) * prod(k) * C_in * C_out / groups (PyTorch's conv2d rule, the
// same count for 1 and 3 spatial dimensions).
inline int64_t Conv(Dims input, Dims weight, Dims stride, Dims padding, Dims dilation,
                    int64_t groups) {
  const size_t sp = input.n >= 3 ? input.n - 2 : 0;
  if (sp == 0 || weight.n != input.n || groups <= 0) return -1;
  auto at = [](Dims v, size_t i) -> int64_t { return v.n == 1 ? v[0] : v[i]; };
  for (Dims v : {stride, padding, dilation})
    if (v.n != 1 && v.n != sp) return -1;
  uint64_t flops = Mul(2, Size(input[0]));
  for (size_t i = 0; i < sp; ++i) {
    if (at(stride, i) == 0) return -1;
    flops = Mul(flops, ConvOut(input[2 + i], weight[2 + i], at(stride, i), at(padding, i), at(dilation, i)));
    flops = Mul(flops, Size(weight[2 + i]));
  }
  return Result(Div(Mul(Mul(flops, Size(input[1])), Size(weight[0])), static_cast<uint64_t>(groups)));
}

// A convolution's multiply-adds from the tensor the weights slide over: every element of
// `x` meets prod(weight[1:]) weights. For a convolution x is its output ([N, C_out, o...];
// weight [C_out, C_in/g, k...]); for a transposed convolution x is its input ([N, C_in, i...];
// weight [C_in, C_out/g, k...]). 2 * numel(x) * prod(weight[1:]).
inline int64_t ConvFromSlid(Dims x, Dims weight) {
  if (x.n < 3 || weight.n != x.n) return -1;
  return Result(Mul(Mul(2, Product(x)), Product(weight, 1)));
}

// aten::conv_transpose1d/2d/3d: input [N, C_in, i...], weight [C_in, C_out/groups, k...]:
// 2 * numel(input) * prod(weight[1:]) (each input element scatters into C_out/g * prod(k)
// outputs).
inline int64_t ConvTranspose(Dims input, Dims weight) { return ConvFromSlid(input, weight); }

// aten::convolution_backward(grad_output, input, weight, ..., transposed, ..., output_mask):
// the forward count for each of grad_input (output_mask[0]) and grad_weight (output_mask[1]);
// the bias gradient (a reduction) is not counted.
inline int64_t ConvBackward(Dims grad_output, Dims input, Dims weight, bool transposed,
                            bool grad_input, bool grad_weight) {
  const int64_t fwd = transposed ? ConvFromSlid(input, weight) : ConvFromSlid(grad_output, weight);
  if (fwd < 0) return -1;
  return Result(Mul(static_cast<uint64_t>(fwd), (grad_input ? 1u : 0u) + (grad_weight ? 1u : 0u)));
}

// Scaled-dot-product attention: query [..., L, E], key [..., S, E], value [..., S, Ev] (the
// leading dimensions, batch and heads, equal): Q K^T is 2*B*L*S*E, P V is 2*B*L*S*Ev, so
// forward = 2*B*L*S*(E + Ev); the softmax is not counted. Backward recomputes nothing it
// counts and does four products (dV, dP, dQ, dK): 2x forward. Causal masking is not
// discounted (the kernels' work is counted as dense, like PyTorch's flop counter).
inline int64_t Attention(Dims query, Dims key, Dims value, bool backward) {
  if (query.n < 2 || key.n != query.n || value.n != query.n) return -1;
  const uint64_t b = Div(Div(Product(query), query[query.n - 1] ? Size(query[query.n - 1]) : 1),
                         query[query.n - 2] ? Size(query[query.n - 2]) : 1);
  const uint64_t l = Size(query[query.n - 2]);
  const uint64_t s = Size(key[key.n - 2]);
  const uint64_t e = Size(query[query.n - 1]);
  const uint64_t ev = Size(value[value.n - 1]);
  const uint64_t fwd = Mul(Mul(Mul(Mul(2, b), l), s), Add(e, ev));
  return Result(backward ? Mul(2, fwd) : fwd);
}

// ---- From a trace's "Input Dims" (kairos summarize on traces without "flops" args) ----
using Shapes = std::vector<std::vector<int64_t>>;

// Parses "Input Dims" JSON text ("[[4, 8], [8, 3], []]") into one size list per input; false
// on anything else (nested deeper, non-integers). Bounded by the text's length.
inline bool ParseInputDims(std::string_view t, Shapes* out) {
  out->clear();
  size_t i = 0;
  auto ws = [&] {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t')) ++i;
  };
  ws();
  if (i >= t.size() || t[i] != '[') return false;
  ++i;
  ws();
  if (i < t.size() && t[i] == ']') return true;
  while (i < t.size()) {
    ws();
    if (i >= t.size() || t[i] != '[') return false;
    ++i;
    out->emplace_back();
    ws();
    if (i < t.size() && t[i] == ']') {
      ++i;
    } else {
      while (true) {
        ws();
        bool neg = i < t.size() && t[i] == '-';
        if (neg) ++i;
        if (i >= t.size() || t[i] < '0' || t[i] > '9') return false;
        int64_t v = 0;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
          if (v > (INT64_MAX - 9) / 10) return false;
          v = v * 10 + (t[i++] - '0');
        }
        out->back().push_back(neg ? -v : v);
        ws();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == ']') {
          ++i;
          break;
        }
        return false;
      }
    }
    ws();
    if (i < t.size() && t[i] == ',') {
      ++i;
      continue;
    }
    if (i < t.size() && t[i] == ']') return true;
    return false;
  }
  return false;
}

inline Dims DimsOf(const Shapes& s, size_t i) {
  return i < s.size() ? Dims{s[i].data(), s[i].size()} : Dims{};
}

// aten::matmul: torch.matmul's cases on shapes alone: 1-D x 1-D (dot) 2K; the matrix
// dimensions of the last two sizes (a 1-D operand counted as one row / column) times the
// broadcast batch of the leading sizes: 2 * batch * M * K * N.
inline int64_t Matmul(Dims a, Dims b) {
  if (a.n == 0 || b.n == 0) return -1;
  const uint64_t k = Size(a[a.n - 1]);
  const uint64_t m = a.n >= 2 ? Size(a[a.n - 2]) : 1;
  const uint64_t n = b.n >= 2 ? Size(b[b.n - 1]) : 1;
  uint64_t batch = 1;
  const size_t ab = a.n > 2 ? a.n - 2 : 0, bb = b.n > 2 ? b.n - 2 : 0;
  for (size_t i = 0; i < (ab > bb ? ab : bb); ++i) {  // broadcast, right-aligned
    const int64_t x = i < ab ? a[ab - 1 - i] : 1, y = i < bb ? b[bb - 1 - i] : 1;
    batch = Mul(batch, x < 0 || y < 0 ? kBad : Size(x > y ? x : y));
  }
  return Result(Mul(Mul(Mul(Mul(2, batch), m), k), n));
}

// aten::linear: input [..., in], weight [out, in]: 2 * prod(input) * out.
inline int64_t Linear(Dims input, Dims weight) {
  if (input.n == 0 || weight.n != 2) return -1;
  return Result(Mul(Mul(2, Product(input)), Size(weight[0])));
}

enum class ShapeRule : uint8_t {
  kNone,
  kGemm,
  kGemmBias,
  kBatchedGemm,
  kBatchedGemmBias,
  kElementwise,
  kConvTranspose,
  kConv,          // needs "Concrete Inputs" (FromConcrete)
  kConvBackward,  // needs "Concrete Inputs" (FromConcrete)
  kAttention,
  kAttentionBackward,
  kMatmul,
  kLinear
};

// Which formula computes an operator's FLOPs from "Input Dims" alone. Convolutions need
// stride/padding/dilation and the backward's output_mask, which "Input Dims" leaves empty:
// they are counted only from the bridge's "flops" arg.
inline ShapeRule ShapeRuleOf(std::string_view name) {
  if (name.substr(0, 6) != "aten::") return ShapeRule::kNone;
  const std::string_view op = name.substr(6);
  if (op == "mm") return ShapeRule::kGemm;
  if (op == "addmm") return ShapeRule::kGemmBias;
  if (op == "bmm") return ShapeRule::kBatchedGemm;
  if (op == "baddbmm") return ShapeRule::kBatchedGemmBias;
  if (op == "mul" || op == "add") return ShapeRule::kElementwise;
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d")
    return ShapeRule::kConvTranspose;
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return ShapeRule::kConv;
  if (op == "convolution_backward") return ShapeRule::kConvBackward;
  if (op == "matmul") return ShapeRule::kMatmul;
  if (op == "linear") return ShapeRule::kLinear;
  if (op.substr(0, 20) == "_scaled_dot_product_" || op.substr(0, 17) == "_flash_attention_" ||
      op.substr(0, 21) == "_efficient_attention_") {
    const bool bwd = op.size() > 9 && op.substr(op.size() - 9) == "_backward";
    return bwd ? ShapeRule::kAttentionBackward : ShapeRule::kAttention;
  }
  return ShapeRule::kNone;
}

// The FLOPs of `rule` on parsed "Input Dims", or -1.
inline int64_t FromShapes(ShapeRule rule, const Shapes& s) {
  switch (rule) {
    case ShapeRule::kGemm:
      return s.size() >= 2 ? Gemm(DimsOf(s, 0), DimsOf(s, 1)) : -1;
    case ShapeRule::kGemmBias:
      return s.size() >= 3 ? Gemm(DimsOf(s, 1), DimsOf(s, 2)) : -1;
    case ShapeRule::kBatchedGemm:
      return s.size() >= 2 ? BatchedGemm(DimsOf(s, 0), DimsOf(s, 1)) : -1;
    case ShapeRule::kBatchedGemmBias:
      return s.size() >= 3 ? BatchedGemm(DimsOf(s, 1), DimsOf(s, 2)) : -1;
    case ShapeRule::kElementwise:  // "[]" is a scalar or a 0-d tensor: not told apart, none
      return !s.empty() && !s[0].empty() ? Elementwise(DimsOf(s, 0)) : -1;
    case ShapeRule::kConvTranspose:
      return ConvTranspose(DimsOf(s, 0), DimsOf(s, 1));
    case ShapeRule::kAttention:
      return Attention(DimsOf(s, 0), DimsOf(s, 1), DimsOf(s, 2), false);
    case ShapeRule::kAttentionBackward:
      return Attention(DimsOf(s, 1), DimsOf(s, 2), DimsOf(s, 3), true);
    case ShapeRule::kMatmul:
      return Matmul(DimsOf(s, 0), DimsOf(s, 1));
    case ShapeRule::kLinear:
      return Linear(DimsOf(s, 0), DimsOf(s, 1));
    case ShapeRule::kConv:
    case ShapeRule::kConvBackward:
    case ShapeRule::kNone:
      return -1;
  }
  return -1;
}

// One "Concrete Inputs" entry (PyTorch 2.x traces with shapes: the non-tensor inputs as
// text): an integer list "[2, 2]", a bare integer "1", or booleans ("True", "[True, False]",
// as 1 and 0). False on anything else ("" for a tensor, a string padding "same").
inline bool ParseConcrete(std::string_view t, std::vector<int64_t>* out) {
  out->clear();
  size_t i = 0;
  const bool list = !t.empty() && t[0] == '[';
  if (list) ++i;
  while (i < t.size()) {
    while (i < t.size() && t[i] == ' ') ++i;
    if (list && i < t.size() && t[i] == ']') return i + 1 == t.size();
    if (t.substr(i, 4) == "True") {
      out->push_back(1);
      i += 4;
    } else if (t.substr(i, 5) == "False") {
      out->push_back(0);
      i += 5;
    } else {
      const bool neg = i < t.size() && t[i] == '-';
      if (neg) ++i;
      if (i >= t.size() || t[i] < '0' || t[i] > '9') return false;
      int64_t v = 0;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
        if (v > (INT64_MAX - 9) / 10) return false;
        v = v * 10 + (t[i++] - '0');
      }
      out->push_back(neg ? -v : v);
    }
    while (i < t.size() && t[i] == ' ') ++i;
    if (!list) return i == t.size();
    if (i < t.size() && t[i] == ',') ++i;
  }
  return false;
}

// Convolutions from "Input Dims" and "Concrete Inputs" (`concrete[i]` is input i's text):
// conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups) and
// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask). -1 when an entry is missing or malformed.
inline int64_t FromConcrete(ShapeRule rule, const Shapes& s,
                            const std::vector<std::string_view>& concrete) {
  std::vector<int64_t> st, pad, dil, g, tr, mask;
  auto get = [&](size_t i, std::vector<int64_t>* v) {
    return i < concrete.size() && ParseConcrete(concrete[i], v) && !v->empty();
  };
  if (rule == ShapeRule::kConv) {
    if (!get(3, &st) || !get(4, &pad) || !get(5, &dil) || !get(6, &g) || g.size() != 1) return -1;
    return Conv(DimsOf(s, 0), DimsOf(s, 1), Dims{st.data(), st.size()},
                Dims{pad.data(), pad.size()}, Dims{dil.data(), dil.size()}, g[0]);
  }
  if (rule == ShapeRule::kConvBackward) {
    if (!get(7, &tr) || tr.size() != 1 || !get(10, &mask) || mask.size() < 2) return -1;
    return ConvBackward(DimsOf(s, 0), DimsOf(s, 1), DimsOf(s, 2), tr[0] != 0, mask[0] != 0,
                        mask[1] != 0);
  }
  return -1;
}

}  // namespace kairos::flops

#endif  // KAIROS_SRC_FLOPS_H_
