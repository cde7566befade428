"""FLOPs per operator (PROFILE_WITH_FLOPS, docs/FLOPS.md) against PyTorch's own profiler.
The same workload (matmuls of every kind, elementwise mul/add, strided/padded/dilated/grouped
conv2d, conv1d/conv3d, conv_transpose2d, and a training step of a small conv net with its
backward) runs once under kairos.profile(with_flops=True) and once under
torch.autograd.profiler.profile(with_flops=True, use_kineto=False):
- for every operator PyTorch computes FLOPs for (mm, addmm, bmm, baddbmm, mul, add, conv2d),
  the multiset of (name, Input Dims, flops) is identical: every op, exact value (after
  PyTorch's own merge of a same-name only child, see pytorch_view);
- kairos' own formulas (conv1d/conv3d, conv_transpose2d, convolution_backward) give the
  hand-computed values;
- no other operator has a flops arg; without with_flops no operator has one;
- shapes (captured raw by the bridge, formatted at collection): every aten op's Input Dims
  equals the legacy profiler's input_shapes; Input type exact for every kind of input; a
  long shape is written whole, one past the bridge's bounds is left out and counted;
- `python3 -m kairos run --with-flops` attaches the bridge with FLOPs and sets the key."""
import collections
import os
import subprocess
import sys

import kt_util as k

k.need_torch()
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import torch  # noqa: E402

import kairos  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(1)
f = k.Failures()
d = k.tmpdir()
PYTORCH_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mul", "aten::add",
               "aten::conv2d"}
OWN_OPS = {"aten::conv1d", "aten::conv3d", "aten::conv_transpose2d", "aten::convolution_backward"}


def workload():
    x, w, b = torch.randn(4, 8), torch.randn(8, 3), torch.randn(3)
    torch.mm(x, w)
    torch.addmm(b, x, w)
    torch.nn.functional.linear(x, w.t(), b)                  # addmm inside
    torch.bmm(torch.randn(5, 4, 8), torch.randn(5, 8, 3))
    torch.baddbmm(torch.randn(5, 4, 3), torch.randn(5, 4, 8), torch.randn(5, 8, 3))
    torch.matmul(torch.randn(5, 4, 8), torch.randn(8, 3))    # mm inside
    torch.mul(x, 2)
    torch.mul(x, x)
    _ = x + x
    torch.add(x, 1.5)
    img = torch.randn(2, 4, 9, 9)
    torch.nn.functional.conv2d(img, torch.randn(6, 2, 3, 3), stride=2, padding=1, groups=2)
    torch.nn.functional.conv2d(img, torch.randn(8, 4, 3, 2), stride=(1, 2), padding=(2, 0),
                               dilation=(2, 1))
    torch.nn.functional.conv1d(torch.randn(3, 4, 10), torch.randn(5, 4, 3), stride=2)
    torch.nn.functional.conv3d(torch.randn(1, 2, 5, 6, 7), torch.randn(4, 2, 3, 3, 3), padding=1)
    torch.nn.functional.conv_transpose2d(torch.randn(2, 4, 5, 5), torch.randn(4, 3, 3, 3), stride=2)
    # A training step: conv2d forward, ConvolutionBackward -> convolution_backward, addmm/mm.
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    lin = torch.nn.Linear(4 * 6 * 6, 5)
    opt = torch.optim.SGD(list(conv.parameters()) + list(lin.parameters()), lr=0.1)
    inp = torch.randn(2, 3, 6, 6, requires_grad=True)
    loss = lin(torch.relu(conv(inp)).flatten(1)).pow(2).mean()
    loss.backward()
    opt.step()


workload()  # warm-up outside both profilers

trace_path = os.path.join(d, "flops.json")
with kairos.profile(path=trace_path, record_shapes=True, with_flops=True,
                    config="KAIROS_SUMMARY=off") as p:
    workload()
t = k.load(p.traces[0])
with torch.autograd.profiler.profile(with_flops=True, use_kineto=False, record_shapes=True) as lp:
    workload()


