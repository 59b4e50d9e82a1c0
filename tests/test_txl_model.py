"""Transformer-XL model invariants: memory, masks, the zero-initialised additions, both attention paths."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.records import BLOCK_TYPE_IDS, BlockType
from txl import TransformerXLConfig, TransformerXLLM
from txl.checkpoint import load_model, save_model
from txl.diagnostics import tag_bias_frame
from txl.memory import Memory, Packing
from txl.model import autocast, position_scores
from txl.retrieved import Retrieved


@pytest.fixture(autouse=True)
def one_thread():
    # tiny models: thread hand-offs cost more than they bring on the shared 2-core machine
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def tiny(**kw) -> TransformerXLConfig:
    opts = dict(
        vocab_size=64,
        d_model=16,
        n_layer=2,
        n_head=2,
        d_head=8,
        d_inner=32,
        mem_len=8,
        clamp_len=-1,
        cutoffs=[16, 40],
        dropout=0.0,
        dropatt=0.0,
    )
    return TransformerXLConfig(**(opts | kw))


def model_of(seed: int = 0, **kw) -> TransformerXLLM:
    torch.manual_seed(seed)
    return TransformerXLLM(tiny(**kw)).eval()


def randomise_additions(model: TransformerXLLM) -> None:
    """Give the zero-initialised tag bias, boost and retrieved bias real values."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("tag_bias", "boost", "retrieved_bias")):
                p.normal_(0.0, 1.0)


def ids(b: int, t: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, 64, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    "opts", [dict(clamp_len=5), dict(clamp_len=-1, pre_lnorm=True, untie_r=True, div_val=2)]
)
def test_segments_with_unlimited_memory_equal_one_causal_pass(opts: dict) -> None:
    model = model_of(mem_len=1000, **opts)
    doc = ids(2, 24)
    with torch.no_grad():
        full = model(doc, targets=doc.roll(-1, 1))
        memory = None
        hidden, nll = [], []
        for s in range(4):
            x = doc[:, 6 * s : 6 * s + 6]
            out = model(x, memory, targets=doc.roll(-1, 1)[:, 6 * s : 6 * s + 6])
            memory = out.memory
            hidden.append(out.hidden)
            nll.append(out.nll)
    torch.testing.assert_close(torch.cat(hidden, 1), full.hidden, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.cat(nll, 1), full.nll, rtol=1e-5, atol=1e-5)
    assert [m.size(1) for m in out.memory.states] == [24] * 3


def test_memory_carries_no_gradient() -> None:
    model = model_of()
    model.train()
    first = model(ids(2, 6))
    assert all(not m.requires_grad and m.grad_fn is None for m in first.memory.states)
    second = model(ids(2, 6, seed=2), first.memory, targets=ids(2, 6, seed=3))
    loss = second.nll.mean()
    (g,) = torch.autograd.grad(loss, first.hidden, allow_unused=True, retain_graph=True)
    assert g is None  # nothing flows back into the previous segment
    loss.backward()
    assert model.layers[0].attn.qkv.weight.grad.abs().sum() > 0


def test_mem_len_bounds_memory_and_first_memory_is_empty() -> None:
    model = model_of(mem_len=5)
    with torch.no_grad():
        out = model(ids(2, 3))
        assert [m.shape for m in out.memory.states] == [(2, 3, 16)] * 3  # no zero-filled slots
        out = model(ids(2, 4), out.memory)
    assert [m.size(1) for m in out.memory.states] == [5] * 3


def test_same_length_each_query_sees_exactly_mem_len_keys() -> None:
    """One layer, full memory: perturb one key at a time (a memory slot or an input token) and count,
    per query, the keys whose change reaches it."""
    model = model_of(same_length=True, mem_len=6, n_layer=1)
    x = ids(2, 4, seed=2)
    with torch.no_grad():
        mems = model(ids(2, 6)).memory.states
        base = model(x, Memory(mems)).hidden
        seen = torch.zeros(2, 4, dtype=torch.long)
        for s in range(6):
            bumped = [m.clone() for m in mems]
            bumped[0][:, s] += 1.0
            seen += ((model(x, Memory(bumped)).hidden - base).abs().amax(-1) > 1e-6).long()
        for j in range(4):
            y = x.clone()
            y[:, j] = (y[:, j] + 1) % 64
            seen += ((model(y, Memory(mems)).hidden - base).abs().amax(-1) > 1e-6).long()
    assert seen.eq(6).all(), seen


