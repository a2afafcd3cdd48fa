"""Exercises: Scaling by 1/√d_k. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np
from attention_math.exercises.build import (
    attention_exercise,
)
from attention_math.exercises.model import Exercise, Mistake
from attention_math.exercises.steps import step

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    d_k = sp.Symbol("d_k", positive=True, integer=True)
    s = sp.Symbol("s", positive=True)
    row = sp.Matrix([[4, 0]])
    Q_m, mu = sp.Matrix([[1, 2], [0, 1]]), sp.Matrix([1, 1])  # two queries; μ is a column
    K_m = sp.Matrix([[1, 0], [2, 1], [0, 3]])  # three keys
    K_q = sp.Matrix([[sp.log(3), 1], [0, 2], [sp.log(2), 0]])  # μ·k_j: log 3, 0, log 2
    mu_q = sp.Matrix([1, 0])
    mu_qs, mu_ks = sp.symbols("mu_q mu_k", real=True)  # the entries' means
    return [
        Exercise(
            id="scaling-variance",
            chapter="scaling",
            title="Variance of a dot product",
            statement=(
                "The $d_k$ entries of $q$ and of $k$ are independent with mean $0$ and variance "
                "$1$. What is the variance of $q \\cdot k$? Type $d_k$ as `d_k`."
            ),
            answer=d_k,
            mistakes=(Mistake("std_vs_variance", sp.sqrt(d_k)),),
            symbols={"d_k": d_k},
            kind="expression",
            explanation=(
                r"Each term $q_l k_l$ has mean $\mathbb{E}[q_l]\mathbb{E}[k_l] = 0$ and "
                r"variance $\mathbb{E}[q_l^2]\,\mathbb{E}[k_l^2] = 1$ (independence). The "
                "$d_k$ terms are independent, so their variances add."
            ),
            solution=_solve_scaling_variance,
        ),
        Exercise(
            id="scaling-variance-s",
            chapter="scaling",
            title="Variance after scaling",
            statement=(
                "Now each entry of $q$ and $k$ has variance $s^2$ (mean $0$, all independent). "
                "What is the variance of $q \\cdot k / \\sqrt{d_k}$? Use `s` and `d_k`."
            ),
            answer=s**4,
            mistakes=(
                Mistake("missing_scale", d_k * s**4, "That is the variance of q·k itself."),
                Mistake("std_vs_variance", s**2),
            ),
            symbols={"s": s, "d_k": d_k},
            kind="expression",
            explanation=(
                r"Each term now has variance $s^2 \cdot s^2$, the sum $d_k s^4$; dividing a "
                r"random variable by $\sqrt{d_k}$ divides its variance by $d_k$."
            ),
            solution=_solve_scaling_variance_s,
        ),
        Exercise(
            id="scaling-variance-means",
            chapter="scaling",
            title="Variance of a dot product when the means are not zero",
            task="prove",
            statement=(
                "The $1/\\sqrt{d_k}$ argument assumes mean-zero entries. Let the entries of "
                "$q$ have mean $\\mu_q$, those of $k$ mean $\\mu_k$, all of variance $1$ and "
                "independent. Show that $\\operatorname{Var}(q_l k_l) = 1 + \\mu_q^2 + "
                "\\mu_k^2$ and give $\\operatorname{Var}(q \\cdot k)$. Use `d_k`, `mu_q`, "
                "`mu_k`."
            ),
            answer=d_k * (1 + mu_qs**2 + mu_ks**2),
            mistakes=(Mistake("mean_terms", d_k),),
            symbols={"d_k": d_k, "mu_q": mu_qs, "mu_k": mu_ks},
            kind="expression",
            explanation=(
                "1. Independence: $\\mathbb{E}[q_l k_l] = \\mathbb{E}[q_l]\\,\\mathbb{E}[k_l] "
                "= \\mu_q \\mu_k$.\n"
                "2. Independence again, for the squares: $\\mathbb{E}[q_l^2 k_l^2] = "
                "\\mathbb{E}[q_l^2]\\,\\mathbb{E}[k_l^2] = (1 + \\mu_q^2)(1 + \\mu_k^2)$, since "
                "$\\mathbb{E}[x^2] = \\operatorname{Var}(x) + \\mathbb{E}[x]^2$.\n"
                "3. $\\operatorname{Var}(q_l k_l) = (1 + \\mu_q^2)(1 + \\mu_k^2) - "
                "\\mu_q^2 \\mu_k^2 = 1 + \\mu_q^2 + \\mu_k^2$: not the product of the "
                "variances, $1$.\n"
                "4. Terms with different $l$ use different entries, so they are independent "
                "and their variances add: $\\operatorname{Var}(q \\cdot k) = d_k\\,(1 + "
                "\\mu_q^2 + \\mu_k^2)$.\n\n"
                "With $\\mu_q = \\mu_k = 0$ this is the $d_k$ of the first exercise, and "
                "$1/\\sqrt{d_k}$ brings it to $1$. With means it brings it only to "
                "$1 + \\mu_q^2 + \\mu_k^2$. Over the scores of one query, though, the key "
                "mean is a shift of the row and does nothing (the exercise below), while the "
                "query mean spreads the row: the scaling argument is about the query's side. "
                "SymPy checks steps 1 to 3 with normal entries, for which `sympy.stats` "
                "computes the moments."
            ),
            solution=_solve_scaling_variance_means,
        ),
        Exercise(
            id="scaling-factor",
            chapter="scaling",
            title="The factor for $d_k = 64$",
            statement="By what number are the scores multiplied when $d_k = 64$?",
            answer=1 / sp.sqrt(64),
            mistakes=(
                Mistake("missing_scale", sp.S.One),
                Mistake("wrong_scale", sp.Rational(1, 64), "That is 1/d_k, not 1/√d_k."),
                Mistake("wrong_scale", sp.sqrt(64), "That is √d_k: divide by it."),
            ),
            numeric=lambda: np.float64(1 / np.sqrt(64)),
            kind="scalar",
            explanation=(r"The factor is $1/\sqrt{d_k}$."),
            solution=_solve_scaling_factor,
        ),
        attention_exercise(
            id="scaling-row",
            chapter="scaling",
            title="A row of scores with $d_k = 16$",
            statement=(
                "A query and two keys with $d_k = 16$ give the unscaled scores "
                "$S_{\\text{raw}} = QK^\\top$ below. Compute the weights "
                "$\\operatorname{softmax}(S_{\\text{raw}}/\\sqrt{d_k})$ exactly."
            ),
            q=sp.Matrix([[4] + [0] * 15]),
            k=sp.Matrix([[1] + [0] * 15, [0] * 16]),
            inputs={"S_raw": row},
            explanation=(r"Divide by $\sqrt{16} = 4$ first, then take the softmax of the row."),
            solution=_solve_scaling_row,
        ),
        Exercise(
            id="scaling-key-mean",
            chapter="scaling",
            title="A key mean changes nothing",
            task="prove",
            statement=(
                "Add the same vector $\\mu$ to every key: $k_j \\to k_j + \\mu$. Show that the "
                "attention weights do not change. Give the change of the (unscaled) scores, "
                "$Q(K + \\mathbf{1}\\mu^\\top)^\\top - QK^\\top$, for $Q$ and $\\mu$ below "
                "(three keys)."
            ),
            answer=Q_m * mu * sp.ones(1, 3),
            inputs={"Q": Q_m, "mu": mu},
            mistakes=(Mistake("mean_side", sp.ones(2, 1) * (K_m * mu).T),),
            explanation=(
                "1. The new score of query $i$ and key $j$ is $q_i \\cdot (k_j + \\mu) = "
                "q_i \\cdot k_j + q_i \\cdot \\mu$.\n"
                "2. The added term $q_i \\cdot \\mu$ does not depend on $j$: row $i$ of the "
                "scores moves by one number, so the change is $Q\\mu\\,\\mathbf{1}^\\top$, "
                "every row constant.\n"
                "3. A softmax ignores a constant added to its whole row (shift invariance), "
                "so every weight, and the output, stays as it was.\n\n"
                "A key bias is invisible to attention; that is why a key projection's "
                "bias term can be dropped without loss, and why a mean shared by all keys "
                "does not spoil the $1/\\sqrt{d_k}$ argument."
            ),
            solution=_solve_scaling_key_mean,
        ),
        Exercise(
            id="scaling-query-mean",
            chapter="scaling",
            title="A query mean sharpens",
            task="explain",
            statement=(
                "Now add $\\mu$ to every query instead. A query $q = (0, 0)$ gives uniform "
                "weights over any keys. Explain why adding $\\mu$ to it moves the weights "
                "when adding $\\mu$ to the keys did not, and give the weights of "
                "$q + \\mu$ over the keys $K$ below (unscaled scores, exactly)."
            ),
            answer=symbolic.softmax((K_q * mu_q).T),
            inputs={"K": K_q, "mu": mu_q},
            mistakes=(Mistake("mean_side", sp.Matrix([[sp.Rational(1, 3)] * 3])),),
            kind="weights",
            explanation=(
                "1. The new score of key $j$ is $(q + \\mu)\\cdot k_j = q \\cdot k_j + "
                "\\mu \\cdot k_j$.\n"
                "2. The added term $\\mu \\cdot k_j$ depends on $j$: it is a different "
                "number for each key, not a shift of the row, so shift invariance does not "
                "remove it.\n"
                "3. Here $q \\cdot k_j = 0$ and $\\mu \\cdot k_j$ is the first column of "
                "$K$: $(\\log 3, 0, \\log 2)$, so the weights are $(3, 1, 2)/6 = "
                "(1/2, 1/6, 1/3)$ instead of $1/3$ each.\n\n"
                "The row's spread grows with $\\lvert\\mu\\rvert$ (the added scores are "
                "$\\mu \\cdot (k_j - \\bar k)$ around their mean), so a large query mean "
                "sharpens every row alike, towards the keys that point along $\\mu$: the "
                "asymmetry the scaling chapter measures."
            ),
            solution=_solve_scaling_query_mean,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_scaling_variance(ex: Exercise) -> object:
    d_k = sp.Symbol("d_k", positive=True, integer=True)
    mean_q = mean_k = 0
    second_q = second_k = 1  # E[q²] = Var + mean² = 1
    var_term = second_q * second_k - (mean_q * mean_k) ** 2
    return d_k * var_term


def _solve_scaling_variance_s(ex: Exercise) -> object:
    d_k, s = sp.Symbol("d_k", positive=True, integer=True), sp.Symbol("s", positive=True)
    var_dot = d_k * (s**2 * s**2)
    return var_dot / sp.sqrt(d_k) ** 2


def _solve_scaling_factor(ex: Exercise) -> object:
    return 1 / sp.sqrt(64)


def _solve_scaling_row(ex: Exercise) -> object:
    z = ex.inputs["S_raw"] / sp.sqrt(16)  # (1, 2)
    E = z.applyfunc(sp.exp)
    return E / sum(E)


def _solve_scaling_key_mean(ex: Exercise) -> object:
    Q, mu = ex.inputs["Q"], ex.inputs["mu"]  # (2, 2), (2, 1)
    K = sp.Matrix(3, 2, lambda j, c: sp.Symbol(f"k_{j + 1}{c + 1}", real=True))  # any keys
    shifted = K + sp.ones(3, 1) * mu.T  # (3, 2): μ added to every key
    change = step("each row moves by q_i·μ", Q * shifted.T - Q * K.T, Q * mu * sp.ones(1, 3))
    step(
        "so the weights stay",
        symbolic.softmax(Q * shifted.T),
        symbolic.softmax(Q * K.T),
    )
    return change  # (2, 3): every row constant


def _solve_scaling_query_mean(ex: Exercise) -> object:
    K, mu = ex.inputs["K"], ex.inputs["mu"]  # (3, 2), (2, 1)
    q = sp.zeros(1, 2)  # (1, 2): uniform weights on its own
    step("q alone gives uniform weights", symbolic.softmax(q * K.T), sp.ones(1, 3) / 3)
    added = step("the added scores are μ·k_j", (q + mu.T) * K.T - q * K.T, (K * mu).T)
    E = added.applyfunc(sp.exp)  # (1, 3): (3, 1, 2)
    return E / sum(E)


def _solve_scaling_variance_means(ex: Exercise) -> object:
    from sympy.stats import E, Normal, covariance, variance

    d_k, mu_q, mu_k = (ex.symbols[n] for n in ("d_k", "mu_q", "mu_k"))
    q_1, q_2 = Normal("q_1", mu_q, 1), Normal("q_2", mu_q, 1)  # two entries of q
    k_1, k_2 = Normal("k_1", mu_k, 1), Normal("k_2", mu_k, 1)  # two entries of k
    step("E[q k] = μ_q μ_k", E(q_1 * k_1), mu_q * mu_k)
    step("E[q² k²] = (1 + μ_q²)(1 + μ_k²)", E(q_1**2 * k_1**2), (1 + mu_q**2) * (1 + mu_k**2))
    term = step("Var(q k) = 1 + μ_q² + μ_k²", variance(q_1 * k_1), 1 + mu_q**2 + mu_k**2)
    step("different terms are uncorrelated", covariance(q_1 * k_1, q_2 * k_2), 0)
    return d_k * term  # the d_k variances add