def key(name, dims, flops):
    return (name, repr(dims), flops)


def pytorch_view(trace):
    """The cpu_ops as PyTorch's function_events list them: its EventList drops an op whose
    parent has the same name and that one child only (profiler_util's _remove_dup_nodes, e.g.
    aten::mul(Tensor, Scalar) redispatching to aten::mul(Tensor, Tensor)). The trace keeps
    both, as Kineto's does; the summary counts the outer one only (docs/FLOPS.md). PyTorch
    finds the nesting from its microsecond timestamps, so it does not always merge: the
    comparison below accepts, per key, any count between this view's and the raw trace's."""
    evs = sorted(k.events(trace, cat="cpu_op"), key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    parent, children, stack = {}, collections.Counter(), []
    for i, e in enumerate(evs):
        while stack and (evs[stack[-1]]["tid"] != e["tid"] or
                         e["ts"] >= evs[stack[-1]]["ts"] + evs[stack[-1]]["dur"]):
            stack.pop()
        if stack:
            parent[i] = stack[-1]
            children[stack[-1]] += 1
        stack.append(i)
    return [e for i, e in enumerate(evs)
            if not (i in parent and evs[parent[i]]["name"] == e["name"] and children[parent[i]] == 1)]


ours = collections.Counter()      # PyTorch's merge applied
ours_raw = collections.Counter()  # every cpu_op of the trace
own = collections.Counter()
others_with_flops = []
for e in pytorch_view(t):
    a = e["args"]
    if e["name"] in PYTORCH_OPS:
        ours[key(e["name"], a.get("Input Dims"), a.get("flops", 0))] += 1
    elif e["name"] in OWN_OPS:
        own[key(e["name"], a.get("Input Dims"), a.get("flops"))] += 1
for e in k.events(t, cat="cpu_op"):
    if e["name"] in PYTORCH_OPS:
        ours_raw[key(e["name"], e["args"].get("Input Dims"), e["args"].get("flops", 0))] += 1
others_with_flops = [(e["name"], e["args"]["flops"]) for e in k.events(t, cat="cpu_op")
                     if "flops" in e["args"] and e["name"] not in PYTORCH_OPS | OWN_OPS]
theirs = collections.Counter(key(e.name, e.input_shapes, e.flops) for e in lp.function_events
                             if e.name in PYTORCH_OPS)
f.check(sum(theirs.values()) >= 18 and sum(1 for kk in theirs if kk[2] > 0) >= 10,
        "the legacy profiler gave FLOPs for %d ops" % sum(theirs.values()))
f.eq(sorted(theirs), sorted(ours_raw),
     "every op PyTorch counts: same (name, Input Dims, flops) keys as the legacy profiler")
f.eq([(kk, theirs[kk]) for kk in sorted(theirs) if not ours[kk] <= theirs[kk] <= ours_raw[kk]], [],
     "per key, the legacy profiler's count is between the merged and the raw count of ours "
     "(%d merged, %d raw, %d legacy)" % (sum(ours.values()), sum(ours_raw.values()), sum(theirs.values())))
f.check(sum(ours_raw.values()) - sum(ours.values()) <= 1,
        "at most the one aten::mul(Tensor, Scalar) redispatch of PowBackward0 is merged")
f.eq(others_with_flops, [], "no other operator has a flops arg")

# Hand-computed (docs/FLOPS.md): conv1d [3,4,10]*[5,4,3] stride 2: out 4 -> 2*3*4*3*4*5 = 1440.
# conv3d [1,2,5,6,7]*[4,2,3,3,3] pad 1: out 5x6x7 -> 2*1*210*27*2*4 = 90720.
# conv_transpose2d [2,4,5,5]*[4,3,3,3]: 2*200*27 = 10800.
# convolution_backward of the training step's conv (grad_output [2,4,6,6], weight [4,3,3,3],
# grad_input and grad_weight): 2 * (2*288*27) = 31104.
expect_own = collections.Counter({
    key("aten::conv1d", [[3, 4, 10], [5, 4, 3], [], [], [], [], []], 1440): 1,
    key("aten::conv3d", [[1, 2, 5, 6, 7], [4, 2, 3, 3, 3], [], [], [], [], []], 90720): 1,
    key("aten::conv_transpose2d", [[2, 4, 5, 5], [4, 3, 3, 3], [], [], [], [], [], []], 10800): 1,
    key("aten::convolution_backward",
        [[2, 4, 6, 6], [2, 3, 6, 6], [4, 3, 3, 3], [], [], [], [], [], [], [], []], 31104): 1,
})
f.eq(sorted(own.items()), sorted(expect_own.items()), "kairos' own formulas, hand-computed")

# Without with_flops: no flops arg anywhere (the bridge still computes them: it was attached
# with FLOPs; the trace's config decides at collection).
with kairos.profile(path=os.path.join(d, "noflops.json"), record_shapes=True,
                    config="KAIROS_SUMMARY=off") as p2:
    workload()
t2 = k.load(p2.traces[0])
n_ops = len(k.events(t2, cat="cpu_op", name="aten::mm"))
f.check(n_ops > 0 and not [e for e in k.events(t2, cat="cpu_op") if "flops" in e["args"]],
        "PROFILE_WITH_FLOPS off: no flops args (%d aten::mm recorded)" % n_ops)

# Shapes are captured raw and formatted at collection, so a long shape is written whole (it
# was cut off past a 2 KiB text buffer before): two 61-dim tensors of 0 elements with
# 18-digit sizes. Past the room kairos gives the bridge's capture (KAIROS_OP_MAX_INPUT_WORDS,
# 1,536 words; here two 800-dim tensors and a scalar: 1,606 words) the op is recorded without
# shapes and counted in kairos_stats.cpu_args_dropped; its FLOPs (0) still come.
big = [0] + [10 ** 17] * 60
huge = torch.empty(big)
over = torch.empty([0] + [2] * 799)
fit = torch.empty([1] * 765)
past = torch.empty([1] * 766)
with kairos.profile(path=os.path.join(d, "huge.json"), record_shapes=True, with_flops=True,
                    config="KAIROS_SUMMARY=off") as p3:
    torch.add(huge, huge)
    torch.add(over, over)
    torch.add(torch.ones(2), torch.ones(2))
    # The bound exactly: two rank-765 tensors and the Scalar alpha take 2 x (2 + 765) + 2 =
    # 1,536 words, all of the room; one dimension more does not fit.
    torch.add(fit, fit)
    torch.add(past, past)
t3 = k.load(p3.traces[0])
adds = [e for e in k.events(t3, cat="cpu_op", name="aten::add")]
f.eq([(e["args"].get("Input Dims"), e["args"].get("Input type"), e["args"].get("flops"))
      for e in adds],
     [([big, big, []], ["float", "float", "Scalar"], 0), (None, None, 0),
      ([[2], [2], []], ["float", "float", "Scalar"], 2),
      ([[1] * 765, [1] * 765, []], ["float", "float", "Scalar"], 1),
      (None, None, 1)],
     "long shape written whole; over the bounds: no Input Dims; a normal op keeps them; an op "
     "that fills the room exactly keeps them, one word more does not")
f.eq(t3.get("kairos_stats", {}).get("cpu_args_dropped"), 2, "the ops over the bounds are counted")

# Shapes of every operator, captured raw and formatted at collection, against PyTorch's
# legacy profiler watching the same operators at the same time (both are RecordFunction
# callbacks): the sorted (name, Input Dims) of every aten op are identical; Input type (the
# legacy profiler has none) is checked exactly for ops with every kind of input.
def shape_work():
    a = torch.randn(4, 3, dtype=torch.float64)
    torch.mm(a, torch.ones(3, 5, dtype=torch.float64))
    torch.cat([a, a])
    torch.zeros([]).add_(2)
    x = torch.arange(6, dtype=torch.int64).view(2, 3)
    x.sum(dim=0)
    torch.where(x > 2, x, torch.zeros_like(x))
    torch.ones(2, dtype=torch.half) * 2
    torch.nn.functional.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), None, 1, 1)
    torch.tensor([True, False]).logical_not()
    torch.ones(3, dtype=torch.complex64).abs()
    # A nested tensor has no sizes: an empty shape and its dtype, as the legacy profiler
    # writes (its sizes() throws, which once dropped the op's shapes altogether).
    nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    nt + nt


