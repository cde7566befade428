"""A small CPU MLP trained for N steps on synthetic data: the PyTorch example for kairos.

Unmodified training code: run it under kairos with no code change,

    PYTHONPATH=build/python python3 -m kairos run \
        --config "PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=3;PROFILE_REPORT_INPUT_SHAPES=true" \
        examples/pytorch/train_mlp.py --steps 12

and kairos records operators (cpu_op), the optimizer step scope (user_annotation) and one
ProfilerStep#N range per iteration in the window. Iterations are counted from PyTorch's own
"Optimizer.step#SGD.step" scope (torch 1.x) or optimizer step hooks (torch 2.x).
Usage: train_mlp.py [--steps N] [--batch B] [--seed S]
"""
import argparse

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(a.batch * 4, 64)
    y = torch.randint(0, 10, (a.batch * 4,))
    for step in range(a.steps):
        i = (step % 4) * a.batch
        with torch.autograd.profiler.record_function("forward"):
            loss = loss_fn(model(x[i:i + a.batch]), y[i:i + a.batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("train_mlp: %d steps, final loss %.4f" % (a.steps, loss.item()))


if __name__ == "__main__":
    main()
