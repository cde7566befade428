"""A training loop that runs until the file argv[1] exists (at most argv[2] seconds), for the
daemon test: an unmodified PyTorch script a `kairos trace` request attaches to."""
import os
import sys
import time

import torch
from torch import nn

stop, limit = sys.argv[1], float(sys.argv[2])
torch.set_num_threads(1)
model = nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 16)
print("ready %d" % os.getpid(), flush=True)
t0 = time.time()
while not os.path.exists(stop) and time.time() - t0 < limit:
    model(x).sum().backward()
    opt.step()
    time.sleep(0.005)
