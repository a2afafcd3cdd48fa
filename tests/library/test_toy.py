"""attention_math.toy: the gradient of the whole model, determinism, the cache, the scores,
the pure-Python forward, and (slow) the trained model's heads."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.gradcheck import central_difference, relative_error
from attention_math.positional import sinusoidal
from attention_math.toy import cache as toy_cache
from attention_math.toy import live
from attention_math.toy.ablation import zero_head
from attention_math.toy.data import induction_batch, repeated_tokens
from attention_math.toy.export import weights_json
from attention_math.toy.grad import loss_and_grads
from attention_math.toy.heads import HELD_OUT_SEED, held_out, induction_by_length, report
from attention_math.toy.model import Config, Params, ToyModel, init_params, weight_names
from attention_math.toy.scores import (
    composition_score,
    copying_score,
    k_composition_score,
    prefix_matching_score,
    previous_token_score,
)
from attention_math.toy.train import Hyper, train
from tests.library.test_no_numpy import run_without_numpy

SMALL = Config(vocab=5, d_model=4, n_heads=2, n_ctx=6, pos_base=10.0)


def _small_case(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = init_params(SMALL, rng)
    for w in params.as_dict().values():  # larger weights: sharper attention, so every path
        w *= 1.5  # carries gradient (in place: the arrays of params themselves)
    tokens = rng.integers(0, SMALL.vocab, size=(2, 6))  # (batch, L)
    pos = sinusoidal(6, SMALL.d_model, base=SMALL.pos_base)  # (L, d_model)
    return params, pos, tokens


@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_equals_central_differences(seed):
    params, pos, tokens = _small_case(seed)
    _, grads, _ = loss_and_grads(params, pos, SMALL, tokens)
    weights, g = params.as_dict(), grads.as_dict()
    assert list(g) == weight_names(SMALL)
    for name in weight_names(SMALL):

        def loss_of(w, name=name):
            return loss_and_grads(Params.from_dict({**weights, name: w}), pos, SMALL, tokens)[0]

        fd = central_difference(loss_of, weights[name], 1e-5)
        assert np.abs(g[name]).max() > 1e-4, name  # a gradient that could be wrong
        assert relative_error(g[name], fd) < 1e-7, name


def test_a_wrong_gradient_would_be_caught():
    """The check above has teeth: a gradient off by 10 % fails it."""
    params, pos, tokens = _small_case()
    _, grads, _ = loss_and_grads(params, pos, SMALL, tokens)

    def loss_of(w):
        return loss_and_grads(Params.from_dict({**params.as_dict(), "w_e": w}), pos, SMALL, tokens)[
            0
        ]

    fd = central_difference(loss_of, params.w_e, 1e-5)
    assert relative_error(grads.w_e, fd) < 1e-7
    assert relative_error(grads.w_e * 0.9, fd) > 1e-3


def test_training_is_deterministic_bit_for_bit():
    small = Config(vocab=8, d_model=8, n_ctx=16)
    short = Hyper(steps=20, batch=4, length=12, seed=3)
    a, b = train(small, short), train(small, short)
    for name, w in a.params.as_dict().items():
        assert w.tobytes() == b.params.as_dict()[name].tobytes(), name
    assert a.history["loss"].tobytes() == b.history["loss"].tobytes()
    c = train(small, Hyper(steps=20, batch=4, length=12, seed=4))
    assert a.params.w_e.tobytes() != c.params.w_e.tobytes()


def test_training_lowers_the_loss():
    m = train(Config(vocab=8, d_model=8, n_ctx=16), Hyper(steps=150, batch=8, length=16))
    first, last = m.history["loss"][:20].mean(), m.history["loss"][-20:].mean()
    assert last < first - 0.2


def test_a_warm_cache_does_not_retrain(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    small, short = Config(vocab=8, d_model=8, n_ctx=12), Hyper(steps=3, batch=2, length=12)
    first = toy_cache.load(small, short)
    assert toy_cache.cache_path(small, short).is_relative_to(tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("trained again with a warm cache")

    monkeypatch.setattr(toy_cache, "train", no_training)
    again = toy_cache.load(small, short)
    for name in weight_names(small):
        assert np.array_equal(first.params.as_dict()[name], again.params.as_dict()[name])
    assert np.array_equal(first.history["loss"], again.history["loss"])
    with pytest.raises(AssertionError, match="trained again"):
        toy_cache.load(small, Hyper(steps=3, batch=2, length=12, seed=1))  # another key


def test_the_data_rejects_a_negative_or_infinite_power():
    for power in (-0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="power must be"):
            induction_batch(np.random.default_rng(0), 2, 32, 32, power=power)


def _segment_lengths(repeat: np.ndarray) -> list[int]:
    lengths = []
    for r in repeat:
        edges = np.flatnonzero(np.diff(np.concatenate([[0], r.astype(int), [0]])))
        lengths += [
            int(end - first + 1) for first, end in zip(edges[::2], edges[1::2], strict=True)
        ]
    return lengths


def test_a_larger_power_draws_shorter_segments():
    mean = {
        power: np.mean(
            _segment_lengths(
                induction_batch(np.random.default_rng(0), 300, 32, 32, min_repeat=4, power=power)[1]
            )
        )
        for power in (0.0, 2.0)
    }
    assert mean[2.0] < mean[0.0] - 2


def test_the_data_repeats_segments_whose_length_and_place_vary():
    tokens, repeat = induction_batch(np.random.default_rng(0), 200, 32, 32)
    lengths, starts, pairs, drawn = set(), set(), [], []
    for t, r in zip(tokens, repeat, strict=True):
        edges = np.flatnonzero(np.diff(np.concatenate([[0], r.astype(int), [0]])))
        runs = list(zip(edges[::2], edges[1::2], strict=True))  # predictions s2 … s2+m−2
        assert runs, "a sequence without a copy"
        pairs.append(len(runs))
        for s2, end in runs:
            m = end - s2 + 1
            assert 2 <= m <= 16
            assert np.array_equal(t[s2 : s2 + m], t[s2 - m : s2])  # the segment just before
            lengths.add(m)
            drawn.append(m)
            starts.add(s2)
    assert lengths == set(range(2, 17))  # the distance back to the segment varies
    counts = np.bincount(drawn)
    assert counts[2:6].sum() > counts[13:17].sum()  # short segments are drawn more often
    assert len(starts) > 10  # and so does the place
    assert max(pairs) >= 2 and min(pairs) == 1


def test_repeated_tokens_after_a_prefix():
    t = repeated_tokens(np.random.default_rng(0), 50, 6, 32, prefix=8)  # (50, 20)
    assert t.shape == (50, 20)
    assert (t[:, 8:14] == t[:, 14:]).all()
    assert all(len(set(row[:14])) == 14 for row in t)  # the repeat is the only recurrence
    # no prefix: the same draws as before the prefix existed (the page's held-out sequences)
    a = repeated_tokens(np.random.default_rng(3), 4, 16, 32)
    b = np.stack([np.random.default_rng(3).permutation(32)[:16] for _ in range(1)])
    assert (a[0, :16] == b[0]).all()
    with pytest.raises(ValueError, match="prefix \\+ n ≤ vocab = 32"):
        repeated_tokens(np.random.default_rng(0), 1, 16, 32, prefix=20)


def test_zero_head_removes_exactly_that_heads_output():
    m = ToyModel(Config(), init_params(Config(), np.random.default_rng(2)))
    tokens = repeated_tokens(np.random.default_rng(0), 3, 8, 32, prefix=4)  # (3, 20)
    before = m.logits(tokens)
    gone = m
    for layer in range(2):
        for head in range(2):
            gone = zero_head(gone, layer, head)
    # every head zeroed: only the direct path, embedding + position through the unembedding
    direct = (m.params.w_e[tokens] + m.pos[:20]) @ m.params.w_u  # (3, 20, vocab)
    np.testing.assert_allclose(gone.logits(tokens), direct, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(m.logits(tokens), before)  # the original is untouched
    # one head zeroed: the others' attention in the same layer is unchanged, the logits not
    one = zero_head(m, 0, 1)
    np.testing.assert_array_equal(
        one.attention_patterns(tokens)[:, 0], m.attention_patterns(tokens)[:, 0]
    )
    assert np.abs(one.logits(tokens) - before).max() > 1e-3
    with pytest.raises(ValueError, match="head in 0 … 1"):
        zero_head(m, 0, 2)


def test_induction_by_length_without_prefix_is_the_held_out_report():
    m = ToyModel(Config(), init_params(Config(), np.random.default_rng(4)))
    by = induction_by_length(m, [16], prefix=0, batch=64, seed=HELD_OUT_SEED)
    r = report(m, held_out(m))
    np.testing.assert_allclose(by.prefix_matching[0], r.prefix_matching[1], rtol=1e-12)
    assert by.loss_repeat[0] == pytest.approx(r.loss_repeat, rel=1e-12)
    assert by.best[0] == r.prefix_matching[1].max()
    with pytest.raises(ValueError, match="n_ctx = 40"):
        induction_by_length(m, [16], prefix=9)
    with pytest.raises(ValueError, match="lengths ≥ 2"):
        induction_by_length(m, [1])


def test_scores_on_ideal_and_on_wrong_patterns():
    tokens = repeated_tokens(np.random.default_rng(0), 1, 6, 10)[0]  # (12,)
    n = 6
    induction = np.eye(12)
    induction[n:] = 0
    induction[np.arange(n, 12), np.arange(1, n + 1)] = 1  # copies look at the next token
    prev = np.eye(12, k=-1)
    prev[0, 0] = 1
    assert prefix_matching_score(induction, tokens) == 1.0
    assert prefix_matching_score(prev, tokens) == 0.0
    assert previous_token_score(prev) == 1.0
    assert previous_token_score(induction) < 0.2
    with pytest.raises(ValueError, match="no token recurs"):
        prefix_matching_score(prev[:5, :5], tokens[:5])
    with pytest.raises(ValueError, match="square"):
        previous_token_score(np.ones((3, 4)))
    assert copying_score(np.eye(4)) == 1.0 and copying_score(-np.eye(4)) == -1.0
    assert composition_score(np.eye(2), np.eye(2)) == pytest.approx(2**-0.5)
    with pytest.raises(ValueError, match="zero"):
        composition_score(np.eye(3), np.zeros((3, 3)))
    a = np.random.default_rng(1).normal(size=(4, 4))
    assert k_composition_score(a, a) == pytest.approx(composition_score(a, a.T))


def test_patterns_are_each_heads_causal_softmax_of_its_scores():
    """The patterns equal softmax(q kᵀ/√d_head + causal mask) of the heads forward saved."""
    m = ToyModel(SMALL, init_params(SMALL, np.random.default_rng(3)))
    _, saved = m.run([[0, 1, 2, 3, 4, 0]])
    got = m.attention_patterns([[0, 1, 2, 3, 4, 0]])  # (1, layers, heads, L, L)
    for layer in range(SMALL.n_layers):
        q, k = saved[f"q.{layer}"], saved[f"k.{layer}"]  # (1, h, L, d_head)
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(SMALL.d_head)
        s = np.where(np.tri(6, dtype=bool), s, -np.inf)
        want = np.exp(s - s.max(-1, keepdims=True))
        want /= want.sum(-1, keepdims=True)
        np.testing.assert_allclose(got[:, layer], want, rtol=1e-12, atol=1e-15)


def test_params_check_their_layers():
    p = init_params(SMALL, np.random.default_rng(0))
    with pytest.raises(TypeError, match="layers must be a sequence of AttentionParams"):
        Params(p.w_e, (p.layers[0].as_dict(),), p.w_u)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"missing weights \['w_v.1'\]"):
        Params.from_dict({k: v for k, v in p.as_dict().items() if k != "w_v.1"})
    with pytest.raises(ValueError, match=r"w_u must have at least 2 dimensions"):
        Params(p.w_e, p.layers, np.ones(3))


def test_model_rejects_bad_tokens():
    m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
    with pytest.raises(ValueError, match="vocab"):
        m.logits([0, 32])
    with pytest.raises(ValueError, match="n_ctx = 40"):
        m.attention_patterns(list(range(8)) * 6)
    with pytest.raises(TypeError, match="integers"):
        m.logits([0.5, 1.0])


def _decoded(model: ToyModel) -> dict:
    return {k: v if k == "config" else live.decode(v) for k, v in weights_json(model).items()}


def test_pure_python_patterns_equal_numpy():
    m = ToyModel(Config(), init_params(Config(), np.random.default_rng(5)))
    w = _decoded(m)
    for seed, length in ((0, 1), (1, 7), (2, 40)):
        tokens = [int(t) for t in np.random.default_rng(seed).integers(0, 32, length)]
        got = np.array(live.patterns(w, tokens))  # (layers, heads, L, L)
        assert got.shape == (2, 2, length, length)
        assert np.abs(got - m.attention_patterns(tokens)).max() < 1e-12
    with pytest.raises(ValueError, match="vocab"):
        live.patterns(w, [1, 40])
    with pytest.raises(TypeError, match="integers"):
        live.patterns(w, [1, 2.0])


def test_pure_python_patterns_run_without_numpy():
    m = ToyModel(Config(), init_params(Config(), np.random.default_rng(5)))
    import json

    blob = json.dumps(weights_json(m))
    expected = m.attention_patterns([3, 1, 4, 1, 5])[1, 0, 4]  # (L,)
    out = run_without_numpy(
        f"""
        import json
        from attention_math.toy import live
        w = {{k: v if k == "config" else live.decode(v) for k, v in json.loads({blob!r}).items()}}
        print(json.dumps(live.patterns(w, [3, 1, 4, 1, 5])[1][0][4]))
        assert "numpy" not in sys.modules
        """
    )
    import json as _json

    assert np.abs(np.array(_json.loads(out)) - expected).max() < 1e-12


@pytest.mark.slow
def test_the_trained_model_has_a_previous_token_and_an_induction_head():
    """The page's model (trained once, then cached): heads found by score, not by hand."""
    r = report(toy_cache.load())
    layer, head = r.previous_head
    assert layer == 0 and r.previous_token[layer, head] >= 0.8
    assert r.previous_token[layer, head] == r.previous_token[0].max()
    layer, head = r.induction_head
    assert layer == 1 and r.prefix_matching[layer, head] >= 0.8
    assert r.prefix_matching[layer, head] == r.prefix_matching[1].max()
    assert r.loss_repeat < r.loss_first / 3  # the copy is predicted, the random half is not
    assert r.copying[1, r.induction_head[1]] > 0.5  # it copies what it attends to
    # its keys read the previous-token head's output more than the other layer-1 head's
    assert r.k_composition[r.induction_head[1]].argmax() == r.previous_head[1]