def test_untrained_additions_leave_plain_transformer_xl() -> None:
    """Tag bias and learned boost at zero, and retrieved slots all masked out: identical outputs."""
    plain = model_of(tag_bias=False, connective_boost="off")
    full = model_of(tag_bias=True, connective_boost="learned")
    full.load_state_dict(plain.state_dict(), strict=False)
    x, types = ids(2, 6), torch.randint(0, len(BlockType), (2, 6))
    conn = torch.rand(2, 6) > 0.5
    with torch.no_grad():
        a = plain(x)
        a2 = plain(ids(2, 5, seed=4), a.memory)
        b = full(x, block_types=types, connective_mask=conn)
        retrieved = [torch.randn(2, 3, 16) for _ in range(3)]
        b2 = full(
            ids(2, 5, seed=4),
            b.memory,
            Retrieved(retrieved, mask=torch.zeros(2, 3, dtype=torch.bool)),
            block_types=types[:, :5],
        )
    assert torch.equal(a.hidden, b.hidden)
    torch.testing.assert_close(b2.hidden, a2.hidden, rtol=1e-6, atol=1e-6)
    # the same inputs with trained (non-zero) additions do change the output: the check above is not empty
    randomise_additions(full)
    with torch.no_grad():
        c = full(x, block_types=types, connective_mask=conn)
    assert not torch.allclose(c.hidden, a.hidden, atol=1e-3)


def test_fixed_connective_boost_moves_attention_to_connectives() -> None:
    x, conn = ids(1, 8), torch.zeros(1, 8, dtype=torch.bool)
    conn[0, [1, 4]] = True
    masses = []
    for beta in (0.0, 3.0):
        model = model_of(connective_boost="fixed", connective_beta=beta)
        with torch.no_grad():
            out = model(x, connective_mask=conn, diagnostics=True)
        masses.append(out.diagnostics["mass_connective"].mean())
    assert masses[1] > masses[0] + 0.1


def test_tag_bias_is_readable_and_steers_attention() -> None:
    model = model_of()
    table = model.tag_bias_table()
    n = len(BlockType)
    assert table.shape == (2, 2, n, n) and torch.count_nonzero(table) == 0
    opinion, facts = BLOCK_TYPE_IDS[BlockType.OPINION], BLOCK_TYPE_IDS[BlockType.FACTS]
    x = ids(1, 8)
    types = torch.full((1, 8), BLOCK_TYPE_IDS[BlockType.OTHER])
    types[0, :4], types[0, 4:] = facts, opinion  # OPINION queries after FACTS keys
    with torch.no_grad():
        before = model(x, block_types=types, diagnostics=True)
        for blk in model.layers:
            blk.attn.tag_bias[:, opinion, facts] = 5.0
        after = model(x, block_types=types, diagnostics=True)
    assert model.tag_bias_table()[:, :, opinion, facts].eq(5.0).all()
    frame = tag_bias_frame(model)
    assert frame.query("query_type == 'OPINION' and key_type == 'FACTS'").bias.eq(5.0).all()
    assert frame.query("query_type == 'FACTS' and key_type == 'OPINION'").bias.eq(0.0).all()
    assert not torch.allclose(after.hidden[:, 4:], before.hidden[:, 4:])
    torch.testing.assert_close(after.hidden[:, :4], before.hidden[:, :4])  # FACTS queries: no such bias


