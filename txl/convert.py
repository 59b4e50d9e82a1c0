"""Bring existing Transformer-XL checkpoints into TransformerXLLM.

Two sources share module names but differ in details:
- Hugging Face `TransfoXLLMHeadModel` (transformers <= 4.57): keys under `transformer.`, u/v
  (`r_w_bias`/`r_r_bias`) per layer when `untie_r` (its default) else once at the top, time-major mems
  with n_layer entries; its loss reads tail cluster i from head column cutoffs[0] + i - 1 (our order).
- the original `MemTransformerLM` (kimiyoung/transformer-xl): no prefix, shared u/v at the top, and tail
  cluster i read from head column -i, so its cluster rows are reversed here.

The model's own additions (tag bias, connective boost, retrieved bias) start at zero, so a converted
model computes exactly what the source computed.
"""

from __future__ import annotations

import torch

from txl.model import TransformerXLConfig, TransformerXLLM

# source config key -> ours; both sources' spellings (HF renamed n_token and tie_weight)
_CONFIG_KEYS = {
    "vocab_size": "vocab_size",
    "n_token": "vocab_size",
    "d_model": "d_model",
    "n_layer": "n_layer",
    "n_head": "n_head",
    "d_head": "d_head",
    "d_inner": "d_inner",
    "d_embed": "d_embed",
    "mem_len": "mem_len",
    "clamp_len": "clamp_len",
    "same_length": "same_length",
    "pre_lnorm": "pre_lnorm",
    "dropout": "dropout",
    "dropatt": "dropatt",
    "cutoffs": "cutoffs",
    "div_val": "div_val",
    "tie_projs": "tie_projs",
    "tie_word_embeddings": "tie_weights",
    "tie_weight": "tie_weights",
    "layer_norm_epsilon": "layer_norm_eps",
}

_LAYER_KEYS = {
    "dec_attn.qkv_net.weight": "attn.qkv.weight",
    "dec_attn.r_net.weight": "attn.r_proj.weight",
    "dec_attn.o_net.weight": "attn.out.weight",
    "dec_attn.layer_norm.weight": "attn.ln.weight",
    "dec_attn.layer_norm.bias": "attn.ln.bias",
    "dec_attn.r_w_bias": "attn.u",
    "dec_attn.r_r_bias": "attn.v",
    "pos_ff.CoreNet.0.weight": "ff.fc1.weight",
    "pos_ff.CoreNet.0.bias": "ff.fc1.bias",
    "pos_ff.CoreNet.3.weight": "ff.fc2.weight",
    "pos_ff.CoreNet.3.bias": "ff.fc2.bias",
    "pos_ff.layer_norm.weight": "ff.ln.weight",
    "pos_ff.layer_norm.bias": "ff.ln.bias",
}


def _rename(key: str, prefix: str) -> str | None:
    """A source key -> our key; None for keys with no counterpart (the sinusoid's inv_freq buffer)."""
    body = key.removeprefix(prefix)
    if body.startswith("word_emb.emb_layers."):
        return "emb.layers." + body.removeprefix("word_emb.emb_layers.")
    if body.startswith("word_emb.emb_projs."):
        return "emb.projs." + body.removeprefix("word_emb.emb_projs.")
    if body in ("r_w_bias", "r_r_bias"):
        return "u" if body == "r_w_bias" else "v"
    if body.startswith("layers."):
        _, idx, rest = body.split(".", 2)
        return f"layers.{idx}.{_LAYER_KEYS[rest]}" if rest in _LAYER_KEYS else None
    if key.startswith("crit."):
        body = key.removeprefix("crit.")
        for src, dst in (("out_layers.", "crit.layers."), ("out_projs.", "crit.projs.")):
            if body.startswith(src):
                return dst + body.removeprefix(src)
        if body in ("cluster_weight", "cluster_bias"):
            return "crit." + body
    return None


def config_from_transfo_xl(config: dict, **overrides) -> TransformerXLConfig:
    """Our config from a source config dict (HF `TransfoXLConfig.to_dict()` or the original's args)."""
    kwargs = {ours: config[theirs] for theirs, ours in _CONFIG_KEYS.items() if theirs in config}
    return TransformerXLConfig(**(kwargs | overrides))


def from_transfo_xl(state_dict: dict[str, torch.Tensor], config: dict, **overrides) -> TransformerXLLM:
    """A TransformerXLLM (eval mode) holding the weights of an HF TransfoXLLMHeadModel or an original
    MemTransformerLM state dict. `overrides` set fields of our config (e.g. tag_bias=False)."""
    hf = any(k.startswith("transformer.") for k in state_dict)
    prefix = "transformer." if hf else ""
    shared_r = f"{prefix}r_w_bias" in state_dict
    if not hf and not shared_r and "untie_r" not in config:
        raise ValueError("original checkpoint without a top-level r_w_bias: say untie_r=True in config")
    untie_r = not shared_r
    cfg = config_from_transfo_xl(config, untie_r=untie_r, **overrides)
    model = TransformerXLLM(cfg)
    ours = model.state_dict()

    loaded: dict[str, torch.Tensor] = {}
    for key, value in state_dict.items():
        name = _rename(key, prefix)
        if name is None or (shared_r and name.endswith((".attn.u", ".attn.v"))):
            continue  # HF also registers shared u/v under every layer
        if name not in ours:
            raise ValueError(f"checkpoint key {key} ({name}) has no place in a model with config {cfg}")
        loaded[name] = value
    if not hf and "crit.cluster_weight" in loaded:
        loaded["crit.cluster_weight"] = loaded["crit.cluster_weight"].flip(0)
        loaded["crit.cluster_bias"] = loaded["crit.cluster_bias"].flip(0)
    # tied weights appear under both names in our state dict; a source may store only one of them
    if cfg.tie_weights:
        for i in range(len(model.crit.layers)):
            loaded.setdefault(f"crit.layers.{i}.weight", loaded[f"emb.layers.{i}.weight"])
    for i, tie in enumerate(cfg.tie_projs):
        src = f"emb.projs.{0 if cfg.div_val == 1 else i}"
        if tie and src in loaded:
            loaded.setdefault(f"crit.projs.{i}", loaded[src])
    # only our own additions may be missing, and they keep their zero initialisation
    missing = [k for k in ours if k not in loaded and not k.endswith(_OUR_ADDITIONS)]
    if missing:
        raise ValueError(f"checkpoint lacks {missing}")
    model.load_state_dict(loaded, strict=False)
    return model.eval()


_OUR_ADDITIONS = (".tag_bias", ".boost", ".retrieved_bias")


def mems_from_transfo_xl(mems: list[torch.Tensor]) -> list[torch.Tensor]:
    """HF's time-major mems (n_layer of [M, B, d]) -> ours, batch-first. They lack the last layer's
    output, so pass them as `memory=Memory(states)`; the model then returns n_layer entries as well."""
    return [m.transpose(0, 1).contiguous() for m in mems]
