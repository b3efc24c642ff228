"""Offline against online calibration: Kendall's tau against scipy, Deming's slope against the minimum of its
own criterion (scipy.optimize), OLS / WLS against numpy's least squares, and by simulation the attenuation
that Deming's regression corrects."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy import optimize, stats

from ranklens.errors import InputError
from ranklens.online import calibrate
from ranklens.online.calibration import deming, kendall_tau


def test_kendall_tau_b_is_scipys():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=60), 1)  # rounded: ties on both sides
    y = np.round(0.4 * x + rng.normal(size=60) * 0.6, 1)
    want = stats.kendalltau(x, y, variant="b", method="asymptotic")
    tau, p = kendall_tau(x, y)
    assert tau == pytest.approx(want.statistic, rel=1e-12)
    assert p == pytest.approx(want.pvalue, rel=1e-9)


def test_deming_minimises_its_criterion():
    # Deming's line minimises sum (y - a - b x)^2 / (ratio + b^2): the weighted orthogonal distances
    rng = np.random.default_rng(1)
    x = rng.normal(size=30)
    y = 0.7 * x + rng.normal(size=30) * 0.5
    for ratio in (0.25, 1.0, 4.0):
        b, a = deming(x, y, ratio)
        res = optimize.minimize(lambda p, r=ratio: np.sum((y - p[0] - p[1] * x) ** 2) / (r + p[1] ** 2), [0.0, 0.5],
                                method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10000})
        assert (a, b) == pytest.approx(tuple(res.x), abs=1e-6)


def test_ols_and_wls_with_their_intervals():
    rng = np.random.default_rng(2)
    x = rng.normal(size=25) * 0.01
    y = 0.3 * x + rng.normal(size=25) * 0.002
    se = np.full(25, 0.002) * rng.uniform(0.5, 2, size=25)
    t = pa.table({"offline_delta": x, "online_delta": y})
    c = calibrate(t, predict=[0.01])
    fit = stats.linregress(x, y)
    q = stats.t.isf(0.025, 23)
    assert c.method == "ols"
    assert (c.slope, c.intercept) == pytest.approx((fit.slope, fit.intercept))
    assert c.slope_ci == pytest.approx((fit.slope - q * fit.stderr, fit.slope + q * fit.stderr))
    # prediction interval of a new experiment: y0 +- t s sqrt(1 + 1/n + (x0 - mean)^2 / Sxx)
    s = math.sqrt(np.sum((y - fit.intercept - fit.slope * x) ** 2) / 23)
    half = q * s * math.sqrt(1 + 1 / 25 + (0.01 - x.mean()) ** 2 / np.sum((x - x.mean()) ** 2))
    p = c.predictions[0]
    assert p["predicted"] == pytest.approx(fit.intercept + 0.01 * fit.slope)
    assert (p["low"], p["high"]) == pytest.approx((p["predicted"] - half, p["predicted"] + half))
    w = calibrate(t.append_column("online_se", pa.array(se)))
    coef = np.linalg.lstsq(np.column_stack([np.ones(25), x]) / se[:, None], y / se, rcond=None)[0]
    assert w.method == "wls" and (w.intercept, w.slope) == pytest.approx(tuple(coef))


def test_sign_agreement():
    t = pa.table({"offline_delta": [0.1, 0.2, -0.1, 0.3, -0.2], "online_delta": [0.02, -0.01, -0.03, 0.05, 0.01],
                  "online_se": [0.005, 0.02, 0.01, 0.01, 0.02]})
    c = calibrate(t)
    assert c.sign_agreement == pytest.approx(3 / 5)
    assert c.n_significant == 3 and c.sign_agreement_significant == 1.0  # |online| / se > 1.96: rows 1, 3, 4


def test_deming_corrects_the_attenuation_of_noisy_offline_deltas():
    # true offline deltas d ~ N(0, 0.01^2); online = 0.5 d; both observed with error (se 0.006 offline,
    # 0.004 online): OLS's slope shrinks by var(d) / (var(d) + se_x^2) = 0.735; Deming's does not
    rng = np.random.default_rng(3)
    n = 4000
    d = rng.normal(size=n) * 0.01
    x = d + rng.normal(size=n) * 0.006
    y = 0.5 * d + rng.normal(size=n) * 0.004
    base = {"offline_delta": x, "online_delta": y}
    ols = calibrate(pa.table(base))
    dem = calibrate(pa.table({**base, "offline_se": np.full(n, 0.006), "online_se": np.full(n, 0.004)}))
    assert ols.slope == pytest.approx(0.5 * 1e-4 / (1e-4 + 0.36e-4), abs=0.02)
    assert dem.method == "deming" and dem.slope_ci[0] < 0.5 < dem.slope_ci[1]
    assert dem.slope == pytest.approx(0.5, abs=0.03)


def test_bad_tables():
    with pytest.raises(InputError, match="no column 'offline_delta'"):
        calibrate(pa.table({"x": [1.0, 2.0, 3.0], "online_delta": [1.0, 2.0, 3.0]}))
    with pytest.raises(InputError, match="at least 3"):
        calibrate(pa.table({"offline_delta": [1.0, 2.0], "online_delta": [1.0, 2.0]}))
    with pytest.raises(InputError, match="empty value"):
        calibrate(pa.table({"offline_delta": [1.0, None, 3.0], "online_delta": [1.0, 2.0, 3.0]}))