with kairos.profile(path=os.path.join(d, "shapes.json"), record_shapes=True,
                    config="KAIROS_SUMMARY=off") as p4:
    with torch.autograd.profiler.profile(use_kineto=False, record_shapes=True) as legacy4:
        shape_work()
t4 = k.load(p4.traces[0])
ops4 = [e for e in k.events(t4, cat="cpu_op", prefix="aten::")]
# Sorted by their text: an op written without shapes has None, which lists do not sort with.
theirs4 = sorted(((e.name, e.input_shapes) for e in legacy4.function_events
                  if e.name.startswith("aten::")), key=repr)
ours4 = sorted(((e["name"], e["args"].get("Input Dims")) for e in ops4), key=repr)
f.check(len(theirs4) >= 40, "legacy profiler saw %d aten ops" % len(theirs4))
f.eq(ours4, theirs4, "every aten op's Input Dims equals the legacy profiler's input_shapes")
types4 = {(e["name"], str(e["args"].get("Input Dims"))): e["args"].get("Input type") for e in ops4}
for key, want in [(("aten::mm", "[[4, 3], [3, 5]]"), ["double", "double"]),
                  (("aten::cat", "[[], []]"), ["TensorList", "Scalar"]),
                  (("aten::add_", "[[], [], []]"), ["float", "long int", "Scalar"]),
                  (("aten::where", "[[2, 3], [2, 3], [2, 3]]"), ["bool", "long int", "long int"]),
                  (("aten::mul", "[[2], []]"), ["c10::Half", "long int"]),
                  (("aten::conv2d", "[[1, 2, 5, 5], [3, 2, 3, 3], [], [], [], [], []]"),
                   ["float", "float", "", "", "", "", "Scalar"]),
                  (("aten::abs", "[[3]]"), ["c10::complex<float>"]),
                  (("aten::add", "[[], [], []]"), ["float", "float", "Scalar"])]:
    f.eq(types4.get(key), want, "Input type of %s %s" % key)