def test_retrieved_slots_of_one_layer_reach_that_layer_alone() -> None:
    model = model_of(n_layer=3)
    randomise_additions(model)
    x = ids(2, 5, seed=3)
    states = [torch.randn(2, 4, 16) for _ in range(3)]
    with torch.no_grad():
        plain = model(x)
        every = model(x, retrieved=Retrieved(states))
        listed = model(x, retrieved=Retrieved(states, layers=(0, 1, 2)))
        one = {sdpa: None for sdpa in (True, False)}
        for sdpa in one:
            model.cfg.use_sdpa = sdpa
            one[sdpa] = model(x, retrieved=Retrieved(states[1:2], layers=(1,)))
        model.cfg.use_sdpa = True
    torch.testing.assert_close(listed.hidden, every.hidden)
    torch.testing.assert_close(one[False].hidden, one[True].hidden, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(one[True].layer_inputs[1], plain.layer_inputs[1])  # layer 0 saw no slot
    assert not torch.allclose(one[True].layer_inputs[2], plain.layer_inputs[2])  # layer 1 did
    assert not torch.allclose(one[True].hidden, every.hidden)
    with pytest.raises(ValueError, match="do not fit"):
        model(x, retrieved=Retrieved(states[:1], layers=(3,)))


def test_layer_numbers_count_from_the_top_when_negative() -> None:
    from txl.retrieved import layer_indices

    assert layer_indices([-2], 4) == (2,) and layer_indices([0, -1], 4) == (0, 3)
    for bad in ([4], [-5], [1, -3], []):
        with pytest.raises(ValueError, match="do not fit"):
            layer_indices(bad, 4)


def test_sdpa_path_equals_explicit_path() -> None:
    model = model_of(same_length=True, clamp_len=4, mem_len=6)
    randomise_additions(model)
    kw = dict(block_types=torch.randint(0, 21, (2, 5)), connective_mask=torch.rand(2, 5) > 0.5)
    with torch.no_grad():
        warm = model(
            ids(2, 6), block_types=torch.randint(0, 21, (2, 6)), connective_mask=torch.rand(2, 6) > 0.5
        )
        retrieved = [torch.randn(2, 3, 16) for _ in range(3)]
        extra = Retrieved(retrieved, types=torch.randint(0, 21, (2, 3)))
        reset = warm.memory.reset(~torch.tensor([True, False]))
        outs = []
        for sdpa in (True, False):
            model.cfg.use_sdpa = sdpa
            outs.append(model(ids(2, 5, seed=5), reset, extra, targets=ids(2, 5, seed=6), **kw))
    torch.testing.assert_close(outs[0].hidden, outs[1].hidden, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[0].nll, outs[1].nll, rtol=1e-5, atol=1e-5)


def test_fp32_matches_fp64() -> None:
    model = model_of(div_val=2, d_embed=32)
    randomise_additions(model)
    x, types = ids(2, 7), torch.randint(0, 21, (2, 7))
    with torch.no_grad():
        a = model(x, block_types=types)
        a2 = model(ids(2, 7, seed=9), a.memory, targets=x, block_types=types)
        model.double()
        b = model(x, block_types=types)
        b2 = model(ids(2, 7, seed=9), b.memory, targets=x, block_types=types)
    assert b2.hidden.dtype == torch.float64
    torch.testing.assert_close(a2.hidden.double(), b2.hidden, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(a2.nll.double(), b2.nll, rtol=1e-4, atol=1e-4)


def test_lane_reset_equals_a_fresh_start() -> None:
    """memory.reset for a lane whose document changed: that lane sees no memory at all."""
    model = model_of(mem_len=6)
    x1, x2 = ids(2, 6), ids(2, 4, seed=8)
    with torch.no_grad():
        first = model(x1)
        reset = model(x2, first.memory.reset(~torch.tensor([True, False])))
        fresh = model(x2[1:])
        kept = model(x2[:1], Memory([m[:1] for m in first.memory.states]))
        follow = model(ids(2, 3, seed=9), reset.memory)
        follow_fresh = model(ids(2, 3, seed=9)[1:], fresh.memory)
    torch.testing.assert_close(reset.hidden[1:], fresh.hidden, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(reset.hidden[:1], kept.hidden, rtol=1e-5, atol=1e-5)
    assert reset.memory.mask[1].tolist() == [False, False, True, True, True, True]
    # the hidden slots stay hidden while they are still in the memory
    torch.testing.assert_close(follow.hidden[1:], follow_fresh.hidden, rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(st.integers(1, 9), min_size=3, max_size=3), min_size=2, max_size=3), st.booleans())
def test_ragged_lanes_equal_each_lane_alone(lens: list[list[int]], grad: bool) -> None:
    """Right-padded lanes of different lengths (`lengths`): every lane's hidden states and carried memory
    equal its own unpadded run, segment after segment, with and without autograd (cached K/V)."""
    model = model_of(mem_len=7, tag_bias=True)
    randomise_additions(model)
    b, steps = len(lens), len(lens[0])
    with torch.set_grad_enabled(grad):
        alone = []
        for lane in range(b):
            memory, outs = None, []
            for s in range(steps):
                x = ids(1, lens[lane][s], seed=10 * lane + s)
                out = model(x, memory, block_types=torch.full_like(x, lane))
                memory, outs = out.memory, [*outs, out.hidden[0]]
            alone.append(outs)
        memory = None
        for s in range(steps):
            n = [lens[lane][s] for lane in range(b)]
            x = torch.zeros(b, max(n), dtype=torch.long)
            for lane in range(b):
                x[lane, : n[lane]] = ids(1, n[lane], seed=10 * lane + s)[0]
            types = torch.arange(b)[:, None].expand_as(x)
            out = model(x, memory, block_types=types, packing=Packing(lengths=torch.tensor(n)))
            memory = out.memory
            for lane in range(b):
                torch.testing.assert_close(out.hidden[lane, : n[lane]], alone[lane][s], rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.lists(st.integers(1, 9), min_size=1, max_size=5), min_size=1, max_size=3), st.integers(1, 3)
)
def test_packed_segments_equal_one_call_each(lens: list[list[int]], per_call: int) -> None:
    """Consecutive segments packed into one call (`seg_starts`, ragged lanes): hidden states and the carried
    memory equal those of one call per segment, with memory shorter and longer than the segments."""
    model = model_of(mem_len=7, tag_bias=True, connective_boost="learned")
    randomise_additions(model)
    segs = [[ids(1, n, seed=10 * lane + s)[0] for s, n in enumerate(row)] for lane, row in enumerate(lens)]
    types = [
        [torch.full((len(x),), (lane + s) % 5) for s, x in enumerate(row)] for lane, row in enumerate(segs)
    ]
    with torch.no_grad():
        alone = []
        for row, trow in zip(segs, types, strict=True):
            memory, outs = None, []
            for x, ty in zip(row, trow, strict=True):
                out = model(x[None], memory, block_types=ty[None], connective_mask=(x % 3 == 0)[None])
                memory, outs = out.memory, [*outs, out.hidden[0]]
            alone.append(torch.cat(outs))
        memory, hidden = None, [[] for _ in segs]
        for first in range(0, max(map(len, segs)), per_call):
            picks = [range(first, min(first + per_call, len(row))) for row in segs]
            n = [sum(len(row[s]) for s in pick) for row, pick in zip(segs, picks, strict=True)]
            x = torch.zeros(len(segs), max(n), dtype=torch.long)
            ty, starts = torch.zeros_like(x), torch.zeros_like(x)
            for lane, pick in enumerate(picks):
                at = 0
                for s in pick:
                    k = len(segs[lane][s])
                    x[lane, at : at + k], ty[lane, at : at + k] = segs[lane][s], types[lane][s]
                    starts[lane, at : at + k] = at
                    at += k
            # a lane with no segment left takes one padding token (its state is not compared)
            out = model(
                x,
                memory,
                block_types=ty,
                connective_mask=x % 3 == 0,
                packing=Packing(torch.tensor([max(k, 1) for k in n]), starts),
            )
            memory = out.memory
            for lane in range(len(segs)):
                hidden[lane].append(out.hidden[lane, : n[lane]])
    for lane in range(len(segs)):
        torch.testing.assert_close(torch.cat(hidden[lane]), alone[lane], rtol=1e-5, atol=1e-5)


def test_recurrence_dropout_hides_memory_in_training_only() -> None:
    model = model_of(drop_mem=1.0)
    x1, x2 = ids(1, 6), ids(1, 4, seed=2)
    with torch.no_grad():
        first = model(x1)
        model.train()
        dropped = model(x2, first.memory)
        model.eval()
        kept = model(x2, first.memory)
        fresh = model(x2)
    torch.testing.assert_close(dropped.hidden, fresh.hidden, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(kept.hidden, fresh.hidden, atol=1e-4)
    assert dropped.memory.mask is None  # the hiding lasts one step, it is not carried


def test_retrieved_slots_are_always_visible_and_far() -> None:
    model = model_of(clamp_len=6)
    x = ids(1, 5)
    r1 = [torch.randn(1, 2, 16, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    r2 = [r.clone() for r in r1]
    r2[0][0, 1] += 1.0
    with torch.no_grad():
        a = model(x, retrieved=Retrieved(r1), diagnostics=True)
        b = model(x, retrieved=Retrieved(r2))
        c = model(x, retrieved=Retrieved(r1[:2]))  # n_layer entries are enough
    # even the first query (no memory, nothing before it) attends to the retrieved slots
    assert not torch.allclose(a.hidden[:, 0], b.hidden[:, 0])
    torch.testing.assert_close(a.hidden, c.hidden)
    table = a.diagnostics
    assert len(table) == 4 and (table["mass_retrieved"] > 0).all() and (table["mass_memory"] == 0).all()


def test_retrieved_slot_sits_at_the_clamp_len_bucket() -> None:
    """Moving the oldest memory slot (distance >= clamp_len) into a retrieved slot changes nothing: the
    default bucket is clamp_len and an untrained retrieved bias is zero."""
    model = model_of(clamp_len=3)
    with torch.no_grad():
        first = model(ids(2, 6))
        x = ids(2, 2, seed=4)
        as_memory = model(x, Memory(first.memory.states))
        hide_oldest = torch.ones(2, 6, dtype=torch.bool)
        hide_oldest[:, 0] = False
        as_retrieved = model(
            x,
            Memory(first.memory.states, mask=hide_oldest),
            Retrieved([m[:, :1] for m in first.memory.states]),
        )
    torch.testing.assert_close(as_retrieved.hidden, as_memory.hidden, rtol=1e-5, atol=1e-5)


def test_diagnostics_table_and_off_by_default() -> None:
    model = model_of()
    with torch.no_grad():
        first = model(ids(2, 6))
        plain = model(ids(2, 6, seed=3), first.memory)
        diag = model(
            ids(2, 6, seed=3), first.memory, connective_mask=torch.rand(2, 6) > 0.5, diagnostics=True
        )
    assert plain.diagnostics is None
    table = diag.diagnostics
    assert list(table.columns[:2]) == ["layer", "head"] and len(table) == 4
    for term in "abcd":
        assert table[f"{term}_std"].ge(0).all() and table[f"{term}_mean"].notna().all()
    assert table["entropy"].between(0, torch.log(torch.tensor(12.0)).item()).all()
    assert table["mass_memory"].between(0.01, 0.99).all() and table["mass_connective"].between(0, 1).all()
    torch.testing.assert_close(diag.hidden, plain.hidden, rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 63), min_size=1, max_size=12), st.sampled_from([1, 2]))
def test_adaptive_softmax_nll_in_input_order(targets: list[int], div_val: int) -> None:
    torch.manual_seed(0)
    model = TransformerXLLM(tiny(div_val=div_val, d_embed=16)).eval()
    hidden = torch.randn(1, len(targets), 16)
    tgt = torch.tensor([targets])
    with torch.no_grad():
        lp = model.log_probs(hidden)
        nll = model.crit.nll(hidden, tgt)
    torch.testing.assert_close(lp.exp().sum(-1), torch.ones(1, len(targets)))
    torch.testing.assert_close(nll, -lp.gather(-1, tgt[..., None]).squeeze(-1))


def test_reference_initialisation() -> None:
    torch.manual_seed(0)
    model = TransformerXLLM(
        tiny(d_model=64, d_head=16, d_inner=128, d_embed=32, vocab_size=4000, cutoffs=[1000])
    )
    ln = torch.cat([b.attn.ln.weight for b in model.layers])
    assert abs(ln.mean().item() - 1.0) < 0.01 and 0.01 < ln.std().item() < 0.03
    qkv = model.layers[0].attn.qkv.weight
    assert abs(qkv.std().item() - 0.02) < 0.002
    proj = model.emb.projs[0]
    assert abs(proj.std().item() - 0.01) < 0.002
    assert model.crit.layers[0].weight is model.emb.layers[0].weight  # tied by default
    assert torch.count_nonzero(model.tag_bias_table()) == 0


def test_checkpoint_round_trip(tmp_path) -> None:
    model = model_of(div_val=2, d_embed=32)
    randomise_additions(model)
    path = tmp_path / "m.pt"
    save_model(path, model, {"step": 7})
    loaded, extra = load_model(path)
    x = ids(2, 5)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x).hidden, model(x).hidden)
    assert extra == {"step": 7} and loaded.cfg == model.cfg
    assert loaded.crit.layers[1].weight is loaded.emb.layers[1].weight


