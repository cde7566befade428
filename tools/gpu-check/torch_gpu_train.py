"""File: tools/gpu-check/torch_gpu_train.py — the real-GPU kit's PyTorch workload.

A small MLP trained with Adam on the GPU when torch sees one (else the CPU), unmodified by
kairos: run under `python3 -m kairos run`, whose torch bridge records the ops and counts
iterations from the optimizer's step hooks (torch 2.x). Prints the device and the step count.
Usage: torch_gpu_train.py [--steps N]
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    a = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)
    for _ in range(a.steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    print("torch_gpu_train: %d steps on %s, loss %.4f" % (a.steps, dev, loss.item()))


if __name__ == "__main__":
    main()
