// What both distributed engines' shims share (gloo_shim.cc, mpi_shim.cc): the status + thread-local
// error convention, float16 and bfloat16 to and from float32 (rounded to nearest even, as
// c10::Half / c10::BFloat16), and the ops of enum mtg_op. Header-only C++; each shim's shared
// object has its own copy (hidden visibility), so its own last_error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

namespace mtdist {

inline thread_local std::string last_error;

// Every entry point runs its body through here: a C++ exception becomes -1 and its text.
template <typename F>
int guarded(F body) {
    try {
        body();
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
    } catch (...) {
        last_error = "unknown C++ exception in a mindtorch_v2 distributed shim";
    }
    return -1;
}

struct Fail : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t float_to_half(float f) {  // round to nearest even, as PyTorch's c10::Half
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffff;
    if (ax >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000 ? 0x200 : 0));
    if (ax >= 0x477ff000) return (uint16_t)(sign | 0x7c00);  // overflows to inf after rounding
    if (ax < 0x38800000) {  // subnormal or zero in half
        float a;
        std::memcpy(&a, &ax, 4);
        a += 0.5f;  // the float adder rounds the low bits away (nearest even)
        uint32_t r;
        std::memcpy(&r, &a, 4);
        return (uint16_t)(sign | (r - 0x3f000000));
    }
    uint32_t mant_odd = (ax >> 13) & 1;
    ax += 0xc8000fff + mant_odd;  // rebias the exponent (-112 << 23) and round
    return (uint16_t)(sign | (ax >> 13));
}

inline float bf16_to_float(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);  // NaN stays NaN
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

struct Sum { template <typename T> static T f(T a, T b) { return a + b; } };
struct Prod { template <typename T> static T f(T a, T b) { return a * b; } };
struct Min { template <typename T> static T f(T a, T b) { return b < a ? b : a; } };
struct Max { template <typename T> static T f(T a, T b) { return b > a ? b : a; } };
struct BAnd { template <typename T> static T f(T a, T b) { return a & b; } };
struct BOr { template <typename T> static T f(T a, T b) { return a | b; } };
struct BXor { template <typename T> static T f(T a, T b) { return a ^ b; } };

template <float (*Load)(uint16_t), uint16_t (*Store)(float), typename Op>
void reduce_16(void *c, const void *a, const void *b, size_t n) {
    uint16_t *out = static_cast<uint16_t *>(c);
    const uint16_t *x = static_cast<const uint16_t *>(a), *y = static_cast<const uint16_t *>(b);
    for (size_t i = 0; i < n; i++) out[i] = Store(Op::f(Load(x[i]), Load(y[i])));
}

}  // namespace mtdist
