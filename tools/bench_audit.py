"""Time devicelab.audit (and locate's overhead) on a ~110-million-parameter model with Adam state, on the CPU.

The model is a GPT-2-small-sized stack of real nn.Embedding / nn.Linear / nn.LayerNorm layers with real
CPU tensors (about 440 MB of weights, 1.8 GB with gradients and Adam's two moments), so the figures
include everything audit walks on a real model: every parameter, buffer, plain tensor attribute and
optimizer state tensor. audit reads devices, shapes and dtypes only, so its time depends on the number of
tensors, not on their size.

    .venv/bin/python tools/bench_audit.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

import devicelab

WIDTH, HEADS, LAYERS, VOCAB, CONTEXT = 768, 12, 12, 32_000, 1024


class Block(nn.Module):
    """One transformer block: attention (four projections) and a 4x MLP, each behind a LayerNorm."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.q, self.k, self.v, self.out = (nn.Linear(WIDTH, WIDTH) for _ in range(4))
        self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)
        # a plain tensor attribute, as real models keep masks: audit walks these too
        self.causal = torch.ones(CONTEXT, CONTEXT, dtype=torch.bool).tril()  # noqa: DL502 (on purpose)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        h = self.norm1(x)
        q, k, v = (p(h).view(batch, length, HEADS, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        mask = self.causal[:length, :length]
        h = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out(h.transpose(1, 2).reshape(batch, length, WIDTH))
        return x + self.down(torch.relu(self.up(self.norm2(x))))


class LanguageModel(nn.Module):
    """Embeddings, LAYERS blocks, a final LayerNorm and a head tied to the token embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Embedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(WIDTH)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.tokens.weight.T


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """(best, median) seconds over `repeat` runs, and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def main() -> None:
    """Build the model and its Adam state, then print how long audit and locate take."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat
    torch.manual_seed(0)

    start = time.perf_counter()
    model = LanguageModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    optimizer.step()  # creates Adam's state: step, exp_avg, exp_avg_sq for every parameter
    built = time.perf_counter() - start
    params = sum(param.numel() for param in model.parameters())
    state = sum(len(s) for s in optimizer.state.values())
    batch = {"ids": torch.randint(0, VOCAB, (2, 128)), "labels": torch.randint(0, VOCAB, (2, 128))}
    criterion = nn.CrossEntropyLoss(weight=torch.ones(VOCAB))

    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    print(
        f"model: {params / 1e6:.1f} M parameters in {len(list(model.parameters()))} tensors, "
        f"{LAYERS} blocks with a plain mask attribute each; Adam state: {state} tensors "
        f"(built in {built:.1f} s)"
    )

    best, median, report = timed(lambda: devicelab.audit(model), repeat)
    print(f"audit(model): {len(report.entries)} tensors, best {best * 1e3:.2f} ms, median {median * 1e3:.2f} ms")

    def full() -> devicelab.debug.AuditReport:
        return devicelab.audit(model, batch=batch, optimizer=optimizer, criterion=criterion)

    best, median, report = timed(full, repeat)
    print(
        f"audit(model, batch, optimizer, criterion): {len(report.entries)} tensors, "
        f"best {best * 1e3:.2f} ms, median {median * 1e3:.2f} ms; verdict: {report.verdict}"
    )
    best, median, text = timed(lambda: str(report), repeat)
    print(f"str(report): {len(text.splitlines())} lines, best {best * 1e3:.2f} ms")

    # the same model with one misplaced tensor of each kind: the audit finds all of them
    model.blocks[7].causal = model.blocks[7].causal.to("meta")
    model.blocks[3].norm2.weight = nn.Parameter(model.blocks[3].norm2.weight.detach().to("meta"))
    optimizer.state[model.blocks[11].up.weight]["exp_avg"] = torch.zeros(4 * WIDTH, WIDTH, device="meta")
    best, median, report = timed(full, repeat)
    print(f"with 3 tensors on meta: best {best * 1e3:.2f} ms; verdict: {report.verdict}")
    model.blocks[7].causal = torch.ones(CONTEXT, CONTEXT, dtype=torch.bool).tril()
    model.blocks[3].norm2.weight = nn.Parameter(torch.ones(WIDTH))

    # locate's hooks and watch cost per module call and per op, not per element; alternate the two
    # runs so that a busy machine slows both alike
    ids = batch["ids"][:, :32]
    plain, located_times = [], []
    with torch.no_grad():
        for _ in range(3):
            plain.append(timed(lambda: model(ids), 1)[0])
            best, _, located = timed(lambda: devicelab.locate(model, ids), 1)
            located_times.append(best)
    print(
        f"one forward pass (2 x 32 tokens): plain {min(plain) * 1e3:.0f} ms, "
        f"under locate {min(located_times) * 1e3:.0f} ms (best of 3); locate says: {located}"
    )


if __name__ == "__main__":
    main()
