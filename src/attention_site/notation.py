"""The site's notation as data: one table of symbols and terms, and the rule for "uses".

The glossary page and the notation page print this table; a test extracts the symbols
from the math of every built page with [`symbols_in_tex`][attention_site.notation.symbols_in_tex]
and fails on any symbol that no entry defines ([`undefined`][attention_site.notation.undefined]).

What counts as a *symbol* in a piece of TeX: each of these, with its subscript, is one entry
of the list [`symbols_in_tex`][attention_site.notation.symbols_in_tex] returns
(``S_{ij}`` gives ``S_ij``, ``W_O`` gives ``W_O``):

- a Latin letter, a Greek letter (``\\alpha`` … ``\\Omega``, ``\\ell``), a letter in
  ``\\mathcal``, ``\\mathbb`` or ``\\mathbf``, or an ``\\operatorname`` name; a ``\\text``
  subscript is a *label*, kept as ``text:`` and the label (``P_{\\text{raw}}`` gives
  ``P_text:raw``);
- ``d`` written directly before a capital letter is one symbol, a gradient (``dO``, ``dS``);
- superscripts, primes and accents (``\\hat``, ``\\bar``) do not change the symbol (what a
  superscript holds, and what a big operator has under or over it, is read as symbols too);
  prose inside ``\\text{…}``, equation tags and labels, and TeX's own operators (``\\max``,
  ``\\log``, ``\\sum``) are not symbols.

[`undefined`][attention_site.notation.undefined] then reads the subscripts. A name that an
entry defines is defined. Otherwise an *index* subscript, one made only of digits, the letters
``c i j k l m n t``, the characters ``, : = < > + - '`` and the commands ``\\cdot``, ``\\ldots``
and ``\\le``, marks an entry of its base (``S_{ij}`` is an entry of ``S``); any other subscript
names a symbol of its own (``W_O`` and ``d_v`` must be defined as such); a label stands for its
base (``P_{\\text{raw}}`` is a ``P``) unless an entry defines the labelled name itself
(``d_{\\text{model}}``); and a symbol marked ``any_subscript`` takes any subscript.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from attention_site.address import page_url

__all__ = [
    "GROUPS",
    "SYMBOLS",
    "TERMS",
    "Symbol",
    "Term",
    "defined_names",
    "introduced_late",
    "meanings",
    "symbol_for",
    "symbols_in_tex",
    "symbols_table",
    "terms_list",
    "undefined",
]


@dataclass(frozen=True)
class Symbol:
    """One row of the notation table.

    ``names`` are the symbols it defines, in the form
    [`symbols_in_tex`][attention_site.notation.symbols_in_tex] returns; ``any_subscript`` lets the
    symbol carry any subscript (``m_T``, ``o_{T\\cup U}``).
    """

    tex: str
    names: tuple[str, ...]
    meaning: str
    shape: str = ""
    page: str = ""
    group: str = "The forward pass"
    any_subscript: bool = False


@dataclass(frozen=True)
class Term:
    """One word of the glossary: the term, its definition and the page that explains it."""

    word: str
    meaning: str
    page: str = ""


_F, _V, _N, _G, _M, _W, _P, _L, _R = (
    "The forward pass",
    "Dropout, other scores, symmetries",
    "Softmax and floating point",
    "Gradients",
    "Multi-head, cross-attention and positions",
    "Why it works: statistics",
    "Positions and decoding",
    "Long sequences",
    "Attention in 2025–26 models",
)

GROUPS: tuple[str, ...] = (_F, _V, _N, _G, _M, _W, _P, _L, _R)
"""The notation table's groups, in reading order. Notation and shapes shows the first: the
symbols of the forward pass itself; dropout, the other scoring functions and the
reparametrisation ``F`` are in the second, shown by the glossary."""

SYMBOLS: tuple[Symbol, ...] = (
    # the forward pass
    Symbol(
        r"$L$, $L_q$, $L_k$",
        ("L", "L_q", "L_k"),
        "a sequence length: the number of tokens, of queries ($L_q$), of keys ($L_k$)",
        page="forward/notation.md",
    ),
    Symbol(
        r"$d_{\text{model}}$",
        ("d_model",),
        "width of each input token vector",
        page="forward/notation.md",
    ),
    Symbol(r"$d_k$", ("d_k",), "width of queries and keys", page="forward/notation.md"),
    Symbol(r"$d_v$", ("d_v",), "width of values and of the output", page="forward/notation.md"),
    Symbol(
        r"$X$",
        ("X",),
        "the input, one token per row",
        r"$L \times d_{\text{model}}$",
        "forward/qkv.md",
    ),
    Symbol(
        r"$x$",
        ("x",),
        "an input: one token (a row of $X$), or in a general statement a vector or a variable "
        "(in a transformer block, the block's input)",
        page="forward/qkv.md",
    ),
    Symbol(
        r"$W_Q, W_K, W_V$",
        ("W_Q", "W_K", "W_V"),
        "learned projections that make queries, keys and values",
        r"$d_{\text{model}} \times d_k$ ($d_v$ for $W_V$)",
        "forward/qkv.md",
    ),
    Symbol(
        r"$Q, K, V$",
        ("Q", "K", "V"),
        "queries, keys, values: $Q = XW_Q$, $K = XW_K$, $V = XW_V$ (in cross-attention $K$ "
        "and $V$ come from another sequence)",
        r"$L_q \times d_k$, $L_k \times d_k$, $L_k \times d_v$ ($L_q = L_k = L$ in "
        r"self-attention)",
        "forward/qkv.md",
    ),
    Symbol(
        r"$q, k, v$",
        ("q", "k", "v"),
        "one query, key or value: a row of $Q$, $K$ or $V$",
        r"$d_k$, $d_k$, $d_v$",
        "forward/scores.md",
    ),
    Symbol(
        r"$S$",
        ("S",),
        r"scores, $S = QK^\top/\sqrt{d_k}$; a mask $M$ is added to them inside the softmax, "
        r"$P = \operatorname{softmax}(S + M)$ (Masking); $S_{ij}$ compares query $i$ with key $j$",
        r"$L_q \times L_k$",
        "forward/index.md",
    ),
    Symbol(
        r"$S_{\text{raw}}$",
        ("S_raw",),
        r"raw scores $QK^\top$, before the division by $\sqrt{d_k}$",
        r"$L_q \times L_k$",
        "forward/scores.md",
    ),
    Symbol(
        r"$s$",
        ("s",),
        "one row of scores, those of one query: the softmax's input",
        r"$L_k$",
        "forward/softmax.md",
    ),
    Symbol(
        r"$M$",
        ("M",),
        r"the mask: $0$ where attention is allowed, $-\infty$ where it is not",
        r"$L_q \times L_k$",
        "forward/masking.md",
    ),
    Symbol(
        r"$\operatorname{softmax}$",
        ("softmax",),
        r"$\operatorname{softmax}(s)_j = e^{s_j} / \sum_l e^{s_l}$, applied to each row",
        "keeps the shape",
        "forward/index.md",
    ),
    Symbol(
        r"$P$",
        ("P",),
        r"the attention weights, $P = \operatorname{softmax}(S + M)$ ($M = 0$ without a mask); "
        "each row sums to one",
        r"$L_q \times L_k$",
        "forward/index.md",
    ),
    Symbol(
        r"$p$",
        ("p",),
        "one row of weights, or the softmax of a vector; $p_j$ one weight",
        r"$L_k$",
        "forward/softmax.md",
    ),
    Symbol(
        r"$O$",
        ("O",),
        "the output, $O = PV$: each row a weighted average of the value rows",
        r"$L_q \times d_v$",
        "forward/index.md",
    ),
    Symbol(
        r"$\operatorname{attention}$, $\operatorname{Attn}$",
        ("attention", "Attention", "Attn"),
        r"the whole map $(Q, K, V) \mapsto \operatorname{softmax}(QK^\top/\sqrt{d_k} + M)\,V$",
        page="why/multi-head.md",
    ),
    Symbol(
        r"$i$, $j$, $l$",
        ("i", "j", "l"),
        "indices: $i$ a query (a row), $j$ and $l$ a key (a column) or a component",
        page="forward/notation.md",
    ),
    Symbol(r"$e$", ("e",), "Euler's number, the base of the exponential", page="forward/index.md"),
    Symbol(r"$I$", ("I",), "the identity matrix", page="forward/qkv.md"),
    Symbol(
        r"$\mathbf{1}$",
        (r"\mathbf{1}",),
        "a vector of ones",
        page="positions/modern-block.md",
        group=_P,
    ),
    # softmax and floating point
    Symbol(
        r"$z_t$",
        ("z",),
        r"the running normaliser $\sum_{j \le t} \varphi(k_j)$ of causal linear attention, "
        r"only that (a row of scores, logits included, is $s$)",
        r"$r$ ($r$ features)",
        "long/linear-attention.md",
        _L,
    ),
    Symbol(
        r"$\alpha$",
        (r"\alpha",),
        r"the score scale of the gradients chapter, $S = \alpha\, QK^\top + M$ "
        r"($\alpha = 1/\sqrt{d_k}$ by default), only that",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$a$",
        ("a",),
        r"one score, in the two-score softmax $\operatorname{softmax}(a, 0)$",
        page="forward/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$n$",
        ("n",),
        "a count: the length of a vector in a general statement, the number of sampled "
        "$(q, k)$ pairs (Why it works: scaling); $n_1, n_2, n_3$: the sizes of a matrix product "
        "($n_1 \\times n_2$ times $n_2 \\times n_3$, on Cost)",
        page="forward/dropout.md",
        group=_N,
    ),
    Symbol(
        r"$m$",
        ("m",),
        "the largest score of a row, subtracted before exponentiating; in the online softmax "
        "the running maximum (subscript: the keys it covers). Only ever a maximum",
        page="why/softmax.md",
        group=_N,
        any_subscript=True,
    ),
    Symbol(
        r"$t$",
        ("t",),
        "a score that varies (on Masking, a key's score sent to $-\\infty$), a shifted score "
        "$t_j = s_j - m \\le 0$, or a threshold",
        page="forward/masking.md",
        group=_N,
    ),
    Symbol(
        r"$c$",
        ("c",),
        "a constant added to or multiplying every score",
        page="forward/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$\operatorname{sigmoid}$",
        ("sigmoid",),
        r"the logistic sigmoid $\operatorname{sigmoid}(a) = e^a/(1 + e^a)$, the two-score "
        r"softmax, always written out ($\sigma$ is a standard deviation)",
        page="forward/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$\varepsilon$",
        (r"\varepsilon",),
        r"machine epsilon, the gap between $1$ and the next float: $2^{-52}$ in float64, "
        r"$2^{-23}$ in float32. Every error on the site is counted in $\varepsilon$",
        page="index.md",
        group=_N,
    ),
    Symbol(
        r"$u$",
        ("u",),
        r"the unit roundoff $u = \varepsilon/2$, the largest relative error of one rounding "
        "(the unit of the published error bounds)",
        page="why/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$N$",
        ("N",),
        "the number of significand bits of a float format (53 in float64)",
        page="why/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$r_{\max}$, $e_{\max}$",
        ("r_max", "e_max"),
        "the largest finite float, the largest exponent",
        page="why/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$r_{\min}$",
        ("r_min",),
        "the smallest positive (subnormal) float of a format",
        page="why/masks.md",
        group=_N,
    ),
    Symbol(
        r"$\operatorname{lse}$",
        ("lse",),
        r"log-sum-exp, $\log \sum_j e^{s_j}$",
        page="why/softmax.md",
        group=_N,
    ),
    Symbol(
        r"$\operatorname{round}$",
        ("round",),
        r"rounding to a number of decimals: $\operatorname{round}_2$, to two decimals (the "
        "precision the source prints)",
        page="examples/lets-go.md",
        group=_N,
    ),
    Symbol(
        r"$D$",
        ("D",),
        r"in the FlashAttention backward, the column $D = \operatorname{rowsum}(dO \circ O)$ "
        "($L_q$ entries); on the audit page, the distance between a published and the exact "
        "value, in units of the last printed digit",
        page="long/flash-backward.md",
        group=_N,
    ),
    # gradients
    Symbol(
        r"$\ell$",
        (r"\ell",),
        "the scalar loss (never $L$, which is a length)",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$dO, dS, dP, dV, dQ, dK, dX$",
        ("dO", "dS", "dP", "dV", "dQ", "dK", "dX", "dW_Q", "dW_K", "dW_V"),
        r"gradients of the loss: $dO = \partial\ell/\partial O$ (the upstream gradient), and so on",
        "the shape of the matrix",
        "gradients/index.md",
        _G,
    ),
    Symbol(
        r"$g$",
        ("g",),
        r"the upstream gradient of one row, $g = \partial \ell/\partial p$; in the symbolic "
        r"checks, $g_{ij}$ are the entries of the upstream gradient $dO$",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$J$",
        ("J",),
        r"the Jacobian of the softmax, $J = \operatorname{diag}(p) - pp^\top$",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$\delta_{ij}$",
        (r"\delta",),
        r"the Kronecker delta: $1$ if $i = j$, else $0$",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$\operatorname{diag}$",
        ("diag",),
        "the diagonal matrix of a vector",
        page="why/scaling.md",
        group=_G,
    ),
    Symbol(
        r"$\operatorname{rowsum}$",
        ("rowsum",),
        "the sums of the rows, as a column",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$\operatorname{tr}$",
        ("tr",),
        "the trace, the sum of the diagonal",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$\operatorname{eig}$",
        ("eig",),
        "the eigenvalues of a matrix",
        page="gradients/index.md",
        group=_G,
    ),
    Symbol(
        r"$\Delta$",
        (r"\Delta",),
        "an increment: a shift of position, $j \\mapsto j + \\Delta$ (sinusoidal encoding); the "
        "step of a finite difference (never $h$, which counts heads); NSA's stride between "
        "compression blocks; $\\Delta s_{ij}$, the change of a score by rounding",
        page="positions/sinusoidal.md",
        group=_G,
    ),
    Symbol(
        r"$C_1$, $C_2$",
        ("C",),
        "the constants of the truncation error $C_1\\Delta^2$ and the rounding error $C_2/\\Delta$",
        page="gradients/gradient-checking.md",
        group=_G,
    ),
    # multi-head, cross-attention, positions
    Symbol(
        r"$h$",
        ("h",),
        "the number of attention heads, only ever that",
        page="why/multi-head.md",
        group=_M,
    ),
    Symbol(
        r"$W_O$",
        ("W_O",),
        r"the output projection that recombines the heads; $W_O^{(i)}$ is the block of head $i$",
        r"$h\,d_v \times d_{\text{out}}$",
        "why/multi-head.md",
        _M,
    ),
    Symbol(
        r"$W_{QK}$, $W_{OV}$",
        ("W_QK", "W_OV"),
        r"a head's QK circuit $W_Q^{(i)} W_K^{(i)\top}$ (where it looks) and OV circuit "
        r"$W_V^{(i)} W_O^{(i)}$ (what it moves)",
        r"$d_{\text{model}} \times d_{\text{model}}$, $d_{\text{model}} \times d_{\text{out}}$",
        "attention-as.md",
        _M,
    ),
    Symbol(
        r"$W_E$, $W_U$",
        ("W_E", "W_U"),
        "a language model's token embedding (row $t$ is token $t$'s vector) and unembedding "
        "(column $t$ gives token $t$'s logit)",
        r"$\text{vocab} \times d_{\text{model}}$, $d_{\text{model}} \times \text{vocab}$",
        "model.md",
        _M,
    ),
    Symbol(
        r"$\operatorname{onehot}$",
        ("onehot",),
        "the tokens as rows of the identity: row $i$ is 1 at token $t_i$'s column, 0 elsewhere",
        r"$L \times \text{vocab}$",
        "model.md",
        _M,
    ),
    Symbol(
        r"$d_{\text{out}}$",
        ("d_out",),
        "width of the multi-head output",
        page="why/multi-head.md",
        group=_M,
    ),
    Symbol(
        r"$H_i$", ("H",), "the output of head $i$", r"$L_q \times d_v$", "why/multi-head.md", _M
    ),
    Symbol(
        r"$\operatorname{MultiHead}$, $\operatorname{Concat}$",
        ("MultiHead", "Concat"),
        "multi-head attention; the heads' outputs side by side",
        page="why/multi-head.md",
        group=_M,
    ),
    Symbol(
        r"$X_q$, $X_{kv}$",
        ("X_q", "X_kv"),
        "in cross-attention, the sequence the queries come from and the one keys "
        "and values come from",
        page="why/multi-head.md",
        group=_M,
    ),
    Symbol(r"$B$", ("B",), "the batch size", page="why/masks.md", group=_M),
    Symbol(
        r"$\Pi$",
        (r"\Pi",),
        "a permutation matrix (not $P$, which is the weights)",
        page="why/equivariance.md",
        group=_M,
    ),
    Symbol(
        r"$E$",
        ("E",),
        "positional encodings, one row per position, added to $X$",
        r"$L \times d_{\text{model}}$",
        "why/equivariance.md",
        _M,
    ),
    # statistics
    Symbol(
        r"$\mathbb{E}$, $\operatorname{Var}$, $\operatorname{Cov}$",
        (r"\mathbb{E}", "Var", "Cov"),
        "expectation, variance, covariance",
        page="forward/dropout.md",
        group=_W,
    ),
    Symbol(
        r"$\mu$, $\mu_q$, $\mu_k$",
        (r"\mu", r"\mu_q", r"\mu_k"),
        "a mean; of the query and key components",
        page="why/scaling.md",
        group=_W,
    ),
    Symbol(
        r"$\sigma$, $\sigma_q$, $\sigma_k$",
        (r"\sigma", r"\sigma_q", r"\sigma_k"),
        "a standard deviation; of the query and key components (only ever a standard "
        r"deviation: the sigmoid is written $\operatorname{sigmoid}$)",
        page="why/scaling.md",
        group=_W,
    ),
    Symbol(
        r"$\rho$, $\rho_q$, $\rho_k$",
        (r"\rho", r"\rho_q", r"\rho_k"),
        "a correlation; between components of a query, of a key",
        page="why/scaling.md",
        group=_W,
    ),
    Symbol(
        r"$\chi^2$", (r"\chi",), "the chi-squared distribution", page="why/scaling.md", group=_W
    ),
    # positions and decoding
    Symbol(
        r"$PE(j)$",
        ("PE",),
        r"the sinusoidal encoding of position $j$, added to the input (a row of $E$)",
        r"$d_{\text{model}}$",
        "positions/sinusoidal.md",
        _P,
    ),
    Symbol(
        r"$G(\Delta)$",
        ("G",),
        r"the block-diagonal rotation that shifts a sinusoidal encoding by $\Delta$ positions: "
        r"$PE(j + \Delta) = G(\Delta)\,PE(j)$",
        r"$d_{\text{model}} \times d_{\text{model}}$",
        "positions/sinusoidal.md",
        _P,
    ),
    Symbol(
        r"$\theta_i$",
        (r"\theta",),
        r"the frequency of pair $i$, $\theta_i = \text{base}^{-2i/d}$ (sinusoidal and RoPE); "
        r"$\theta$ alone, one frequency",
        "radians per position",
        "positions/sinusoidal.md",
        _P,
        any_subscript=True,
    ),
    Symbol(
        r"$d$",
        ("d",),
        r"a width: of the vectors an encoding or a rotation acts on ($d_{\text{model}}$ or "
        r"$d_k$, even), or of one head when $d_k = d_v = d$ (in cost statements)",
        page="why/cost.md",
        group=_P,
    ),
    Symbol(
        r"$x_{i + d/2}$",
        ("x_i+d/2",),
        r"the coordinate that RoPE's default layout pairs with $x_i$",
        page="positions/rope.md",
        group=_P,
    ),
    Symbol(
        r"$R(i)$",
        ("R",),
        r"RoPE's block-diagonal rotation of the token at position $i$ (positions count from "
        r"$0$), by the angles $i\,\theta_l$: $q_i \mapsto R(i)\,q_i$, $k_j \mapsto R(j)\,k_j$",
        r"$d \times d$",
        "positions/rope.md",
        _P,
    ),
    Symbol(
        r"$\operatorname{rot}(\vartheta)$",
        ("rot", r"\vartheta"),
        r"one $2 \times 2$ rotation by the angle $\vartheta$",
        r"$2 \times 2$",
        "exercises/positions.md",
        _P,
    ),
    Symbol(
        r"$\beta_k$",
        (r"\beta",),
        r"the ALiBi slope of head $k$: its scores get the bias $-\beta_k \lvert i - j \rvert$",
        "scalar",
        "positions/alibi.md",
        _P,
    ),
    Symbol(
        r"$w$; $A$",
        ("w", "A"),
        r"a sliding window of $w$ keys (only ever the window): query $i$ sees keys "
        r"$i - w + 1, \ldots, i$; the 0/1 matrix of "
        "allowed (query, key) pairs of a boolean mask",
        r"$A$: $L \times L$",
        "positions/sliding-window.md",
        _P,
    ),
    Symbol(
        r"$f$; $L_{\text{train}}$, $L_{\text{test}}$",
        ("f", "L_text:train", "L_text:test"),
        r"context extension: the factor $L_{\text{test}}/L_{\text{train}}$ by which a model "
        r"trained on $L_{\text{train}}$ tokens is stretched (`factor` of a `rope_scaling` "
        "dictionary)",
        page="positions/long-context.md",
        group=_P,
    ),
    Symbol(
        r"$\theta'_i$; $\gamma_i$; $\beta_{\text{fast}}$, $\beta_{\text{slow}}$",
        (r"\gamma_i", r"\beta_text:fast", r"\beta_text:slow"),
        r"a scaled frequency; YaRN's ramp ($0$: pair $i$ kept, $1$: divided by $f$), which "
        r"runs between the pairs that turn $\beta_{\text{fast}}$ and $\beta_{\text{slow}}$ "
        "times over the original context",
        page="positions/long-context.md",
        group=_P,
        any_subscript=True,
    ),
    Symbol(
        r"$\eta_k$; $S_j(\Delta)$; $\operatorname{Re}$",
        (r"\eta", "S_j", "Re"),
        r"RoFormer's long-term decay, at a relative distance $\Delta$: pair $k$ of a query "
        r"times the conjugate of pair $k$ of a key, as complex numbers; the partial sum "
        r"$\sum_{k<j} e^{i \Delta \theta_k}$; the real part",
        page="positions/long-context.md",
        group=_P,
        any_subscript=True,
    ),
    Symbol(
        r"$p_{\text{drop}}$; $\xi$",
        ("p_text:drop", "p_drop", r"\xi"),
        r"dropout: the probability that a weight is dropped; the mask, $\xi_{ij} = 1$ "
        r"(kept) with probability $1 - p_{\text{drop}}$, else $0$",
        r"$\xi$: $L_q \times L_k$",
        "forward/dropout.md",
        _V,
        any_subscript=True,
    ),
    Symbol(
        r"$\operatorname{RMSNorm}$; $\operatorname{rms}$",
        ("RMSNorm", "rms"),
        r"RMSNorm: a token divided by the root mean square of its coordinates, "
        r"$\operatorname{rms}(x) = \sqrt{\sum_i x_i^2 / d}$, times a gain $\gamma$ (LayerNorm "
        r"without subtracting the mean)",
        page="positions/modern-block.md",
        group=_P,
    ),
    Symbol(
        r"$\operatorname{SwiGLU}$; $\operatorname{SiLU}$",
        ("SwiGLU", "SiLU"),
        r"the gated feed-forward network $(\operatorname{SiLU}(x W_{\text{gate}}) \odot "
        r"x W_{\text{up}}) W_{\text{down}}$; "
        r"$\operatorname{SiLU}(x) = x\,\operatorname{sigmoid}(x)$",
        page="positions/modern-block.md",
        group=_P,
    ),
    Symbol(
        r"$\gamma_q$, $\gamma_k$; $\hat q$, $\hat k$",
        (r"\gamma_q", r"\gamma_k"),
        "QK-norm: the RMSNorm gains of each head's queries and keys; a query and a key after "
        "that norm",
        r"$d$",
        "positions/modern-block.md",
        _P,
    ),
    Symbol(
        r"$h_{kv}$",
        ("h_kv",),
        "the number of key/value heads in grouped-query attention ($1$: multi-query "
        "attention; $h$: multi-head attention)",
        page="positions/kv-cache.md",
        group=_P,
    ),
    Symbol(
        r"$d_{\text{head}}$",
        ("d_head",),
        "the width of one head's queries, keys and values",
        page="positions/kv-cache.md",
        group=_P,
    ),
    Symbol(
        r"$n_{\text{layers}}$, $n_{\text{bytes}}$",
        ("n_layers", "n_bytes"),
        "the number of layers (blocks) of a model; bytes per stored number (2 in 16-bit formats)",
        page="positions/kv-cache.md",
        group=_P,
    ),
    Symbol(
        r"$\pi$",
        ("\\pi",),
        r"the circle constant: a half turn is $\pi$ radians",
        page="why/heads.md",
        group=_M,
    ),
    Symbol(
        r"$\psi_{i-j}$",
        (r"\psi",),
        "a learned relative bias: one number per offset $i - j$, added to the scores",
        page="gradients/bias.md",
        group=_M,
        any_subscript=True,
    ),
    Symbol(
        r"$dM$",
        ("dM",),
        r"the gradient of the loss with respect to an additive mask or bias on the scores, "
        r"$\partial \ell / \partial M$; it equals $dS$",
        page="gradients/bias.md",
        group=_G,
    ),
    Symbol(
        r"$M_{\text{SRAM}}$",
        ("M_SRAM",),
        "the size of a GPU's fast on-chip memory (SRAM), in numbers, in FlashAttention's IO "
        "analysis (not the mask $M$)",
        page="long/io.md",
        group=_L,
    ),
    Symbol(
        r"$B_r$, $B_c$",
        ("B_r", "B_c"),
        "FlashAttention's block sizes: the query rows and the key rows of one tile",
        page="long/io.md",
        group=_L,
    ),
    Symbol(
        r"$\mathcal{A}$",
        (r"\mathcal{A}",),
        r"the HBM accesses of an attention kernel, numbers read from or written to HBM, one "
        r"head: $\mathcal{A}_{\text{standard}}$, $\mathcal{A}_{\text{FA}}$, "
        r"$\mathcal{A}_{\text{FA-2}}$",
        page="long/io.md",
        group=_L,
    ),
    Symbol(
        r"$\Theta$",
        ("\\Theta",),
        r"the order of growth: $\Theta(L^2)$ is a quantity that stays between two positive "
        r"multiples of $L^2$ as $L$ grows",
        page="long/io.md",
        group=_L,
    ),
    Symbol(
        r"$W_{\text{read}}$",
        ("W_read",),
        "the weights a model reads from memory to decode one token (every layer and the "
        "output head)",
        page="positions/decoding-cost.md",
        group=_P,
    ),
    Symbol(
        r"$n_{\text{block}}$",
        ("n_block",),
        "PagedAttention's block size: the positions of the KV cache one block holds",
        page="positions/decoding-cost.md",
        group=_P,
    ),
    Symbol(
        r"$\operatorname{softmax}_1$",
        ("softmax_1",),
        r"softmax with an extra zero logit, $e^{s_i} / (1 + \sum_j e^{s_j})$; its weights "
        "may sum to less than one",
        "keeps the shape",
        "positions/sinks.md",
        _P,
    ),
    Symbol(
        r"$\operatorname{LN}$, $\gamma$",
        ("LN", r"\gamma"),
        "LayerNorm: each token shifted to mean $0$ and scaled to variance $1$, then multiplied "
        r"by the learned gain $\gamma$ (and shifted by a learned bias); $\operatorname{LN}_1$, "
        r"$\operatorname{LN}_2$: the block's two",
        r"keeps the shape; $\gamma$: $d_{\text{model}}$",
        "positions/block.md",
        _P,
    ),
    Symbol(
        r"$\operatorname{MHA}$, $\operatorname{FFN}$, $\operatorname{act}$",
        ("MHA", "FFN", "act"),
        "multi-head attention; the position-wise feed-forward network "
        r"$\operatorname{act}(x W_1 + b_1) W_2 + b_2$; its activation (ReLU or GELU)",
        "keeps the shape",
        "positions/block.md",
        _P,
    ),
    Symbol(
        r"$W_1, W_2$, $b_1, b_2$",
        ("W_1", "W_2", "b_1", "b_2"),
        "the weights and biases of the feed-forward network's two layers",
        r"$d_{\text{model}}$ × the feed-forward width, that width × $d_{\text{model}}$",
        "positions/block.md",
        _P,
    ),
    Symbol(
        r"$\mathbb{R}$",
        (r"\mathbb{R}",),
        r"the real numbers ($\mathbb{R}^3$: vectors of three reals)",
        page="positions/block.md",
        group=_P,
    ),
    # long sequences
    Symbol(
        r"$T$, $U$",
        ("T", "U"),
        "sets of key positions: the tiles of the online softmax",
        page="long/online-softmax.md",
        group=_L,
    ),
    Symbol(
        r"$\lambda$",
        (r"\lambda",),
        r"the softmax's denominator, the row sum $\lambda = \sum_j e^{s_j - m}$; in the online "
        r"softmax the running one, $\lambda_T = \sum_{j\in T} e^{s_j - m_T}$ "
        r"(never $\ell$, the loss)",
        page="why/cost.md",
        group=_L,
        any_subscript=True,
    ),
    Symbol(
        r"$o$",
        ("o",),
        r"one output row, a row of $O$ (on the online-softmax page also the unnormalised "
        r"running output $\sum_j e^{s_j - m} v_j$)",
        r"$d_v$",
        "forward/weighted-sum.md",
        _F,
        any_subscript=True,
    ),
    Symbol(
        r"$b$",
        ("b",),
        "a shift subtracted from a row of scores in place of its maximum",
        page="long/online-softmax.md",
        group=_L,
    ),
    # other views of attention: kernels, scoring functions, circuits, linear attention
    Symbol(
        r"$W_a, U_a, w_a$",
        ("W_a", "U_a", "w_a"),
        r"the weights of Bahdanau's additive score $w_a^\top \tanh(W_a q + U_a k)$, a "
        r"network with one hidden layer (the paper's $W_a$ and $U_a$; its third, `v_a`, is "
        r"$w_a$ here, since $v$ is a value)",
        "hidden width × query width, hidden width × key width; hidden width",
        "forward/scores.md",
        _V,
    ),
    Symbol(
        r"$W$",
        ("W",),
        r"the matrix of a bilinear score $q W k^\top$; dot-product attention's is "
        r"$W = W_Q W_K^\top$ on the inputs $x$, times $1/\sqrt{d_k}$ once scaled (or "
        r"$I/\sqrt{d_k}$ on $q$ and $k$ themselves)",
        "query width × key width",
        "forward/scores.md",
        _V,
    ),
    Symbol(
        r"$F$",
        ("F",),
        r"an invertible matrix: $W_Q \to W_Q F$, $W_K \to W_K F^{-\top}$ leaves every score "
        "unchanged",
        r"$d_k \times d_k$",
        "forward/qkv.md",
        _V,
    ),
    Symbol(
        r"$P^{(i)}$",
        (),
        "the attention weights of head $i$ (the superscript names the head; the symbol is $P$)",
        r"$L_q \times L_k$",
        "attention-as.md",
        _M,
    ),
    Symbol(
        r"$y$, $y_i$, $\hat y$",
        ("y",),
        "in kernel regression, the observed values (the values of attention) and the estimate",
        page="attention-as.md",
        group=_W,
        any_subscript=True,
    ),
    Symbol(
        r"$\kappa$",
        (r"\kappa",),
        r"the Gaussian kernel of kernel regression, $\kappa(x - x_i) = e^{-(x - x_i)^2/(2\tau^2)}$",
        page="attention-as.md",
        group=_W,
    ),
    Symbol(
        r"$\tau$",
        (r"\tau",),
        r"the bandwidth of the kernel (never $h$, which counts heads); $1/\tau^2$ plays the "
        r"part of $1/\sqrt{d_k}$",
        "scalar",
        "forward/scores.md",
        _W,
    ),
    Symbol(
        r"$\mathcal{N}(0, I)$",
        (r"\mathcal{N}",),
        "the standard normal distribution",
        page="long/linear-attention.md",
        group=_W,
    ),
    Symbol(
        r"$\mathbb{E}_q$",
        (r"\mathbb{E}_q",),
        r"expectation over the query $q$, as in "
        r"$\mathbb{E}_q \operatorname{Var}(q \cdot k \mid q)$: the spread within a row, "
        "averaged over queries",
        page="why/scaling.md",
        group=_W,
    ),
    Symbol(
        r"$\mathbb{E}_\omega$",
        (r"\mathbb{E}_omega",),
        r"expectation over the random direction $\omega$",
        page="long/linear-attention.md",
        group=_W,
    ),
    Symbol(
        r"$\varphi$, $\varphi_\omega$, $\varphi_\Omega$",
        (r"\varphi",),
        r"a feature map, linear attention's replacement for $e^{q\cdot k}$ by "
        r"$\varphi(q)\cdot\varphi(k)$; $\varphi_\omega$, $\varphi_\Omega$: Performer's random "
        r"features for one direction $\omega$, for the $r$ rows of $\Omega$",
        r"$r$ features per row",
        "long/linear-attention.md",
        _L,
        any_subscript=True,
    ),
    Symbol(
        r"$r$",
        ("r",),
        r"the number of random features of Performer's estimate (the rows of $\Omega$)",
        page="long/linear-attention.md",
        group=_L,
    ),
    Symbol(
        r"$\omega$; $\Omega$",
        (r"\omega", r"\Omega"),
        r"Performer's random direction, $\omega \sim \mathcal{N}(0, I)$ (the paper's name); "
        r"$r$ of them stacked as the rows of $\Omega$ (not the window $w$)",
        r"$d$; $r \times d$",
        "long/linear-attention.md",
        _L,
    ),
    Symbol(
        r"$\mathcal{S}_t$",
        (r"\mathcal{S}",),
        r"the running state $\sum_{j \le t} \varphi(k_j) v_j^\top$ of causal linear attention",
        r"$r \times d_v$ ($r$ features)",
        "long/linear-attention.md",
        _L,
    ),
    Symbol(
        r"$\operatorname{elu}$",
        ("elu",),
        r"the exponential linear unit, $x$ for $x > 0$ and $e^x - 1$ otherwise",
        page="long/linear-attention.md",
        group=_L,
    ),
    # attention in 2025-26 models
    Symbol(
        r"$\operatorname{RoPE}_t$",
        ("RoPE",),
        r"RoPE as a map: the rotation $R(t)$ of a token at position $t$ (MLA's decoupled key "
        r"and query)",
        "keeps the shape",
        "recent/latent.md",
        _R,
    ),
    Symbol(
        r"$n_h$, $n_g$",
        ("n_h", "n_g"),
        r"DeepSeek-V2's names for the number of query heads ($h$ elsewhere on the site) and of "
        r"key/value groups ($h_{kv}$ elsewhere)",
        page="recent/latent.md",
        group=_R,
    ),
    Symbol(
        r"$d_h$; $d_c$, $d_R$",
        ("d_h", "d_R"),
        r"MLA's widths, as DeepSeek-V2 names them: of one head ($d_{\text{head}}$ elsewhere); "
        r"of the cached latent $c^{KV}$ and of the decoupled RoPE key $k^R$",
        page="recent/latent.md",
        group=_R,
    ),
    Symbol(
        r"$s_{\text{sink}}$; $p_{\text{sink}}$",
        ("s_sink",),
        r"gpt-oss's learned sink logit of a head, an extra column of every row of scores that "
        r"is dropped after the softmax; the weight it takes, "
        r"$\operatorname{sigmoid}(s_{\text{sink}} - \operatorname{lse}(s))$",
        "scalar",
        "recent/sinks-gates.md",
        _R,
    ),
    Symbol(
        r"$W_\theta$",
        ("W_theta",),
        r"the weights of Qwen3-Next's output gate: the gate is "
        r"$\operatorname{sigmoid}(x W_\theta)$, one number per head and coordinate",
        r"$d_{\text{model}} \times h\,d_v$",
        "recent/sinks-gates.md",
        _R,
    ),
    Symbol(
        r"$\operatorname{ReLU}$",
        ("ReLU",),
        r"the rectified linear unit, $\max(0, x)$",
        page="recent/sparse.md",
        group=_R,
    ),
    Symbol(
        r"$p_{\bar S}$",
        ("p_S",),
        r"the discarded mass of top-k attention: the dense weight $\sum_{j \notin S} p_j$ of "
        r"the keys not kept (never $\varepsilon$, which is machine epsilon)",
        "scalar",
        "recent/sparse.md",
        _R,
    ),
    Symbol(
        r"$I_{t,s}$; $k_s$",
        ("I_t,s", "k_s"),
        r"DeepSeek Sparse Attention's index score of key $s$ for query $t$ (the paper's name); "
        r"$k_s$, the indexer's key at position $s$",
        "scalar",
        "recent/sparse.md",
        _R,
    ),
    Symbol(
        r"$\mathbf{L}$",
        (r"\mathbf{L}",),
        r"state-space duality's decay mask (Mamba-2's name, in bold: a matrix, not the length "
        r"$L$), $\mathbf{L}_{ij} = a_{j+1} \cdots a_i$ for $i \ge j$ and $0$ above the diagonal",
        r"$L \times L$",
        "recent/ssd.md",
        _R,
    ),
)
"""Every symbol the site uses: its meaning, shape and where it first appears."""

TERMS: tuple[Term, ...] = (
    Term(
        "attention",
        "A layer in which every token looks at the others and takes a weighted average "
        "of what they carry.",
        "index.md",
    ),
    Term(
        "token",
        "One position of the sequence: a word or part of a word, as a vector (a row of $X$).",
        "forward/notation.md",
    ),
    Term(
        "query, key, value",
        "Three views of each token: what it looks for, what it offers to be found by, "
        "what it hands over.",
        "forward/qkv.md",
    ),
    Term(
        "scores",
        "The matrix $S$: each query compared with each key by a dot product, then scaled; "
        "a mask, if any, is added to it inside the softmax.",
        "forward/scores.md",
    ),
    Term(
        "softmax",
        "The function that turns a row of scores into positive weights summing to one.",
        "forward/softmax.md",
    ),
    Term(
        "attention weights",
        "The matrix $P$: how much each query looks at each key.",
        "forward/softmax.md",
    ),
    Term(
        "causal mask",
        "The mask that stops a token from attending to later tokens.",
        "forward/masking.md",
    ),
    Term(
        "padding mask", "The mask that stops every token from attending to padding.", "why/masks.md"
    ),
    Term(
        "key padding mask",
        "PyTorch's mask with one entry per key, True = padding: the opposite sense of a "
        "boolean mask here, where True = may attend.",
        "reference/coming-from-pytorch.md",
    ),
    Term(
        "additive mask",
        "A float mask added to the scores: −∞ blocks a key, a finite value biases "
        "it (ALiBi's fixed distance penalty, or a learned bias such as T5's).",
        "reference/coming-from-pytorch.md",
    ),
    Term(
        "causal alignment",
        "Where the causal diagonal sits when queries and keys differ in number: top-left "
        "(query i sees keys up to i) or bottom-right (the last query sees every key).",
        "reference/coming-from-pytorch.md",
    ),
    Term(
        "bfloat16",
        "A 16-bit float with float32's exponent range and 8 bits of precision; "
        "computed here in float32.",
        "reference/coming-from-pytorch.md",
    ),
    Term(
        "convex hull",
        "All weighted averages of some points with non-negative weights summing to one: "
        "where each output row lies.",
        "forward/weighted-sum.md",
    ),
    Term(
        "head",
        "One attention computed with its own projections; $h$ heads run side by side "
        "and $W_O$ recombines them.",
        "why/multi-head.md",
    ),
    Term(
        "cross-attention",
        "Attention whose queries come from one sequence and keys and values from another.",
        "why/multi-head.md",
    ),
    Term(
        "encoder, decoder",
        "Two kinds of transformer. An encoder (BERT) reads a whole sequence with no mask: every "
        "token sees every token. A decoder (GPT) generates one token at a time, so a causal mask "
        "lets each token see only itself and earlier tokens. An encoder–decoder model (a "
        "translator) has both; its decoder reads the encoder's output by cross-attention.",
        "positions/block.md",
    ),
    Term(
        "equivariance",
        "Permuting the input rows permutes the output rows the same way.",
        "why/equivariance.md",
    ),
    Term(
        "machine epsilon",
        r"$\varepsilon$, the gap between $1$ and the next float.",
        "index.md",
    ),
    Term(
        "ULP",
        "Unit in the last place: the gap between a float and the next one.",
        "positions/rope.md",
    ),
    Term("float64, float32", "The IEEE 754 double and single precision formats.", "why/softmax.md"),
    Term(
        "crosscheck",
        "Comparing an exact SymPy result with the NumPy one; the build fails if they "
        "differ by more than a bound.",
        "forward/index.md",
    ),
    Term(
        "tile",
        "A block of keys (or queries) processed together by the online softmax.",
        "long/online-softmax.md",
    ),
    Term(
        "online softmax",
        "The softmax computed one tile at a time, keeping only $(m, \\lambda, o)$ per row.",
        "long/online-softmax.md",
    ),
    Term(
        "upstream gradient",
        r"$dO = \partial \ell / \partial O$, handed to attention by the layers above it.",
        "gradients/index.md",
    ),
    Term(
        "central difference",
        r"$(\ell(x + \Delta) - \ell(x - \Delta)) / (2\Delta)$, a numerical derivative.",
        "gradients/gradient-checking.md",
    ),
    Term("FLOP", "One floating-point addition or multiplication.", "why/cost.md"),
    Term(
        "KV cache",
        "The keys and values of the tokens seen so far, kept by a decoder so that each new "
        "token computes only its own.",
        "positions/kv-cache.md",
    ),
    Term(
        "residual stream",
        r"The $L \times d_{\text{model}}$ array that a transformer's blocks add their outputs to.",
        "positions/block.md",
    ),
)
"""The glossary: every term with its definition (the hover text on every page)."""

_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
    "xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
    "Phi Psi Omega ell".split()
)
_INDEX = re.compile(r"^(?:[0-9cijklmnt,:=<>+'-]|\\?cdot|\\?ldots|\\?le)+$")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf|textit|texttt)\s*\{([^{}]*)\}")
_DROP = re.compile(r"\\(?:tag|label|eqref|ref|begin|end)\s*\{[^{}]*\}")
_OPNAME = re.compile(r"\\operatorname\*?\s*\{([^{}]*)\}")
_FONT = re.compile(r"\\(mathcal|mathbb|mathbf|boldsymbol)\s*(?:\{\s*(\w)\s*\}|(\w))")
_ACCENT = re.compile(r"\\(?:hat|tilde|bar|vec|overline|dot)\b\s*(?:\{\s*([^{}]*?)\s*\}|)")
_GROUP = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_SCRIPT = rf"(?:\s*[_^]\s*(?:{_GROUP}|\\[A-Za-z]+|\x00\w*\x01|[^\s{{}}\\]))"
_TOKEN = re.compile(rf"(d(?=[A-Z])[A-Z]|\\[A-Za-z]+|\x02\d+\x03|[A-Za-z])((?:{_SCRIPT}|')*)")


# what a formula writes inside a superscript, and under or over a big operator: read too
_SUPERSCRIPT = re.compile(rf"\^\s*({_GROUP}|\\[A-Za-z]+|[^\s{{}}\\])")
_OPERATOR_SCRIPT = re.compile(
    rf"\\(?:sum|prod|max|min|lim|sup|inf|argmax|argmin|int|bigcup|bigcap)\s*_\s*"
    rf"({_GROUP}|[^\s{{}}\\])"
)


def _inner(tex: str) -> list[str]:
    """The TeX inside each top-level superscript and each big operator's subscript."""
    found = [m.group(1) for p in (_SUPERSCRIPT, _OPERATOR_SCRIPT) for m in p.finditer(tex)]
    return [g[1:-1] if g.startswith("{") else g for g in found]