@pytest.mark.slow
def test_the_trained_model_in_pure_python_equals_numpy():
    m = toy_cache.load()
    w = _decoded(m)
    tokens = [int(t) for t in repeated_tokens(np.random.default_rng(7), 1, 16, 32)[0]]
    got = np.array(live.patterns(w, tokens))
    assert np.abs(got - m.attention_patterns(tokens)).max() < 1e-12


@pytest.mark.slow
def test_zeroing_the_previous_token_head_removes_induction_at_every_length():
    """Olsson et al.'s ablation on the page's model: with the previous-token head's output
    zeroed, every length's best prefix-matching score falls below half and the loss on the
    repeat more than doubles."""
    m = toy_cache.load()
    by = induction_by_length(m, range(4, 17))
    knocked = induction_by_length(zero_head(m, *report(m).previous_head), range(4, 17))
    assert (knocked.best < by.best / 2).all()
    assert (knocked.loss_repeat > 2 * by.loss_repeat).all()


@pytest.mark.slow
def test_the_trained_model_learns_induction_for_every_repeat():
    """Issue 53's bar: held-out repeats of 4 … 16 tokens after 8 random ones; for every
    length a layer-2 head's prefix-matching score ≥ 0.8, and the loss on the repeat
    ≤ ¼ log vocab."""
    m = toy_cache.load()
    by = induction_by_length(m, range(4, 17))
    bar = 0.25 * np.log(m.config.vocab)
    for n, best, loss in zip(by.lengths, by.best, by.loss_repeat, strict=True):
        assert best >= 0.8, (n, best)
        assert loss <= bar, (n, loss, bar)
