"""A CPU training loop fed by a torch DataLoader (torch_phases_test.py). Usage:
loader_train.py slow|fast STEPS. slow: each batch takes 100 ms to load (the dataset sleeps:
that is the workload, a starved loop) and the model is small; fast: batches are ready-made
and the model is large enough that forward and backward dominate."""
import sys
import time

import torch

mode, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(1)
width = 64 if mode == "slow" else 384
batches = [(torch.randn(128, width), torch.randn(128, width)) for _ in range(4)]


class Batches(torch.utils.data.Dataset):
    def __len__(self):
        return steps

    def __getitem__(self, i):
        if mode == "slow":
            time.sleep(0.1)
        return batches[i % len(batches)]


model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in torch.utils.data.DataLoader(Batches(), batch_size=None):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