def _subscript(scripts: str) -> str | None:
    """The first top-level subscript in a run of sub- and superscripts, without braces."""
    for m in re.finditer(rf"([_^])\s*({_GROUP}|\\[A-Za-z]+|\x00\w*\x01|[^\s{{}}\\])", scripts):
        if m.group(1) == "_":
            sub = m.group(2)
            if sub.startswith("{"):
                sub = sub[1:-1]
            return re.sub(r"\s+", "", sub)
    return None


def symbols_in_tex(tex: str) -> list[str]:
    """The symbols a piece of TeX uses, in order, by the rule in this module's docstring.

    Every subscript is kept, ``base_subscript`` without braces or backslashes, an index
    (``P_ij``) as well as a name (``W_O``); a ``\\text`` label becomes ``base_text:label``.
    Reading an index subscript as an entry of its base, and a label as its base, is left to
    [`undefined`][attention_site.notation.undefined].

    What a superscript holds, and what a big operator has under and over it, is read too,
    after the symbols outside (``e^{s_j - m}`` gives ``e``, then ``s_j`` and ``m``); an
    accent is dropped, braced or not (``\\hat{P}_{ij}`` is ``P_ij``).

    Examples:
        >>> from attention_site.notation import symbols_in_tex
        >>> symbols_in_tex(r"P_{ij} = \\operatorname{softmax}(S)_{ij}, \\quad O = P V")
        ['P_ij', 'softmax', 'S', 'i', 'j', 'O', 'P', 'V']
        >>> symbols_in_tex(r"d_{\\text{model}}, W_O^{(1)}, dO, \\ell(x + \\Delta) \\text{at } i")
        ['d_text:model', 'W_O', 'dO', '\\\\ell', 'x', '\\\\Delta', 'i']
        >>> symbols_in_tex(r"\\sum_{l=1}^{n} e^{\\hat{s}_l - m}")
        ['e', 'n', 's_l', 'm', 'l']
    """
    t = tex.strip()
    t = re.sub(r"^\\[(\[]|\\[)\]]$", "", t)
    inner = _inner(_DROP.sub(" ", t))
    t = _DROP.sub(" ", t)
    t = _TEXT.sub(lambda m: "\x00" + re.sub(r"\W", "", m.group(1)) + "\x01", t)
    found: list[str] = []

    def opname(m: re.Match[str]) -> str:
        found.append(m.group(1).strip())
        return f"\x02{len(found) - 1}\x03"

    t = _OPNAME.sub(opname, t)
    fonts: list[str] = []

    def font(m: re.Match[str]) -> str:
        fonts.append(f"\\{m.group(1)}{{{m.group(2) or m.group(3)}}}")
        return f"\x04{len(fonts) - 1}\x05"

    t = _FONT.sub(font, t)
    t = _ACCENT.sub(lambda m: m.group(1) or "", t)
    t = re.sub(r"(?<!_)(?<!_\{)\x00\w*\x01", " ", t)  # prose in \text, not a subscript
    out: list[str] = []
    pos = 0
    for m in re.finditer(rf"\x04(\d+)\x05((?:{_SCRIPT}|')*)|{_TOKEN.pattern}", t):
        if m.start() < pos:
            continue
        pos = m.end()
        if m.group(1) is not None:
            base, scripts = fonts[int(m.group(1))], m.group(2)
        else:
            base, scripts = m.group(3), m.group(4)
            if base.startswith("\x02"):
                base = found[int(base[1:-1])]
            elif base.startswith("\\"):
                if base[1:] not in _GREEK:
                    continue
        sub = _subscript(scripts)
        if sub is None:
            out.append(base)
        elif sub.startswith("\x00") and sub.endswith("\x01"):
            out.append(f"{base}_text:{sub[1:-1]}")
        else:
            out.append(f"{base}_{sub.replace(chr(92), '')}")
    for script in inner:
        out += symbols_in_tex(script)
    return out