@pytest.mark.parametrize("pre_lnorm", [False, True])
def test_carried_memory_keys_values_equal_recomputing_them(pre_lnorm: bool) -> None:
    model = model_of(pre_lnorm=pre_lnorm, mem_len=7)
    retrieved = [torch.randn(2, 2, 16) for _ in range(3)]
    with torch.no_grad():
        first = model(ids(2, 5))
        second = model(ids(2, 5, seed=2), first.memory)
        assert [kv.shape for kv in second.memory.kv] == [(2, 7, 32)] * 2
        x = ids(2, 4, seed=3)
        cached = model(x, second.memory, Retrieved(retrieved))
        uncached = second.memory
        plain = model(
            x,
            Memory(uncached.states, uncached.types, uncached.connective, uncached.mask),
            Retrieved(retrieved),
        )
    torch.testing.assert_close(cached.hidden, plain.hidden, rtol=1e-5, atol=1e-5)
    assert model(x, second.memory).memory.kv is None  # autograd on: nothing cached


def test_bf16_autocast_runs_close_to_fp32() -> None:
    """The CUDA precision (bf16 autocast), exercised on CPU: mixed-dtype memory and caches work."""
    model = model_of(div_val=2, d_embed=32, mem_len=6)
    x1, x2 = ids(2, 6), ids(2, 5, seed=2)
    with torch.no_grad():
        ref = model(x2, model(x1).memory, targets=x1[:, :5])
        with autocast("cpu", "bfloat16"):
            first = model(x1)
            out = model(x2, first.memory, targets=x1[:, :5])
    assert out.hidden.isfinite().all() and out.nll.dtype == torch.float32
    assert (out.hidden.float() - ref.hidden).abs().mean() < 0.05
    assert (out.nll - ref.nll).abs().max() < 0.1


