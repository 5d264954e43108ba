/* test_abi.c — the C ABI exercised from C alone (no Python), also run under
 * AddressSanitizer/UBSan by tests/c/test_c_abi.py. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mt.h"

static int failures = 0;
#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                   \
        }                                                                 \
    } while (0)
#define OK(call) CHECK((call) == MT_OK)

static mt_tensor *from_floats(const float *v, int ndim, const int64_t *sizes) {
    mt_tensor *t = NULL;
    OK(mt_from_data(v, MT_F32, ndim, sizes, MT_F32, &t));
    return t;
}

static void test_lifetime(void) {
    int64_t before = mt_live_tensors();
    int64_t sizes[2] = {2, 3};
    mt_tensor *t = NULL, *v = NULL;
    OK(mt_empty(2, sizes, MT_F32, MT_CPU, &t));
    CHECK(mt_tensor_ndim(t) == 2 && mt_tensor_numel(t) == 6);
    CHECK(mt_tensor_strides(t)[0] == 3 && mt_tensor_strides(t)[1] == 1);
    OK(mt_transpose(t, 0, 1, &v));
    CHECK(mt_tensor_same_storage(t, v));
    CHECK(!mt_tensor_is_contiguous(v));
    mt_tensor_release(t); /* the view keeps the storage alive */
    CHECK(mt_tensor_sizes(v)[0] == 3);
    mt_tensor_release(v);
    CHECK(mt_live_tensors() == before);
}

static void test_errors(void) {
    int64_t a_sz[2] = {2, 3}, b_sz[2] = {4, 5}, bad[1] = {-1};
    mt_tensor *a = NULL, *b = NULL, *r = NULL;
    OK(mt_empty(2, a_sz, MT_F32, MT_CPU, &a));
    OK(mt_empty(2, b_sz, MT_F32, MT_CPU, &b));
    CHECK(mt_binary(MT_OP_ADD, a, b, 1.0, NULL, &r) == MT_ERR_RUNTIME);
    CHECK(strstr(mt_last_error(), "must match the size of tensor b") != NULL);
    CHECK(mt_empty(1, bad, MT_F32, MT_CPU, &r) == MT_ERR_RUNTIME);
    CHECK(mt_select(a, 0, 7, &r) == MT_ERR_INDEX);
    CHECK(mt_transpose(a, 0, 5, &r) == MT_ERR_INDEX);
    int64_t v[2] = {4, 2};
    mt_tensor *t = NULL;
    OK(mt_transpose(a, 0, 1, &t));
    CHECK(mt_view(t, 1, (int64_t[]){6}, &r) == MT_ERR_RUNTIME);
    CHECK(strstr(mt_last_error(), "view size is not compatible") != NULL);
    CHECK(mt_view(a, 2, v, &r) == MT_ERR_RUNTIME); /* 8 != 6 elements */
    CHECK(mt_unary(9999, a, NULL, &r) != MT_OK);  /* unknown op: an error, not a crash */
    int64_t huge[2] = {INT64_MAX / 2, 16};
    CHECK(mt_empty(2, huge, MT_F32, MT_CPU, &r) != MT_OK);
    mt_tensor_release(t);
    mt_tensor_release(a);
    mt_tensor_release(b);
}

static void test_broadcast_add(void) {
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
    mt_tensor *a = from_floats(av, 2, (int64_t[]){2, 3}), *b = from_floats(bv, 1, (int64_t[]){3});
    mt_tensor *r = NULL;
    OK(mt_binary(MT_OP_ADD, a, b, 2.0, NULL, &r)); /* a + 2*b */
    float out[6];
    OK(mt_read(r, MT_F32, out, 6));
    for (int i = 0; i < 6; i++) CHECK(out[i] == av[i] + 2 * bv[i % 3]);
    mt_tensor_release(r);
    /* transposed input keeps PyTorch's output layout */
    mt_tensor *at = NULL;
    OK(mt_transpose(a, 0, 1, &at));
    OK(mt_binary_scalar(MT_OP_MUL, at, 0, 3, MT_SCALAR_INT, 0, 1.0, NULL, &r));
    CHECK(mt_tensor_dtype(r) == MT_F32);
    CHECK(mt_tensor_strides(r)[0] == 1 && mt_tensor_strides(r)[1] == 3);
    OK(mt_read(r, MT_F32, out, 6));
    CHECK(out[0] == 3 && out[1] == 12 && out[2] == 6);
    mt_tensor_release(r);
    mt_tensor_release(at);
    mt_tensor_release(a);
    mt_tensor_release(b);
}

