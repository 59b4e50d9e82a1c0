"""Evaluation speed: Transformer-XL with cached memory vs a vanilla Transformer that recomputes its whole
context for every predicted token (the paper's baseline, Table 9), same weights, same attention length.

    .venv/bin/python benchmarks/txl_eval_speed.py               # CPU, one thread, attention length 1600
    .venv/bin/python benchmarks/txl_eval_speed.py --device cuda

The model is `TransformerXLConfig()`'s defaults with dropout 0, clamp_len = -1 (no clamping) and
same_length = True, so that every query of both sides attends to exactly L keys; mem_len = L.

(a) Transformer-XL: the document fed in segments of --segment tokens (64), every token scored; timed
    over --segments whole segments once the memory is full.
(b) vanilla: for each predicted token, one forward pass over the L tokens before it (no memory, the
    same relative-position model), then the NLL of that one token. Timed over every position of the
    first --vanilla-segments segments that (a) timed (whole positions, not a sample of them).
Both sides report seconds per predicted token, and the ratio divides them.

Token ids follow a Zipf law over the vocabulary (as words in text do), which matters only for the
adaptive softmax's cost of tail clusters.
"""

from __future__ import annotations

import argparse
import time

import torch

from txl import TransformerXLConfig, TransformerXLLM


def zipf_ids(n: int, vocab: int, gen: torch.Generator) -> torch.Tensor:
    weights = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64) ** 1.1
    return torch.multinomial(weights, n, replacement=True, generator=gen)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def clock(device: torch.device) -> float:
    # CPU: the process's CPU time (one thread), so other jobs on a shared machine do not distort the
    # figures; CUDA: wall time, taken after synchronising
    return time.process_time() if device.type == "cpu" else time.perf_counter()


@torch.no_grad()
def txl_per_token(
    model: TransformerXLLM, doc: torch.Tensor, seg: int, n_seg: int, device: torch.device
) -> float:
    """Seconds per predicted token with cached memory (memory filled before timing starts)."""
    mem_len = model.cfg.mem_len
    memory = None
    pos = 0
    while pos < mem_len:  # fill the memory
        memory = model(doc[:, pos : pos + seg], memory).memory
        pos += seg
    sync(device)
    start = clock(device)
    for _ in range(n_seg):
        x, y = doc[:, pos : pos + seg], doc[:, pos + 1 : pos + seg + 1]
        out = model(x, memory, targets=y)
        memory = out.memory
        pos += seg
    sync(device)
    return (clock(device) - start) / (n_seg * seg)


@torch.no_grad()
def vanilla_per_token(
    model: TransformerXLLM, doc: torch.Tensor, first: int, n_tokens: int, device: torch.device
) -> float:
    """Seconds per predicted token when every prediction recomputes its whole window of mem_len tokens:
    each of the `n_tokens` positions from `first` on."""
    length = model.cfg.mem_len
    model(doc[:, first - length : first])  # warm-up
    sync(device)
    start = clock(device)
    for p in range(first, first + n_tokens):
        hidden = model(doc[:, p - length : p]).hidden
        model.crit.nll(hidden[:, -1:], doc[:, p : p + 1])
    sync(device)
    return (clock(device) - start) / n_tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[1600], help="attention lengths (mem_len)")
    ap.add_argument("--segment", type=int, default=64, help="Transformer-XL segment length")
    ap.add_argument("--segments", type=int, default=8, help="timed Transformer-XL segments")
    ap.add_argument("--vanilla-segments", type=int, default=1, help="timed vanilla segments (every position)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    cfg = TransformerXLConfig(dropout=0.0, clamp_len=-1, same_length=True)
    torch.manual_seed(0)
    model = TransformerXLLM(cfg).to(device).eval()
    gen = torch.Generator().manual_seed(0)
    print(
        f"model: d_model={cfg.d_model} n_layer={cfg.n_layer} n_head={cfg.n_head} vocab={cfg.vocab_size} "
        f"cutoffs={cfg.cutoffs} same_length={cfg.same_length} clamp_len={cfg.clamp_len}; device={device}, "
        f"threads={args.threads}, segment={args.segment}"
    )
    for length in args.lengths:
        model.cfg.mem_len = length
        filled = -(-length // args.segment) * args.segment  # the memory fills in whole segments
        doc = zipf_ids(filled + args.segments * args.segment + 1, cfg.vocab_size, gen)[None].to(device)
        fast = txl_per_token(model, doc, args.segment, args.segments, device)
        n_vanilla = min(args.vanilla_segments, args.segments) * args.segment
        # the positions (a) predicted first: its first segment reads tokens filled.. and predicts filled + 1..
        slow = vanilla_per_token(model, doc, filled + 1, n_vanilla, device)
        print(
            f"attention length {length}: Transformer-XL {fast * 1e3:.3f} ms/token, vanilla "
            f"{slow * 1e3:.1f} ms/token (every one of {n_vanilla} positions) -> {slow / fast:.0f}x"
        )


if __name__ == "__main__":
    main()