def defined_names() -> frozenset[str]:
    """Every symbol name some entry of ``SYMBOLS`` defines.

    Examples:
        >>> from attention_site.notation import defined_names
        >>> {"P", "W_O", "dO", r"\\ell"} <= defined_names()
        True
    """
    return frozenset(n for s in SYMBOLS for n in s.names)


def undefined(used: Iterable[str]) -> list[str]:
    """The symbols in ``used`` (from [`symbols_in_tex`][attention_site.notation.symbols_in_tex])
    that no glossary entry defines.

    Examples:
        >>> from attention_site.notation import undefined
        >>> undefined(["P", "P_text:raw", "d_text:model", "m_T", "W_O", "Y", "W_Z"])
        ['Y', 'W_Z']
    """
    names = defined_names()
    free = {n for s in SYMBOLS if s.any_subscript for n in s.names}
    missing: list[str] = []
    for name in used:
        base, _, sub = name.partition("_")
        if name in names or (sub and base in free) or (_INDEX.match(sub) and base in names):
            continue
        if sub.startswith("text:") and (f"{base}_{sub[5:]}" in names or base in names):
            continue
        if name not in missing:
            missing.append(name)
    return missing


def symbol_for(name: str) -> Symbol | None:
    """The one entry that defines ``name`` (from
    [`symbols_in_tex`][attention_site.notation.symbols_in_tex]), by the rule of
    [`undefined`][attention_site.notation.undefined]; ``None`` if none does.

    Examples:
        >>> from attention_site.notation import symbol_for
        >>> symbol_for("P_ij").page, symbol_for("m_T").page, symbol_for("Y") is None
        ('forward/index.md', 'why/softmax.md', True)
    """
    exact = [s for s in SYMBOLS if name in s.names]
    if exact:
        return exact[0]
    base, _, sub = name.partition("_")
    if sub.startswith("text:"):
        labelled = [s for s in SYMBOLS if f"{base}_{sub[5:]}" in s.names]
        if labelled:
            return labelled[0]
    if sub:
        for s in SYMBOLS:
            if base in s.names and (
                s.any_subscript or _INDEX.match(sub) or sub.startswith("text:")
            ):
                return s
    return None


