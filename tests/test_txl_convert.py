"""Converted Hugging Face TransfoXL checkpoints reproduce HF's own outputs (fixtures written by
tests/fixtures/transfo_xl/make_fixtures.py with transformers 4.37.2, empty first memory)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from txl.convert import from_transfo_xl, mems_from_transfo_xl
from txl.memory import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "transfo_xl"


@pytest.fixture(autouse=True)
def one_thread():
    # tiny models: thread hand-offs cost more than they bring on the shared 2-core machine
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


NAMES = [
    "base",
    "div2_preln_clamp",
    "same_length_proj",
    "preln_shared_r",
    "no_clusters_untied",
    "original_format",
]


def _close(ours: torch.Tensor, ref: torch.Tensor, rel: float = 1e-5) -> None:
    err = ((ours - ref).norm() / ref.norm()).item()
    assert err < rel, f"relative error {err:.2e}"
    torch.testing.assert_close(ours, ref, rtol=rel, atol=rel * ref.abs().max().item())


@pytest.mark.parametrize("name", NAMES)
def test_matches_hf_segment_by_segment(name: str) -> None:
    blob = torch.load(FIXTURES / f"{name}.pt", weights_only=True)
    model = from_transfo_xl(blob["state_dict"], blob["config"])
    ids, t = blob["input_ids"], blob["segment_len"]
    memory = None
    with torch.no_grad():
        for s in range(blob["hidden"].size(0)):
            x = ids[:, s * t : (s + 1) * t]
            nxt = ids[:, s * t + 1 : (s + 1) * t + 1]
            out = model(x, memory)
            memory = out.memory
            _close(out.hidden, blob["hidden"][s])
            _close(model.crit.nll(out.hidden[:, : nxt.size(1)], nxt), blob["nll"][s])
            _close(model.log_probs(out.hidden), blob["log_probs"][s])
    for ours, ref in zip(out.memory.states, blob["mems"], strict=False):
        _close(ours, ref)
    assert len(out.memory.states) == model.cfg.n_layer + 1


def test_hf_time_major_mems_continue_the_document() -> None:
    """HF's own mems (time-major, n_layer entries) can be handed to the converted model."""
    blob = torch.load(FIXTURES / "base.pt", weights_only=True)
    model = from_transfo_xl(blob["state_dict"], blob["config"])
    ids, t = blob["input_ids"], blob["segment_len"]
    hf_mems = [m.transpose(0, 1) for m in blob["mems"]]  # as HF returns them: [M, B, d]
    mems = mems_from_transfo_xl(hf_mems)
    assert mems[0].shape == blob["mems"][0].shape
    with torch.no_grad():
        out = model(ids[:, -t:], Memory(mems))
    assert len(out.memory.states) == model.cfg.n_layer
    assert out.memory.states[0].shape == (ids.size(0), model.cfg.mem_len, model.cfg.d_model)


def test_converter_config_and_tied_weights() -> None:
    blob = torch.load(FIXTURES / "div2_preln_clamp.pt", weights_only=True)
    model = from_transfo_xl(blob["state_dict"], blob["config"])
    cfg = model.cfg
    assert (cfg.div_val, cfg.clamp_len, cfg.pre_lnorm, cfg.untie_r) == (2, 3, True, False)
    assert model.crit.layers[1].weight is model.emb.layers[1].weight
    assert model.crit.projs[1] is model.emb.projs[1]
    assert torch.count_nonzero(model.tag_bias_table()) == 0


def test_converter_rejects_a_foreign_checkpoint() -> None:
    blob = torch.load(FIXTURES / "base.pt", weights_only=True)
    sd = dict(blob["state_dict"])
    sd["transformer.layers.9.dec_attn.qkv_net.weight"] = torch.zeros(1)
    with pytest.raises(ValueError, match="layers.9"):
        from_transfo_xl(sd, blob["config"])
    del sd["transformer.layers.9.dec_attn.qkv_net.weight"]
    del sd["transformer.layers.0.pos_ff.CoreNet.0.bias"]
    with pytest.raises(ValueError, match="lacks"):
        from_transfo_xl(sd, blob["config"])