f.eq(t4.get("kairos_stats", {}).get("cpu_args_dropped", 0), 0, "no args dropped")

# python3 -m kairos run --with-flops: the bridge computes, the key is set, shapes stay off.
script = os.path.join(d, "mm.py")
with open(script, "w") as fh:
    fh.write("import torch, kairos\nkairos.start()\ntorch.mm(torch.ones(6, 5), torch.ones(5, 7))\n"
             "kairos.flush()\n")
r = k.run_kairos(script, config="KAIROS_SUMMARY=off;ACTIVITIES_LOG_FILE=" + os.path.join(d, "run.json"),
                 with_flops=True)
written = k.trace_of(r)
mm = [e for e in k.events(k.load(written), cat="cpu_op", name="aten::mm")] if written else []
f.eq([(e["args"].get("flops"), "Input Dims" in e["args"]) for e in mm], [(420, False)],
     "kairos run --with-flops: aten::mm [6,5]x[5,7] has flops 420 and no Input Dims")
# --with-flops with --config-file: the key is added to the file's config.
cfg = os.path.join(d, "cfg.txt")
with open(cfg, "w") as fh:
    fh.write("KAIROS_SUMMARY=off\nACTIVITIES_LOG_FILE=%s\n" % os.path.join(d, "runfile.json"))
r = subprocess.run([sys.executable, "-m", "kairos", "run", "--with-flops", "--config-file", cfg, script],
                   env=k.env(), capture_output=True, text=True, timeout=300)
written = k.trace_of(r)
mm = [e for e in k.events(k.load(written), cat="cpu_op", name="aten::mm")] if written else []
f.eq([e["args"].get("flops") for e in mm], [420], "kairos run --with-flops --config-file")
f.done()