def meanings() -> dict[str, list[Symbol]]:
    """Each symbol name with every entry that defines it: one entry each, or a name has
    two meanings.

    Examples:
        >>> from attention_site.notation import meanings
        >>> [s.page for s in meanings()["m"]]
        ['why/softmax.md']
    """
    out: dict[str, list[Symbol]] = {}
    for s in SYMBOLS:
        for n in s.names:
            out.setdefault(n, []).append(s)
    return out


def introduced_late(pages: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """``"page: symbol (introduced on later page)"`` for each symbol a page uses before the page
    that introduces it. ``pages`` are (page, symbols used) in reading order (the nav); an entry
    whose page is not among them (an exercise, a reference page) is not checked.

    Examples:
        >>> from attention_site.notation import introduced_late
        >>> introduced_late([("forward/index.md", ["P_ij"]), ("forward/qkv.md", ["W_Q"])])
        []
        >>> introduced_late([("forward/notation.md", ["W_Q"]), ("forward/qkv.md", [])])
        ['forward/notation.md: W_Q (introduced on forward/qkv.md)']
    """
    listed = list(pages)
    order = {page: i for i, (page, _) in enumerate(listed)}
    late: list[str] = []
    for page, used in listed:
        for name in used:
            s = symbol_for(name)
            if s is None or s.page not in order or order[s.page] <= order[page]:
                continue
            msg = f"{page}: {name} (introduced on {s.page})"
            if msg not in late:
                late.append(msg)
    return late


_TITLES = {
    "index.md": "Home",
    "attention-as.md": "Attention as …",
    "forward/index.md": "The forward pass",
    "reference/coming-from-pytorch.md": "Coming from PyTorch, d2l or Hugging Face",
    "forward/notation.md": "Notation and shapes",
    "forward/qkv.md": "Queries, keys, values",
    "forward/scores.md": "Scores",
    "forward/masking.md": "Masking",
    "forward/softmax.md": "Softmax",
    "forward/weighted-sum.md": "Weighted sum",
    "forward/formula.md": "The complete formula",
    "examples/identity-2x2.md": "The 2×2 identity example",
    "examples/lets-go.md": "“⟨SOS⟩ let's go”",
    "why/softmax.md": "Softmax stability",
    "why/masks.md": "Masks",
    "why/multi-head.md": "Multi-head",
    "why/equivariance.md": "Equivariance",
    "why/scaling.md": "Why it works: scaling",
    "why/cost.md": "Cost",
    "gradients/index.md": "Gradients",
    "gradients/gradient-checking.md": "Gradient checking",
    "long/online-softmax.md": "The online softmax",
    "audit.md": "Audit",
    "positions/sinusoidal.md": "Sinusoidal encoding",
    "positions/rope.md": "RoPE",
    "positions/alibi.md": "ALiBi",
    "positions/kv-cache.md": "The KV cache",
    "positions/sliding-window.md": "Sliding windows",
    "positions/gqa.md": "Grouped-query attention",
    "positions/sinks.md": "Attention sinks",
    "positions/block.md": "The transformer block",
    "positions/modern-block.md": "The modern block",
    "positions/long-context.md": "RoPE for long contexts",
    "positions/compared.md": "Positions side by side",
    "forward/dropout.md": "Dropout on the weights",
    "recent/latent.md": "Latent attention (MLA)",
    "recent/sinks-gates.md": "Sinks and gates",
    "recent/sparse.md": "Sparse selection",
    "recent/ssd.md": "State-space duality",
}


def _link(page: str) -> str:
    if not page:
        return ""
    fallback = page.removesuffix(".md").removesuffix("/index").split("/")[-1].replace("-", " ")
    # absolute, under the site's path: what a block prints is resolved alike by MkDocs and
    # Zensical only then (attention_site.address)
    return f"[{_TITLES.get(page, fallback.capitalize())}]({page_url(page)})"


def symbols_table(
    group: str | None = None, *, leave_out: Collection[str] = (), compact: bool = False
) -> str:
    """The notation table as Markdown: every symbol of ``group`` (all when ``None``), each
    linked to the page that introduces it by its absolute address (`page_url`).

    Args:
        group: one of `GROUPS`, or None for all.
        leave_out: symbols of ``group`` (their ``tex``) not to show; the glossary has them.
        compact: two columns, narrow enough for a phone: the symbol, and its meaning with its
            shape; no page link.

    Raises:
        ValueError: an unknown group, or a symbol in ``leave_out`` that ``group`` lacks.

    Examples:
        >>> from attention_site.notation import symbols_table
        >>> print(symbols_table("Long sequences").splitlines()[0])
        | symbol | meaning | shape | introduced in |
        >>> print(symbols_table("The forward pass", compact=True).splitlines()[6])
        | $X$ | the input, one token per row; shape $L \\times d_{\\text{model}}$ |
    """
    if group is not None and group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
    shown = [s for s in SYMBOLS if group is None or s.group == group]
    unknown = set(leave_out) - {s.tex for s in shown}
    if unknown:
        raise ValueError(f"leave_out names symbols not in {group!r}: {sorted(unknown)}")
    shown = [s for s in shown if s.tex not in leave_out]
    if compact:
        rows = ["| symbol | meaning |", "|---|---|"]
        for s in shown:
            # "keeps the shape" is a sentence already; a formula is named as a shape
            shape = (
                "" if not s.shape else f"; shape {s.shape}" if "$" in s.shape else f"; {s.shape}"
            )
            rows.append(f"| {s.tex} | {s.meaning}{shape} |")
        return "\n".join(rows)
    rows = ["| symbol | meaning | shape | introduced in |", "|---|---|---|---|"]
    for s in shown:
        rows.append(f"| {s.tex} | {s.meaning} | {s.shape} | {_link(s.page)} |")
    return "\n".join(rows)


def terms_list() -> str:
    """The glossary's words as a Markdown definition list, alphabetically.

    Examples:
        >>> from attention_site.notation import terms_list
        >>> terms_list().splitlines()[0]
        'additive mask'
    """
    out: list[str] = []
    for t in sorted(TERMS, key=lambda t: t.word.lower()):
        see = f" See {_link(t.page)}." if t.page else ""
        out += [t.word, f":   {t.meaning}{see}", ""]
    return "\n".join(out)
