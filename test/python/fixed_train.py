"""The fixed script of the torch tests: a tiny deterministic model trained N steps; at one
step it also runs PyTorch's legacy profiler (use_kineto=False) around exactly that step and
writes its per-op counts, so the test compares them with the kairos trace of the same step.
Usage: fixed_train.py STEPS LEGACY_STEP OUT_JSON [raise_at_step]"""
import collections
import json
import sys

import torch
from torch import nn

steps, legacy_step, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
raise_at = int(sys.argv[4]) if len(sys.argv) > 4 else -1
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(8, 32)
y = torch.randint(0, 4, (8,))
a = torch.ones(64, 32)
b = torch.ones(32, 16)


def train_step(i):
    with torch.autograd.profiler.record_function("known_matmul"):
        torch.mm(a, b)
    with torch.autograd.profiler.record_function("forward"):
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    if i == raise_at:
        # No pause for kairos' session thread: the flush at exit closes a window whose start
        # boundary has passed, also one the session thread has not opened yet (Scheduler:
        # a stop past the start boundary closes, it does not cancel).
        with torch.autograd.profiler.record_function("about_to_fail"):
            raise RuntimeError("boom at step %d" % i)
    opt.step()  # ends with PyTorch's "Optimizer.step#SGD.step" scope: the iteration boundary


legacy = None
for i in range(steps):
    if i == legacy_step:
        with torch.autograd.profiler.profile(use_kineto=False, record_shapes=True) as prof:
            train_step(i)
        legacy = prof
    else:
        train_step(i)

if legacy is not None:
    counts = collections.Counter(e.name for e in legacy.function_events if e.name.startswith("aten::"))
    shapes = [e.input_shapes for e in legacy.function_events if e.name == "aten::mm"]
    with open(out, "w") as f:
        json.dump({"counts": counts, "mm_shapes": shapes}, f)
print("fixed_train done")
