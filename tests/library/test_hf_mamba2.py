"""``hf.layer`` of ``transformers``' ``Mamba2Mixer`` against the module's own forward.

The module, on a CPU without the ``mamba_ssm`` kernels, runs its PyTorch path, which casts to
float32 inside ``mamba2_chunk_scan`` (``hidden_states.float()``, ``B.float()``, ``A_log.float()``)
and inside ``MambaRMSNormGated`` (``.to(torch.float32)``), even for a float64 module. Its output
is therefore float32-accurate, and the reader (float64 throughout) is compared with it in
units of float32's epsilon. The reader's three SSD methods are compared with one another in
float64, to 1e-9 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_or_skip

# relative error (max abs difference / max abs output) in float32 epsilons: the module
# computes the SSD and the gated norm in float32 (measured: at most 2.0 ε₃₂ here)
BOUND_EPS32 = 64
EPS32 = float(np.finfo(np.float32).eps)

CONFIGS = [
    # n_groups, num_heads, head_dim, state_size, chunk_size, conv_kernel, bias, dt limit
    pytest.param(1, 4, 4, 5, 3, 4, True, None, id="G1-H4"),
    pytest.param(2, 4, 2, 3, 2, 3, False, None, id="G2-H4"),
    pytest.param(3, 6, 2, 4, 4, 4, True, (0.05, 0.8), id="G3-H6-dt-limit"),
]
LENGTHS = (1, 2, 7, 13)


def _mixer(torch, g, h, p, n, chunk, k, bias, limit, seed):
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import Mamba2Config
    from transformers.models.mamba2.modeling_mamba2 import Mamba2Mixer

    hidden = h * p // 2  # expand = 2: I = H·P
    extra = {} if limit is None else {"time_step_limit": limit}
    config = Mamba2Config(
        hidden_size=hidden,
        num_heads=h,
        head_dim=p,
        expand=2,
        n_groups=g,
        state_size=n,
        conv_kernel=k,
        chunk_size=chunk,
        use_bias=bias,
        use_conv_bias=bias,
        num_hidden_layers=1,
        vocab_size=8,
        layer_norm_epsilon=1e-5,
        **extra,
    )
    module = Mamba2Mixer(config, layer_idx=0).double().eval()
    assert module.intermediate_size == h * p
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in module.named_parameters():
            # every weight random (none left at its 0 / 1 / identity initialisation)
            scale = 0.4 if name.endswith(("weight", "bias")) else 1.0
            param.copy_(scale * torch.randn(param.shape, generator=gen, dtype=param.dtype))
    return module


def _forward(torch, module, x):
    with torch.no_grad():
        return module(torch.from_numpy(x)[None])[0].numpy()  # (L, hidden)


def _relative(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


@pytest.mark.oracle
@pytest.mark.parametrize(("g", "h", "p", "n", "chunk", "k", "bias", "limit"), CONFIGS)
def test_the_reader_computes_what_mamba2_mixer_computes(torch, g, h, p, n, chunk, k, bias, limit):
    from attention_math import hf
    from attention_math.hf import mamba2

    for seed in (0, 1):
        module = _mixer(torch, g, h, p, n, chunk, k, bias, limit, seed)
        read = {m: mamba2.layer(module, method=m) for m in ("recurrence", "attention", "chunked")}
        default = hf.layer(module)  # the dispatcher: chunked, the module's chunk size
        for length in LENGTHS:
            x = np.random.default_rng(100 * seed + length).standard_normal(
                (length, module.hidden_size)
            )
            want = _forward(torch, module, x)
            ours = {m: f(x) for m, f in read.items()}
            for m, y in ours.items():
                assert y.shape == want.shape and y.dtype == np.float64
                err = _relative(y, want) / EPS32
                assert err <= BOUND_EPS32, (m, seed, length, err)
                # the three computations of the SSD agree in float64
                assert _relative(y, ours["recurrence"]) <= 1e-9, (m, seed, length)
            np.testing.assert_array_equal(default(x), ours["chunked"])


@pytest.mark.oracle
def test_the_gate_comes_before_the_grouped_norm(torch):
    """The bound above tells the module's order from the other orders: norm(y · SiLU(z)) per
    group of I/G channels, not norm(y) · SiLU(z) and not one norm over all I channels."""
    from attention_math.block import rms_norm
    from attention_math.hf import mamba2

    module = _mixer(torch, 2, 4, 2, 3, 2, 3, True, None, seed=3)
    x = np.random.default_rng(3).standard_normal((9, module.hidden_size))
    want = _forward(torch, module, x)
    captured = {}
    handle = module.norm.register_forward_pre_hook(
        lambda _m, args: captured.update(y=args[0].numpy(), z=args[1].numpy())
    )
    _forward(torch, module, x)
    handle.remove()
    w = mamba2.Mamba2Weights(module)
    y, z = captured["y"][0], captured["z"][0]  # (L, I): the SSD output with its skip, the gate

    def out(normed):
        return normed * w.norm_w @ w.w_out + w.b_out

    def grouped(v):
        return rms_norm(v.reshape(9, 2, 4), eps=w.norm_eps).reshape(9, 8)

    right = out(grouped(y * mamba2.silu(z)))
    after = out(grouped(y) * mamba2.silu(z))
    whole = out(rms_norm(y * mamba2.silu(z), eps=w.norm_eps))
    assert _relative(right, want) / EPS32 <= BOUND_EPS32
    assert _relative(after, want) / EPS32 > 100 * BOUND_EPS32
    assert _relative(whole, want) / EPS32 > 100 * BOUND_EPS32
    assert _relative(mamba2.layer(module)(x), want) / EPS32 <= BOUND_EPS32


def test_bad_input_is_named():
    from types import SimpleNamespace as NS

    from attention_math.hf import mamba2

    lin = NS(weight=np.ones((3, 4)), bias=None)
    module = NS(
        num_heads=2, head_dim=2, n_groups=1, ssm_state_size=1, intermediate_size=4,
        chunk_size=2, activation="silu", time_step_limit=(0.0, float("inf")),
        in_proj=NS(weight=np.ones((4 + 4 + 2 + 2, 3)), bias=None), out_proj=lin,
        conv1d=NS(weight=np.ones((6, 1, 2)), bias=None), dt_bias=np.zeros(2),
        A_log=np.zeros(2), D=np.ones(2), norm=NS(weight=np.ones(4), variance_epsilon=1e-6,
        group_size=4),
    )  # fmt: skip
    f = mamba2.layer(module)
    assert f(np.zeros((2, 3))).shape == (2, 3)
    with pytest.raises(ValueError, match=r"x must have shape \(L, 3\), got \(2, 5\)"):
        f(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="method must be"):
        mamba2.layer(module, method="scan")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only SiLU"):
        mamba2.layer(NS(**{**vars(module), "activation": "relu"}))
