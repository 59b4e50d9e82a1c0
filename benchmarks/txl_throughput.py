"""Forward throughput of our Transformer-XL vs Hugging Face's TransfoXL on the same config and weights
(converted with txl.convert.from_transfo_xl), in one process, plus the training-step throughput of our
default config.

The project's .venv has a transformers without TransfoXL, so run it from the throwaway reference venv
(the one tests/fixtures/transfo_xl/make_fixtures.py uses) with this repository on the path:

    python3 -m venv /tmp/hfref
    /tmp/hfref/bin/pip install torch==2.13.0 transformers==4.37.2 'numpy<2' 'pyarrow<18'
    PYTHONPATH=. /tmp/hfref/bin/python benchmarks/txl_throughput.py            # CPU, one thread
    PYTHONPATH=. /tmp/hfref/bin/python benchmarks/txl_throughput.py --device cuda

Both models see the same token stream in segments of --tgt-len with full memory (mem_len) before the
timing starts; tokens/s counts the tokens of the timed segments. "encoder" is the forward pass to the
last hidden state and the new memory; "LM" adds the adaptive-softmax NLL of the next token. Without
autograd our model carries the memory's attention keys/values and reuses W_kR R between segments
(txl/model.py) where HF re-projects both every segment: that is part of the measured gain.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict

import torch

from txl import TransformerXLConfig, TransformerXLLM
from txl.convert import from_transfo_xl


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def clock(device: torch.device) -> float:
    # CPU: the process's CPU time (one thread), so other jobs on a shared machine do not distort the
    # figures; CUDA: wall time, taken after synchronising
    return time.process_time() if device.type == "cpu" else time.perf_counter()


def hf_model(cfg: TransformerXLConfig, device: torch.device):
    from transformers.models.deprecated.transfo_xl import TransfoXLConfig, TransfoXLLMHeadModel

    hf_cfg = TransfoXLConfig(
        vocab_size=cfg.vocab_size,
        cutoffs=cfg.cutoffs,
        d_model=cfg.d_model,
        d_embed=cfg.d_embed,
        n_head=cfg.n_head,
        d_head=cfg.d_head,
        d_inner=cfg.d_inner,
        div_val=cfg.div_val,
        n_layer=cfg.n_layer,
        mem_len=cfg.mem_len,
        clamp_len=cfg.clamp_len,
        same_length=cfg.same_length,
        untie_r=cfg.untie_r,
        pre_lnorm=cfg.pre_lnorm,
        dropout=0.0,
        dropatt=0.0,
    )
    torch.manual_seed(0)
    return TransfoXLLMHeadModel(hf_cfg).to(device).eval(), hf_cfg.to_dict()


def tokens_per_s(
    step, stream: torch.Tensor, tgt_len: int, warm: int, timed: int, device: torch.device
) -> float:
    """`step(x, y)` runs one segment and carries its own memory; returns tokens/s over the timed ones."""
    for s in range(warm):
        step(stream[:, s * tgt_len : (s + 1) * tgt_len], stream[:, s * tgt_len + 1 : (s + 1) * tgt_len + 1])
    sync(device)
    start = clock(device)
    for s in range(warm, warm + timed):
        step(stream[:, s * tgt_len : (s + 1) * tgt_len], stream[:, s * tgt_len + 1 : (s + 1) * tgt_len + 1])
    sync(device)
    return stream.size(0) * tgt_len * timed / (clock(device) - start)


def forward_ratio(args, device: torch.device) -> None:
    cfg = TransformerXLConfig(dropout=0.0, dropatt=0.0)
    hf, hf_cfg = hf_model(cfg, device)
    ours = from_transfo_xl(hf.state_dict(), hf_cfg).to(device)
    n = (args.warm + args.timed) * args.tgt_len + 1
    stream = torch.randint(0, cfg.vocab_size, (args.batch, n), generator=torch.Generator().manual_seed(1)).to(
        device
    )
    print(f"config: {asdict(ours.cfg)}")
    print(
        f"batch {args.batch} x tgt_len {args.tgt_len}, mem_len {cfg.mem_len}, device {device}, threads {args.threads}"
    )

    for lm in (False, True):
        rates: dict[str, list[float]] = {}
        for name in ("hf", "ours", "hf", "ours"):  # two alternating rounds each, best kept
            step = make_step(ours if name == "ours" else hf, name == "ours", lm)
            rates.setdefault(name, []).append(
                tokens_per_s(step, stream, args.tgt_len, args.warm, args.timed, device)
            )
        best = {k: max(v) for k, v in rates.items()}
        kind = "LM (+NLL)" if lm else "encoder"
        print(
            f"{kind:10s} forward tokens/s: ours {best['ours']:,.0f}  HF TransfoXL {best['hf']:,.0f}  "
            f"-> {best['ours'] / best['hf']:.2f}x"
        )


def make_step(model, is_ours: bool, lm: bool):
    """One segment forward that carries its own memory from call to call."""
    state: dict = {}

    @torch.no_grad()
    def step(x, y):
        if is_ours:
            out = model(x, state.get("memory"), targets=y if lm else None)
            state["memory"] = out.memory
        elif lm:  # HF's loss shifts inside, so it scores T - 1 of the T tokens
            state["mems"] = model(x, mems=state.get("mems"), labels=x).mems
        else:
            state["mems"] = model.transformer(x, mems=state.get("mems")).mems

    return step


def training_rate(args, device: torch.device) -> None:
    cfg = TransformerXLConfig()
    torch.manual_seed(0)
    model = TransformerXLLM(cfg).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    n = (args.warm + args.timed) * args.tgt_len + 1
    stream = torch.randint(0, cfg.vocab_size, (args.batch, n), generator=torch.Generator().manual_seed(2)).to(
        device
    )
    state: dict = {}
    from txl.model import autocast

    def step(x, y):
        with autocast(device):
            out = model(x, state.get("memory"), targets=y)
        out.nll.mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        state["memory"] = out.memory

    rate = tokens_per_s(step, stream, args.tgt_len, args.warm, args.timed, device)
    precision = "bf16 autocast" if device.type == "cuda" else "fp32"
    print(f"training step (default config, AdamW, {precision}): {rate:,.0f} tokens/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--tgt-len", type=int, default=128)
    ap.add_argument("--warm", type=int, default=4, help="segments before timing (fills the memory)")
    ap.add_argument("--timed", type=int, default=6)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    forward_ratio(args, device)
    training_rate(args, device)


if __name__ == "__main__":
    main()
