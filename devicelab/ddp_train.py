"""Train a small classifier with DistributedDataParallel: one process per GPU, or CPU processes with gloo.

Launch it with torchrun (one process per rank; torchrun sets RANK, LOCAL_RANK and WORLD_SIZE):

    torchrun --standalone --nproc_per_node=2 ddp_train.py --epochs 4

On a machine with CUDA GPUs each rank uses the GPU of its local rank and the nccl backend; without
one, each rank runs on the CPU with the gloo backend. Every rank prints one line per epoch:
`rank R | device D | epoch E | loss L | accuracy A | samples N`. `--answers FILE` takes the
functions `rank_device(local_rank)` and `wrap_model(model, device)` from FILE instead of the
course's own; `--fail-rank R` makes rank R fail on purpose (to see how a job ends when one rank fails).
This file imports torch only, so that it runs wherever torch does.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rank_device(local_rank: int) -> torch.device:
    """The device of this rank: GPU number `local_rank` (made the current one), or the CPU without CUDA."""
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)  # without it, every rank's "cuda" would be cuda:0
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def wrap_model(model: nn.Module, device: torch.device) -> DistributedDataParallel:
    """Move the model to this rank's device, then wrap it; device_ids only for a module on one GPU."""
    model = model.to(device)
    if device.type == "cuda":
        return DistributedDataParallel(model, device_ids=[device.index])
    return DistributedDataParallel(model)  # a CPU module: no device_ids


def say(line: str) -> None:
    """Print one whole line in a single write, so that the lines of two ranks never interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_data(n: int = 512, features: int = 8, seed: int = 0) -> TensorDataset:
    """Synthetic, learnable data: the class is whether a fixed linear score of the features is positive."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, generator=g)
    return TensorDataset(x, (x @ w > 0).long())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--answers", default=None, help="a .py file defining rank_device and wrap_model")
    parser.add_argument("--fail-rank", type=int, default=None, help="make this rank fail on purpose")
    args = parser.parse_args()

    place, wrap = rank_device, wrap_model
    if args.answers:
        spec = importlib.util.spec_from_file_location("ddp_answers", args.answers)
        answers = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(answers)
        place, wrap = answers.rank_device, answers.wrap_model

    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    device = place(local_rank)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    world = dist.get_world_size()
    if args.fail_rank == rank:
        raise RuntimeError(f"rank {rank} fails on purpose (--fail-rank {rank})")

    dataset = make_data()
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    torch.manual_seed(0)  # DDP also copies rank 0's weights to every rank when it wraps the model
    model = wrap(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2)), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        total, right, seen = 0.0, 0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            scores = model(x)
            loss = criterion(scores, y)
            loss.backward()  # DDP averages the gradients of all ranks here
            optimizer.step()
            total += loss.item() * len(y)
            right += (scores.argmax(1) == y).sum().item()
            seen += len(y)
        say(f"rank {rank} | device {device} | epoch {epoch} | loss {total / seen:.4f} | "
            f"accuracy {right / seen:.3f} | samples {seen}")

    # The ranks saw different samples, yet their weights are the same: DDP kept them in step.
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(gathered[0], other) for other in gathered)
    say(f"rank {rank} | device {device} | same_weights_on_every_rank {same}")
    # Leave together: a rank that closed its connections while another still read its last message would make
    # gloo abort that one. The count is kept by torchrun's store, outside the connections being closed.
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False)
    store.add("devicelab/finished", 1)
    while store.add("devicelab/finished", 0) < world:
        time.sleep(0.01)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
