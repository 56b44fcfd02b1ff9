"""The coefficients of GELU's erfc in cutlass_splitk/templates/cks_activation.cuh.

erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2) (the form of Numerical Recipes' erfcc), with
P of degree 5 fitted here to log(erfcx(z) / t) on 0 <= z <= 9.5 (|x| <= 13.4 in GELU's x = -z sqrt 2;
beyond it erfc(z) < 1e-40, under float's normal range) by Lawson's iteratively reweighted least
squares in the Chebyshev basis (near-minimax). The error of P is the relative error of erfc: 7.7e-6.
Printed as the header uses them: times log2(e) (the kernel exponentiates with ex2), the constant
term less 1 (the kernel wants erfc / 2), rounded to float.

    python3 benchmarks/fit_gelu.py [--degree 5]
"""

import argparse
import struct

import numpy as np
from numpy.polynomial import Chebyshev, Polynomial
from scipy.special import erfcx


def f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--degree", type=int, default=5)
    ap.add_argument("--zmax", type=float, default=9.5)
    args = ap.parse_args()
    tmin = 1 / (1 + 0.5 * args.zmax)
    t = np.linspace(tmin, 1, 400001)
    g = np.log(erfcx(2 / t - 2)) - np.log(t)
    w = np.ones_like(t)
    for _ in range(60):
        fit = Chebyshev.fit(t, g, args.degree, domain=[tmin, 1], w=np.sqrt(w))
        err = np.abs(fit(t) - g)
        w = w * err / (w * err).mean()
    coef = fit.convert(kind=Polynomial, domain=[-1, 1], window=[-1, 1]).coef  # ascending powers of t
    log2e = 1 / np.log(2)
    folded = [f32(coef[0] * log2e - 1)] + [f32(c * log2e) for c in coef[1:]]
    print(f"max |P - log(erfcx(z) / t)| = {err.max():.3e} (relative error of erfc) on 0 <= z <= {args.zmax}")
    print("constant (times log2 e, less 1):", f"{folded[0]:.9e}f")
    print("t^1 .. t^%d (times log2 e):" % args.degree, ", ".join(f"{c:.9e}f" for c in folded[1:]))


if __name__ == "__main__":
    main()