@pytest.mark.filterwarnings("ignore:.*CUDA:UserWarning")
def test_auto_precision_is_bf16_on_cuda_and_fp32_on_cpu() -> None:
    assert not isinstance(autocast("cpu"), torch.autocast)
    assert isinstance(autocast("cuda"), torch.autocast)
    assert isinstance(autocast("cpu", "bfloat16"), torch.autocast)
    assert not isinstance(autocast("cuda", "float32"), torch.autocast)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(0, 6), st.integers(0, 2))
def test_position_scores_match_the_definition(t: int, m: int, n_r: int) -> None:
    """Pad-and-reshape rel shift == (q + v)·W_kR R_{i-j} computed pair by pair (visible pairs)."""
    k = m + t
    gen = torch.Generator().manual_seed(t * 100 + m * 10 + n_r)
    qv = torch.randn(2, 3, t, 4, generator=gen, dtype=torch.float64)
    rel = torch.randn(3, 4, k + (n_r > 0), generator=gen, dtype=torch.float64)  # distances K-1..0, far
    rk = torch.cat([torch.zeros(3, 4, 1, dtype=torch.float64), rel], -1)
    got = position_scores(qv, rk, n_r)
    assert got.shape == (2, 3, t, n_r + k)
    for i in range(t):
        for j in range(k):
            if j <= i + m:
                dist = i + m - j
                torch.testing.assert_close(
                    got[..., i, n_r + j], (qv[..., i, :] * rel[..., k - 1 - dist]).sum(-1)
                )
        for j in range(n_r):
            torch.testing.assert_close(got[..., i, j], (qv[..., i, :] * rel[..., -1]).sum(-1))


