"""Time `devicelab lint` on the course's whole tree (budget: 10 s), configuration ignored so nothing is skipped,
and on generated training scripts of a given size (budget: 1 s per MB, linear in the size).

    .venv/bin/python tools/bench_lint.py [--repeat 3]
    .venv/bin/python tools/bench_lint.py --mb 1 5 [--profile]   # one generated file of each size

Prints the number of files and findings (the labs' planted mistakes), the import time of the package (torch
included: the helper package imports it), the median time to lint everything once it is imported, and the
whole command's time. Each figure is wall-clock time, with the CPU time beside it: on a busy machine the wall
clock grows, the CPU time does not. With --mb, each size's time and its seconds per MB (--profile: the functions
that take the most time, from cProfile).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the linter of this checkout, whichever one the environment installed

# Pieces of real training scripts (models, loops, checkpoints, data, mixed precision), each written with the
# names of its own copy ({i}), so that a generated file grows the way a long project does: more classes, more
# functions, more module-level names; a few of them make the mistakes the linter looks for.
SNIPPETS = (
    """
class Block{i}(nn.Module):
    def __init__(self, dim: int = {d}, hidden: int = {h}) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc2(F.gelu(self.fc1(self.norm(x))))
        noise = torch.randn(x.shape, device=x.device) * 0.01
        if torch.rand(1).item() < 0.5:
            h = h + noise
        return x + h * self.scale
""",
    """
class Encoder{i}(nn.Module):
    def __init__(self, vocab: int = {h}, dim: int = {d}, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, num_layers=layers, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.layers = layers

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        batch = tokens.size(0)
        h0 = torch.zeros(self.layers, batch, self.embed.embedding_dim)
        out, _ = self.rnn(self.embed(tokens), h0)
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.head(out + positions[None, :, None])
""",
    """
def make_loader_{i}(batch_size: int = {b}) -> DataLoader:
    features = torch.randn({h}, {d})
    labels = torch.randint(0, 10, ({h},))
    dataset = TensorDataset(features, labels)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=True)


def train_epoch_{i}(model, loader, optimizer, device) -> float:
    model.train()
    total = 0.0
    for step, (inputs, targets) in enumerate(loader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
        if step % 100 == 0:
            print(f"step {{step}}: {{loss.item():.4f}}")
    return total / max(len(loader), 1)
""",
    """
device_{i} = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model_{i} = Block{j}().to(device_{i})
optimizer_{i} = torch.optim.AdamW(model_{i}.parameters(), lr={lr})
scheduler_{i} = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer_{i}, T_max={b})
loader_{i} = make_loader_{j}()
for epoch_{i} in range(3):
    for batch_{i}, labels_{i} in loader_{i}:
        batch_{i} = batch_{i}.to(device_{i})
        labels_{i} = labels_{i}.to(device_{i})
        loss_{i} = F.mse_loss(model_{i}(batch_{i}).mean(-1), labels_{i}.float())
        optimizer_{i}.zero_grad()
        loss_{i}.backward()
        optimizer_{i}.step()
    scheduler_{i}.step()
""",
    """
def save_checkpoint_{i}(model, optimizer, epoch: int, path: str = "ckpt_{i}.pt") -> None:
    torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}}, path)


def resume_{i}(model, optimizer, path: str = "ckpt_{i}.pt"):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]


weights_{i} = torch.load("pretrained_{i}.pt")
""",
    """
@torch.no_grad()
def evaluate_{i}(model, loader, device) -> dict:
    model.eval()
    correct, seen, outputs = 0, 0, []
    for inputs, targets in loader:
        logits = model(inputs.to(device))
        predictions = logits.argmax(dim=-1).cpu()
        correct += (predictions == targets).sum().item()
        seen += targets.numel()
        outputs.append(logits.softmax(-1).cpu().numpy())
    return {{"accuracy": correct / max(seen, 1), "outputs": outputs}}


scaler_{i} = torch.amp.GradScaler("cuda")
net_{i} = Encoder{j}()
wrapped_{i} = nn.DataParallel(net_{i}.to(device_{j}))
""",
)


def training_code(size: int) -> str:
    """About `size` bytes of Python written like real training scripts (distinct names in every copy)."""
    header = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "from torch.utils.data import DataLoader, TensorDataset\n")
    parts, length, i = [header], len(header), 0
    while length < size:
        for snippet in SNIPPETS:
            text = snippet.format(i=i, j=i, d=32 + i % 7 * 16, h=64 + i % 5 * 32, b=16 + i % 3 * 16,
                                  lr=f"{1e-3 * (1 + i % 4):.4f}")
            parts.append(text)
            length += len(text)
        i += 1
    return "".join(parts)


def main() -> int:
    """Lint the tree `--repeat` times in this process, once more from the command line, and print the times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mb", type=float, nargs="+", help="lint one generated training script of each size (MB)")
    parser.add_argument("--profile", action="store_true", help="with --mb: print cProfile's top functions")
    args = parser.parse_args()
    if args.mb:
        return bench_sizes(args.mb, args.profile)
    start, cpu = time.perf_counter(), time.process_time()
    from devicelab.lint import Config
    from devicelab.lint.core import iter_files, lint_file

    imported, imported_cpu = time.perf_counter() - start, time.process_time() - cpu
    files = list(iter_files([ROOT], Config()))
    times, cpus, problems = [], [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        problems = [p for path in files for p in lint_file(path, Config())]
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "devicelab.lint", "--config", "/dev/null", "."], cwd=ROOT,
                   capture_output=True, check=False)
    command = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    command_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"{len(files)} files ({sum(f.suffix == '.ipynb' for f in files)} notebooks), {len(problems)} findings")
    print(f"import devicelab.lint (torch included): {imported:.2f} s (CPU {imported_cpu:.2f} s)")
    print(f"lint the tree: median {statistics.median(times):.2f} s (CPU {statistics.median(cpus):.2f} s) "
          f"of {args.repeat}")
    print(f"the whole command, python -m devicelab.lint .: {command:.2f} s (CPU {command_cpu:.2f} s)")
    return 0


def time_generated(megabytes: float) -> tuple[float, float, int]:
    """Lint one generated file of `megabytes` MB: (wall seconds, CPU seconds, findings)."""
    from devicelab.lint import lint_text

    code = training_code(int(megabytes * 1_000_000))
    start, cpu = time.perf_counter(), time.process_time()
    problems = lint_text(code, "generated.py")
    return time.perf_counter() - start, time.process_time() - cpu, len(problems)


def bench_sizes(sizes: list[float], profile: bool) -> int:
    """Print the time of each generated size, and seconds per MB (1 s per MB is the budget)."""
    for megabytes in sizes:
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.runcall(time_generated, megabytes)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        wall, cpu, found = time_generated(megabytes)
        print(f"{megabytes:g} MB: {wall:.2f} s (CPU {cpu:.2f} s), {cpu / megabytes:.2f} s/MB, {found} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
