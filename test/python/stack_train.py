"""The torch script of torch_stacks_test: a tiny model trained N steps; `step` calls the
model (aten::linear under nn.Linear.forward) and out.sum() (aten::sum directly under step),
loss.item(), and keeps a 4,000-byte tensor a step (a leak); the lines marked "LINE:" are the
ones torch_stacks_test expects in the trace's "Python line" / "Python caller line" args.
Each step also sleeps 20 ms (outside Python: the GIL is free), as a real step takes its time,
so kairos' runner thread, woken at the warm-up boundary, installs the tracer before the
window's first step even on a loaded machine. Usage: stack_train.py STEPS"""
import sys
import time

import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)


def step():
    out = model(x)  # LINE:model
    loss = out.sum()  # LINE:sum
    loss.item()  # LINE:item
    kept.append(torch.zeros(1000))  # LINE:leak
    opt.zero_grad()
    loss.backward()  # LINE:backward
    opt.step()
    time.sleep(0.02)


kept = []  # one tensor a step, never freed: torch_stacks_test's known leak


for _ in range(int(sys.argv[1])):
    step()
print("stack_train done")