@pytest.mark.parametrize(
    "bad",
    [
        dict(cutoffs=[40, 16]),
        dict(cutoffs=[64]),
        dict(connective_boost="on"),
        dict(tie_projs=[False]),
        dict(dropatt=1.0),
    ],
)
def test_config_rejects_inconsistent_options(bad: dict) -> None:
    with pytest.raises(ValueError):
        tiny(**bad)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.integers(0, 2), st.booleans())
def test_a_call_cut_at_a_layer_gives_the_full_calls_inputs_up_to_it(
    lens: list[int], cut: int, grad: bool
) -> None:
    """Segment after segment, with memory carried and slots retrieved at the layer cut at: the inputs of
    layers 0..cut equal the full model's, with and without autograd (cached K/V)."""
    model = model_of(n_layer=3, tag_bias=True)
    randomise_additions(model)
    slots = Retrieved([torch.randn(1, 3, 16)], layers=(cut,))
    with torch.set_grad_enabled(grad):
        full = part = None
        for s, n in enumerate(lens):
            x = ids(1, n, seed=s)
            types = torch.full_like(x, s % 3)
            a = model(x, full, slots, block_types=types)
            b = model(x, part, slots, block_types=types, layers=cut)
            full, part = a.memory, b.memory
            assert b.hidden is None and len(b.layer_inputs) == len(part.states) == cut + 1
            for i in range(cut + 1):
                torch.testing.assert_close(b.layer_inputs[i], a.layer_inputs[i], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="predicts nothing"):
        model(ids(1, 3), layers=1, targets=ids(1, 3))
    with pytest.raises(ValueError, match="states"):
        model(ids(1, 3), full, layers=1)  # the full model's memory does not fit a cut call