static void test_promotion(void) {
    mt_tensor *i = NULL, *h = NULL, *r = NULL;
    OK(mt_empty(1, (int64_t[]){4}, MT_I32, MT_CPU, &i));
    OK(mt_fill(i, 0, 7, MT_SCALAR_INT));
    OK(mt_binary_scalar(MT_OP_ADD, i, 0.5, 0, MT_SCALAR_FLOAT, 0, 1.0, NULL, &r));
    CHECK(mt_tensor_dtype(r) == MT_F32); /* int tensor + Python float -> default dtype */
    mt_tensor_release(r);
    OK(mt_binary_scalar(MT_OP_ADD, i, 0, 1, MT_SCALAR_INT, 0, 1.0, NULL, &r));
    CHECK(mt_tensor_dtype(r) == MT_I32); /* the wrapped int does not widen */
    mt_tensor_release(r);
    OK(mt_empty(1, (int64_t[]){4}, MT_F16, MT_CPU, &h));
    OK(mt_fill(h, 0, 0, MT_SCALAR_INT)); /* defined values: valgrind checks every read */
    OK(mt_binary(MT_OP_ADD, i, h, 1.0, NULL, &r));
    CHECK(mt_tensor_dtype(r) == MT_F16);
    mt_tensor_release(r);
    CHECK(mt_promote_types(MT_U8, MT_I8) == MT_I16);
    CHECK(mt_promote_types(MT_F16, MT_BF16) == MT_F32);
    CHECK(mt_binary(MT_OP_ADD, i, h, 1.0, i, &r) == MT_ERR_RUNTIME); /* Half can't be cast to Int */
    CHECK(strstr(mt_last_error(), "can't be cast to the desired output type Int") != NULL);
    mt_tensor_release(i);
    mt_tensor_release(h);
}

static void test_half_rounding(void) {
    CHECK(mt_f32_to_f16(1.0f) == 0x3C00);
    CHECK(mt_f32_to_f16(65520.0f) == 0x7C00);        /* rounds up to inf */
    CHECK(mt_f32_to_f16(5.9604645e-08f) == 0x0001);  /* smallest subnormal */
    CHECK(mt_f32_to_f16(1.0f + 1.0f / 2048) == 0x3C00); /* tie to even */
    CHECK(isnan(mt_f16_to_f32(mt_f32_to_f16(NAN))));
    CHECK(mt_f32_to_bf16(1.00390625f) == 0x3F80);   /* tie to even */
    CHECK(mt_f32_to_bf16(1.01171875f) == 0x3F82);
    CHECK(mt_bf16_to_f32(0x3F80) == 1.0f);
}

static void test_integer_division(void) {
    int64_t v[3] = {7, -7, INT64_MIN}, d[3] = {2, 2, -1};
    mt_tensor *a = NULL, *b = NULL, *r = NULL;
    OK(mt_from_data(v, MT_I64, 1, (int64_t[]){3}, MT_I64, &a));
    OK(mt_from_data(d, MT_I64, 1, (int64_t[]){3}, MT_I64, &b));
    OK(mt_binary(MT_OP_DIV_FLOOR, a, b, 1.0, NULL, &r));
    int64_t out[3];
    OK(mt_read(r, MT_I64, out, 3));
    CHECK(out[0] == 3 && out[1] == -4 && out[2] == INT64_MIN); /* wraps, no UB */
    mt_tensor_release(r);
    OK(mt_fill(b, 0, 0, MT_SCALAR_INT));
    CHECK(mt_binary(MT_OP_REMAINDER, a, b, 1.0, NULL, &r) == MT_ERR_RUNTIME);
    CHECK(strcmp(mt_last_error(), "ZeroDivisionError") == 0);
    mt_tensor_release(a);
    mt_tensor_release(b);
}

static void test_views_share_version(void) {
    mt_tensor *a = NULL, *v = NULL;
    OK(mt_empty(1, (int64_t[]){6}, MT_F32, MT_CPU, &a));
    OK(mt_slice(a, 0, 1, 5, 2, &v));
    CHECK(mt_tensor_sizes(v)[0] == 2 && mt_tensor_strides(v)[0] == 2 && mt_tensor_offset(v) == 1);
    int64_t ver = mt_tensor_version(a);
    OK(mt_fill(v, 1.5, 0, MT_SCALAR_FLOAT));
    CHECK(mt_tensor_version(a) == ver + 1);
    mt_tensor_release(v);
    mt_tensor_release(a);
}

static void test_large_parallel_add(void) {
    int64_t n = 1 << 20;
    mt_tensor *a = NULL, *r = NULL;
    OK(mt_arange(0, (double)n, 1, MT_F32, MT_CPU, &a));
    OK(mt_binary(MT_OP_ADD, a, a, 1.0, NULL, &r));
    float out[4];
    mt_tensor *tail = NULL;
    OK(mt_slice(r, 0, n - 4, n, 1, &tail));
    OK(mt_read(tail, MT_F32, out, 4));
    CHECK(out[3] == 2.0f * (float)(n - 1));
    mt_tensor_release(tail);
    mt_tensor_release(r);
    mt_tensor_release(a);
}

int main(void) {
    int64_t start = mt_live_tensors();
    test_lifetime();
    test_errors();
    test_broadcast_add();
    test_promotion();
    test_half_rounding();
    test_integer_division();
    test_views_share_version();
    test_large_parallel_add();
    CHECK(mt_live_tensors() == start);
    if (failures) {
        fprintf(stderr, "%d C ABI checks failed\n", failures);
        return 1;
    }
    printf("C ABI tests passed\n");
    return 0;
}
