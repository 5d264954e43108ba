/* special_math.h — scalar special functions libm lacks (or has only thread-unsafely), in double:
 * float kernels round the double result once. The algorithms are the ones PyTorch's CPU kernels
 * use (aten/src/ATen/native/Math.h), so results agree to the last ulp or two. */
#ifndef MT_SPECIAL_MATH_H
#define MT_SPECIAL_MATH_H

#include <math.h>

/* lgamma without glibc's global signgam (lgamma() writes it: a data race across pool threads) */
static inline double mt__lgamma(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

/* erfinv: vecmath.h (vectorised) */

/* digamma: reflection below 0, the recurrence up to 10, then the asymptotic series (Cephes psi) */
static inline double mt__digamma(double x) {
    static const double PSI_10 = 2.25175258906672110764;
    if (x == 0) return copysign(INFINITY, -x); /* as SciPy and PyTorch: the sign follows -x */
    if (x < 0) {
        if (x == trunc(x)) return NAN; /* poles at the negative integers */
        double q, r = modf(x, &q);     /* pi / tan(pi x), with x reduced to its fraction first */
        return mt__digamma(1 - x) - M_PI / tan(M_PI * r);
    }
    double result = 0;
    while (x < 10) {
        result -= 1 / x;
        x += 1;
    }
    if (x == 10) return result + PSI_10;
    static const double A[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                               -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                               8.33333333333333333333E-2};
    double y = 0;
    if (x < 1.0e17) {
        double z = 1.0 / (x * x), p = A[0];
        for (int i = 1; i < 7; i++) p = p * z + A[i];
        y = z * p;
    }
    return result + log(x) - 0.5 / x - y;
}

/* trigamma (polygamma(1, x)): reflection below 1/2, six recurrence steps, the asymptotic series */
static inline double mt__trigamma(double x) {
    double sign = 1, result = 0;
    if (x < 0.5) {
        sign = -1;
        double s = sin(M_PI * x);
        result -= M_PI * M_PI / (s * s);
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++) {
        result += 1 / (x * x);
        x += 1;
    }
    double ixx = 1 / (x * x);
    result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x;
    return sign * result;
}

#endif
