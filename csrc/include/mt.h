/* mt.h — the whole public C ABI of mindtorch_v2's core.
 *
 * Rules: opaque handles, every fallible call returns an mt_status (0 = ok,
 * negative = error kind) and leaves its message in a thread-local buffer read
 * by mt_last_error(). Every call that hands back a tensor hands back a new
 * reference the caller owns. No CPython types, no preprocessor directives:
 * this file is also the cffi cdef (build_ffi.py reads it verbatim).
 */

typedef int mt_status;
typedef struct mt_tensor mt_tensor;

enum mt_status_kind {
    MT_OK = 0,
    MT_ERR_RUNTIME = -1,
    MT_ERR_VALUE = -2,
    MT_ERR_TYPE = -3,
    MT_ERR_INDEX = -4,
    MT_ERR_NOT_IMPLEMENTED = -5,
    MT_ERR_OOM = -6,
    MT_ERR_LINALG = -7 /* torch.linalg.LinAlgError (a RuntimeError): a factorisation failed */
};

enum mt_dtype {
    MT_BOOL = 0,
    MT_U8 = 1,
    MT_I8 = 2,
    MT_I16 = 3,
    MT_I32 = 4,
    MT_I64 = 5,
    MT_F16 = 6,
    MT_BF16 = 7,
    MT_F32 = 8,
    MT_F64 = 9,
    /* float8: storage and conversion only, as on PyTorch's CPU (promotion with any other dtype
     * is an error; ops without a kernel raise "not implemented for 'Float8_e4m3fn'") */
    MT_F8E5M2 = 10,
    MT_F8E4M3FN = 11,
    MT_F8E5M2FNUZ = 12,
    MT_F8E4M3FNUZ = 13,
    MT_F8E8M0FNU = 14,
    /* complex: (real, imaginary) pairs of float32 / float64, PyTorch's complex64 / complex128 */
    MT_C64 = 15,
    MT_C128 = 16,
    MT_NUM_DTYPES = 17
};

enum mt_device {
    MT_CPU = 0,
    MT_META = 1
};

/* Kind of a Python scalar handed to the core: it takes part in type
 * promotion as a "wrapped number" (lowest priority), as in PyTorch. */
enum mt_scalar_kind {
    MT_SCALAR_BOOL = 0,
    MT_SCALAR_INT = 1,
    MT_SCALAR_FLOAT = 2
};

/* ---- errors, threads, global state ---------------------------------- */
const char *mt_last_error(void);
void mt_set_num_threads(int n);
int mt_get_num_threads(void);
/* the widest SIMD level the core's kernels select on this CPU: "AVX512", "AVX2" or "DEFAULT"
 * (torch.backends.cpu.get_cpu_capability) */
const char *mt_cpu_capability(void);
void mt_set_default_dtype(int dtype);          /* process-wide, as in PyTorch */
int mt_get_default_dtype(void);
int64_t mt_live_tensors(void);                 /* for leak tests */

/* ---- dtype helpers --------------------------------------------------- */
/* -1 (error set) where PyTorch raises: a float8 dtype with any other dtype */
int mt_promote_types(int a, int b);
int mt_can_cast(int from, int to);
int mt_dtype_itemsize(int dtype);
/* Round a float to float16/bfloat16 bits with round-to-nearest-even. */
uint16_t mt_f32_to_f16(float x);
float mt_f16_to_f32(uint16_t h);
uint16_t mt_f32_to_bf16(float x);
float mt_bf16_to_f32(uint16_t h);

/* ---- tensor lifetime and metadata ------------------------------------ */
void mt_tensor_retain(mt_tensor *t);
void mt_tensor_release(mt_tensor *t);
int mt_tensor_ndim(const mt_tensor *t);
const int64_t *mt_tensor_sizes(const mt_tensor *t);
const int64_t *mt_tensor_strides(const mt_tensor *t);
int64_t mt_tensor_offset(const mt_tensor *t);  /* in elements */
int64_t mt_tensor_numel(const mt_tensor *t);
int mt_tensor_dtype(const mt_tensor *t);
int mt_tensor_device(const mt_tensor *t);
int mt_tensor_is_contiguous(const mt_tensor *t);
void *mt_tensor_data_ptr(const mt_tensor *t);  /* address of element 0 */
void *mt_tensor_storage_ptr(const mt_tensor *t);
int64_t mt_tensor_storage_nbytes(const mt_tensor *t);
int64_t mt_tensor_version(const mt_tensor *t);
void mt_tensor_bump_version(mt_tensor *t);
void mt_tensor_set_version(mt_tensor *t, int64_t version); /* shared by its views, as bumps are */
int mt_tensor_is_wrapped_number(const mt_tensor *t);
int mt_tensor_same_storage(const mt_tensor *a, const mt_tensor *b);

/* ---- creation -------------------------------------------------------- */
mt_status mt_empty(int ndim, const int64_t *sizes, int dtype, int device, mt_tensor **out);
mt_status mt_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                           int dtype, int device, mt_tensor **out);
/* Copy numel contiguous elements of src_dtype from src into a new tensor of
 * dtype (converting). */
mt_status mt_from_data(const void *src, int src_dtype, int ndim, const int64_t *sizes,
                       int dtype, mt_tensor **out);
/* Wrap memory owned by someone else. deleter(ctx) runs when the last view dies. */
mt_status mt_from_blob(void *data, int64_t nbytes, int ndim, const int64_t *sizes,
                       const int64_t *strides, int64_t offset, int dtype,
                       void (*deleter)(void *), void *ctx, mt_tensor **out);
/* Move the bytes of t's storage into data (nbytes: the storage's size; a shared mapping for
 * share_memory_): every tensor on that storage sees the new memory; deleter(ctx) runs when it dies. */
mt_status mt_storage_move_to(mt_tensor *t, void *data, int64_t nbytes, void (*deleter)(void *), void *ctx);
/* Atomically add delta to a counter in shared memory; returns the new value. */
int64_t mt_shared_count_add(int64_t *counter, int64_t delta);
/* A 0-dim tensor holding a Python scalar; wrapped marks it as a wrapped number. */
mt_status mt_scalar_tensor(double f, int64_t i, int kind, int dtype, int wrapped, mt_tensor **out);
/* the same for a Python complex number re + im*j */
mt_status mt_scalar_complex(double re, double im, int dtype, int wrapped, mt_tensor **out);
mt_status mt_fill(mt_tensor *t, double f, int64_t i, int kind);
mt_status mt_arange(double start, double end, double step, int dtype, int device, mt_tensor **out);
mt_status mt_linspace(double start, double end, int64_t steps, int dtype, int device, mt_tensor **out);
mt_status mt_eye(int64_t n, int64_t m, int dtype, int device, mt_tensor **out);

/* ---- copies and reads ------------------------------------------------ */
/* dst <- src, broadcasting src to dst's shape and converting dtype. */
mt_status mt_copy_(mt_tensor *dst, mt_tensor *src);
mt_status mt_contiguous(mt_tensor *t, mt_tensor **out);
mt_status mt_clone(mt_tensor *t, mt_tensor **out);
mt_status mt_to_dtype(mt_tensor *t, int dtype, int copy, mt_tensor **out);
/* Write all elements in row-major order, converted to dst_dtype, into dst. */
mt_status mt_read(mt_tensor *t, int dst_dtype, void *dst, int64_t capacity);
/* Read element 0 of a one-element tensor. */
mt_status mt_item(mt_tensor *t, double *f, int64_t *i);

/* ---- views (share storage) ------------------------------------------ */
mt_status mt_as_strided(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                        int64_t offset, mt_tensor **out);
mt_status mt_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_reshape(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_transpose(mt_tensor *t, int64_t d0, int64_t d1, mt_tensor **out);
mt_status mt_permute(mt_tensor *t, int ndim, const int64_t *dims, mt_tensor **out);
mt_status mt_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_squeeze(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out); /* ndims<0: all */
mt_status mt_unsqueeze(mt_tensor *t, int64_t dim, mt_tensor **out);
mt_status mt_select(mt_tensor *t, int64_t dim, int64_t index, mt_tensor **out);
mt_status mt_slice(mt_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, mt_tensor **out);
mt_status mt_unfold(mt_tensor *t, int64_t dim, int64_t size, int64_t step, mt_tensor **out);
mt_status mt_view_dtype(mt_tensor *t, int dtype, mt_tensor **out);
/* complex (..., ) <-> real (..., 2) views, with their autograd (ViewAsRealBackward0, ViewAsComplexBackward0) */
mt_status mt_view_as_real(mt_tensor *t, mt_tensor **out);
mt_status mt_view_as_complex(mt_tensor *t, mt_tensor **out);
/* resize_: contiguous strides; the storage grows (in place, views see it) when needed */
mt_status mt_resize_(mt_tensor *t, int ndim, const int64_t *sizes);

/* ---- advanced indexing ----------------------------------------------- */
/* indices[k] is NULL for a dimension taken whole. Integer (int64/int32) or
 * bool index tensors follow PyTorch's advanced-indexing rules. */
mt_status mt_index(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor **out);
mt_status mt_index_put_(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor *values,
                        int accumulate);

/* ---- shape and index ops (kernels/cpu/shape.c, scatter.c, sort.c; autograd/formulas_shape.c) ----
 * PyTorch's semantics and error texts; results are new tensors unless `inplace` (then self
 * is written and returned). Index tensors are int64 (int32 where PyTorch accepts it). */
mt_status mt_cat(int n, mt_tensor *const *tensors, int64_t dim, mt_tensor **out);
mt_status mt_stack(int n, mt_tensor *const *tensors, int64_t dim, mt_tensor **out);
mt_status mt_flip(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out);
/* ndims = 0 with one shift: roll the flattened tensor */
mt_status mt_roll(mt_tensor *t, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims, mt_tensor **out);
mt_status mt_repeat(mt_tensor *t, int n, const int64_t *repeats, mt_tensor **out);
mt_status mt_rot90(mt_tensor *t, int64_t k, int64_t dim0, int64_t dim1, mt_tensor **out);
mt_status mt_narrow_copy(mt_tensor *t, int64_t dim, int64_t start, int64_t length, mt_tensor **out);
/* tril (upper = 0) or triu (upper = 1); out NULL for a new tensor, or t itself for tril_/triu_ */
mt_status mt_tril(mt_tensor *t, int64_t diagonal, int upper, mt_tensor *out, mt_tensor **result);
mt_status mt_diagonal(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out); /* a view */
mt_status mt_diag_embed(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out);
mt_status mt_diag(mt_tensor *t, int64_t diagonal, mt_tensor **out);
mt_status mt_trace(mt_tensor *t, mt_tensor **out);
mt_status mt_index_select(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out);
mt_status mt_gather(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out);
mt_status mt_take(mt_tensor *t, mt_tensor *index, mt_tensor **out);
/* kind: MT_SCATTER*, reduce: MT_SR_*; src is a tensor, or with is_value a 0-dim tensor holding the value */
mt_status mt_scatter(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *src, int is_value,
                     int reduce, int include_self, int inplace, mt_tensor **out);
/* kind: MT_INDEX_*; source: index_add's/index_copy's source, or index_fill's 0-dim value; alpha: index_add's */
mt_status mt_index_op(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *source, double alpha,
                      int inplace, mt_tensor **out);
mt_status mt_masked_select(mt_tensor *t, mt_tensor *mask, mt_tensor **out);
mt_status mt_masked_scatter(mt_tensor *t, mt_tensor *mask, mt_tensor *source, int inplace, mt_tensor **out);
mt_status mt_nonzero(mt_tensor *t, mt_tensor **out); /* int64 [count, ndim], column-major as PyTorch's */
/* stable: 1 stable, 0 not, -1 not given (PyTorch's overload without it: another grad_fn name) */
mt_status mt_sort(mt_tensor *t, int64_t dim, int descending, int stable, mt_tensor **values, mt_tensor **indices);
mt_status mt_topk(mt_tensor *t, int64_t k, int64_t dim, int largest, int sorted, mt_tensor **values,
                  mt_tensor **indices);
mt_status mt_kthvalue(mt_tensor *t, int64_t k, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mt_cummax(int is_min, mt_tensor *t, int64_t dim, mt_tensor **values, mt_tensor **indices);
/* unique over all elements, or (has_dim) over the slices along dim; always sorted (as PyTorch's CPU
 * kernels), or grouped as they come when consecutive. inverse or counts NULL: not computed. */
mt_status mt_unique(mt_tensor *t, int consecutive, int has_dim, int64_t dim, mt_tensor **values, mt_tensor **inverse,
                    mt_tensor **counts);
/* right: upper bound; sorter may be NULL */
mt_status mt_searchsorted(mt_tensor *boundaries, mt_tensor *input, int out_int32, int right, mt_tensor *sorter,
                          mt_tensor **out);
mt_status mt_isin(mt_tensor *elements, mt_tensor *test_elements, int invert, mt_tensor **out);
mt_status mt_bincount(mt_tensor *t, mt_tensor *weights, int64_t minlength, mt_tensor **out); /* weights may be NULL */
/* histc / histogram's counts over input's float32/float64 elements: the bins between consecutive edges (1-D,
 * the input's dtype; the last bin closed, elements outside not counted); mode 1: histc's linear
 * interpolation, else the bin whose edges hold the element (mode 0: binary search, for any sorted edges;
 * 2: from the linear guess, for evenly spaced ones); weight (NULL: counts) of the input's dtype and size */
mt_status mt_histogram_counts(mt_tensor *input, mt_tensor *edges, mt_tensor *weight, int mode, mt_tensor **out);
/* the index each position of a 1-D count tensor repeats into (torch.repeat_interleave(repeats));
 * output_size < 0: computed */
mt_status mt_repeat_interleave(mt_tensor *repeats, int64_t output_size, mt_tensor **out);

/* ---- elementwise ops (the op enum below comes from csrc/ops.tbl) ------ */
/* out may be NULL (a new tensor) or a tensor to write into (out= / in-place). */
mt_status mt_unary(int op, mt_tensor *x, mt_tensor *out, mt_tensor **result);
mt_status mt_binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out,
                    mt_tensor **result);
/* b is a Python scalar; reflected means the scalar is the left operand. */
mt_status mt_binary_scalar(int op, mt_tensor *a, double f, int64_t i, int kind, int reflected,
                           double alpha, mt_tensor *out, mt_tensor **result);
/* Three tensor operands (a Python scalar becomes a wrapped-number tensor),
 * plus one scalar argument s (addcmul's value, nan_to_num's nan, ...). */
mt_status mt_ternary(int op, mt_tensor *a, mt_tensor *b, mt_tensor *c, double s,
                     mt_tensor *out, mt_tensor **result);
const char *mt_op_name(int op);
int mt_result_type(int n, mt_tensor *const *tensors); /* -1 (error set): float8 promotion */

/* ---- reductions ------------------------------------------------------- */
/* op: MT_RED_* (the selector families of csrc/ops.tbl, generated at the end of this header);
 * ndims <= 0 reduces every dim; dtype < 0 means PyTorch's default result dtype. */
mt_status mt_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype,
                    mt_tensor *out, mt_tensor **result);
/* max (is_min = 0) or min along dim: values and int64 indices of the first extreme */
mt_status mt_max_dim(int is_min, mt_tensor *x, int64_t dim, int keepdim, mt_tensor **values,
                     mt_tensor **indices);

/* ---- statistics, norms, scans, order statistics, more linear algebra --------
 * (kernels/cpu/reduce_stats.c, scan.c, linalg_ext.c, einsum.c; autograd in
 * autograd/formulas_reduce.c, formulas_linalg.c). dims as in mt_reduce. */
/* var (take_sqrt = 0) or std; mean != NULL also returns the mean (var_mean/std_mean) */
mt_status mt_var(mt_tensor *x, int ndims, const int64_t *dims, double correction, int keepdim, int take_sqrt,
                 mt_tensor **result, mt_tensor **mean);
/* linalg.vector_norm: ord may be +-INFINITY; dtype < 0: the input's */
mt_status mt_vector_norm(mt_tensor *x, double ord, int ndims, const int64_t *dims, int keepdim, int dtype,
                         mt_tensor **result);
mt_status mt_logsumexp(mt_tensor *x, int ndims, const int64_t *dims, int keepdim, mt_tensor **result);
/* cumulative op (MT_SCAN_*) along dim; dtype < 0: PyTorch's default (int64 for integral inputs) */
mt_status mt_scan(int op, mt_tensor *x, int64_t dim, int dtype, mt_tensor *out, mt_tensor **result);
/* median/nanmedian/mode (MT_SEL_*) along dim (values, int64 indices); has_dim = 0: of all elements, values only */
mt_status mt_median(int op, mt_tensor *x, int has_dim, int64_t dim, int keepdim, mt_tensor **values,
                    mt_tensor **indices);
enum mt_quantile_interp {
    MT_QUANTILE_LINEAR = 0,
    MT_QUANTILE_LOWER = 1,
    MT_QUANTILE_HIGHER = 2,
    MT_QUANTILE_MIDPOINT = 3,
    MT_QUANTILE_NEAREST = 4
};
/* quantile/nanquantile (ignore_nan); q is a 0-dim/1-D tensor, or NULL and qs the Python float */
mt_status mt_quantile(mt_tensor *x, mt_tensor *q, double qs, int has_dim, int64_t dim, int keepdim, int interpolation,
                      int ignore_nan, mt_tensor **result);
mt_status mt_addmv(mt_tensor *self, mt_tensor *mat, mt_tensor *vec, double beta, double alpha, mt_tensor *out,
                   mt_tensor **result);
mt_status mt_addr(mt_tensor *self, mt_tensor *vec1, mt_tensor *vec2, double beta, double alpha, mt_tensor *out,
                  mt_tensor **result);
mt_status mt_addbmm(mt_tensor *self, mt_tensor *batch1, mt_tensor *batch2, double beta, double alpha, mt_tensor *out,
                    mt_tensor **result);
mt_status mt_vdot(mt_tensor *a, mt_tensor *b, mt_tensor **result);
/* linalg.cross along dim (size 3), broadcasting a and b */
mt_status mt_cross(mt_tensor *a, mt_tensor *b, int64_t dim, mt_tensor **result);
/* tensordot contracting dims_a[i] of a with dims_b[i] of b */
mt_status mt_tensordot(mt_tensor *a, mt_tensor *b, int n, const int64_t *dims_a, const int64_t *dims_b,
                       mt_tensor **result);
/* einsum over n operands: permute/reshape/bmm, diagonals as views */
mt_status mt_einsum(const char *equation, int n, mt_tensor *const *operands, mt_tensor **result);

/* ---- linear algebra (OpenBLAS) ------------------------------------------ */
mt_status mt_mm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result);
mt_status mt_bmm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result);
mt_status mt_addmm(mt_tensor *self, mt_tensor *m1, mt_tensor *m2, double beta, double alpha, mt_tensor *out,
                   mt_tensor **result);
mt_status mt_baddbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out,
                     mt_tensor **result);
mt_status mt_dot(mt_tensor *a, mt_tensor *b, mt_tensor **result);
mt_status mt_mv(mt_tensor *m, mt_tensor *v, mt_tensor **result);
mt_status mt_matmul(mt_tensor *a, mt_tensor *b, mt_tensor **result);

/* ---- matrix factorisations on OpenBLAS's LAPACK (kernels/cpu/lapack.c; autograd in
 *      autograd/formulas_lapack.c). float32/float64 (and complex64/complex128 where PyTorch has them),
 *      batches of matrices [..., m, n]; results are batches of column-major matrices as PyTorch's.
 *      info: int32 per matrix, LAPACK's (0: success); check_errors turns a failure into MT_ERR_LINALG
 *      with PyTorch's text. */
mt_status mt_linalg_cholesky_ex(mt_tensor *a, int upper, int check_errors, mt_tensor **L, mt_tensor **info);
/* pivots: int32, 1-based as LAPACK's */
mt_status mt_linalg_lu_factor_ex(mt_tensor *a, int pivot, int check_errors, mt_tensor **LU, mt_tensor **pivots,
                                 mt_tensor **info);
mt_status mt_linalg_lu_solve(mt_tensor *LU, mt_tensor *pivots, mt_tensor *b, int left, int adjoint,
                             mt_tensor **result);
/* A X = B (left) or X A = B; B a (batch of) vector(s) under PyTorch's rule, or matrices */
mt_status mt_linalg_solve_ex(mt_tensor *a, mt_tensor *b, int left, int check_errors, mt_tensor **result,
                             mt_tensor **info);
mt_status mt_linalg_solve_triangular(mt_tensor *a, mt_tensor *b, int upper, int left, int unitriangular,
                                     mt_tensor **result);
mt_status mt_linalg_inv_ex(mt_tensor *a, int check_errors, mt_tensor **inverse, mt_tensor **info);
mt_status mt_linalg_det(mt_tensor *a, mt_tensor **result);
mt_status mt_linalg_slogdet(mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet);
/* eigenvalues ascending (real: complex input gives its real dtype); eigenvectors only when compute_v */
mt_status mt_linalg_eigh(mt_tensor *a, int upper, int compute_v, mt_tensor **eigenvalues, mt_tensor **eigenvectors);
/* linalg.eig (compute_v) and linalg.eigvals: complex results for real input too (float32 -> complex64),
 * eigenvectors of unit norm, only when compute_v */
mt_status mt_linalg_eig(mt_tensor *a, int compute_v, mt_tensor **eigenvalues, mt_tensor **eigenvectors);
/* singular values descending (real, as eigh's eigenvalues); without compute_uv, U and Vh are empty tensors */
mt_status mt_linalg_svd(mt_tensor *a, int full_matrices, int compute_uv, mt_tensor **U, mt_tensor **S,
                        mt_tensor **Vh);
enum mt_qr_mode {
    MT_QR_REDUCED = 0,
    MT_QR_COMPLETE = 1,
    MT_QR_R = 2 /* R only: Q is an empty tensor */
};
mt_status mt_linalg_qr(mt_tensor *a, int mode, mt_tensor **Q, mt_tensor **R);
/* min ||A X - B|| with one of LAPACK's drivers (gelsy is PyTorch's CPU default); without has_rcond,
 * rcond is eps * max(m, n). rank (int64) is empty for gels, singular_values for gels and gelsy,
 * residuals unless m > n, the driver is not gelsy and (gelsd, gelss) every matrix has rank n. */
enum mt_lstsq_driver {
    MT_LSTSQ_GELS = 0,
    MT_LSTSQ_GELSY = 1,
    MT_LSTSQ_GELSD = 2,
    MT_LSTSQ_GELSS = 3
};
mt_status mt_linalg_lstsq(mt_tensor *a, mt_tensor *b, int has_rcond, double rcond, int driver, mt_tensor **solution,
                          mt_tensor **residuals, mt_tensor **rank, mt_tensor **singular_values);
/* LDL^T (LDL^H when hermitian and complex) by Bunch-Kaufman, LAPACK's lower packed form: LD's strict
 * upper triangle zeroed, pivots LAPACK's (1-based; negative pairs mark 2x2 blocks of D), info per matrix;
 * neither is differentiable (PyTorch's NotImplemented node) */
mt_status mt_linalg_ldl_factor_ex(mt_tensor *a, int hermitian, mt_tensor **LD, mt_tensor **pivots, mt_tensor **info);
/* pivots of any integer dtype; LD and B batches broadcast */
mt_status mt_linalg_ldl_solve(mt_tensor *LD, mt_tensor *pivots, mt_tensor *b, int hermitian, mt_tensor **result);
/* torch.geqrf: reflectors under R (column-major) and tau; not differentiable (GeqrfBackward0 says so) */
mt_status mt_geqrf(mt_tensor *a, mt_tensor **A, mt_tensor **tau);
/* torch.ormqr: op(Q) C (left) or C op(Q) with Q from geqrf's reflectors, op = ^H when transpose. The kernel
 * only: the Python layer records OrmqrBackward0 (its formula goes through householder_product) */
mt_status mt_ormqr(mt_tensor *a, mt_tensor *tau, mt_tensor *c, int left, int transpose, mt_tensor **result);
/* LAPACK's engine: MKL's libmkl_rt at path for QR, the SVD, eigh and gels where it is faster (set before the
 * first factorisation; the Python layer finds PyPI's `mkl`), else OpenBLAS's for all; mt_lapack_engine names
 * the one chosen ("mkl", "openblas", or "" before the first factorisation that asks) */
mt_status mt_lapack_use_mkl(const char *path);
const char *mt_lapack_engine(void);

/* ---- discrete Fourier transforms (kernels/cpu/fft.c on MKL or FFTW, opened at first use; autograd/formulas_fft.c) ----
 * PyTorch's _fft_c2c, _fft_r2c and _fft_c2r. normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n being
 * the signal's number of points. r2c's and c2r's halved dimension is the last of dims; c2r reads the
 * first last_dim_size/2+1 entries of it. */
mt_status mt_fft_c2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int forward, mt_tensor **out);
mt_status mt_fft_r2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int onesided, mt_tensor **out);
mt_status mt_fft_c2r(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int64_t last_dim_size,
                     mt_tensor **out);
/* the engine: MKL's libmkl_rt at path (set before the first transform; the Python layer finds PyPI's `mkl`),
 * else FFTW; mt_fft_engine names the one chosen ("mkl", "fftw", or "" before the first transform) */
mt_status mt_fft_use_mkl(const char *path);
const char *mt_fft_engine(void);

/* ---- NN kernels (kernels/cpu/softmax.c norm.c activation.c embedding.c dropout.c
 *      attention.c; their autograd in autograd/formulas_nn.c) ------------------- */
/* softmax (log = 0) or log_softmax (log = 1) along dim; dtype >= 0 converts the input first */
mt_status mt_softmax(mt_tensor *x, int64_t dim, int log, int dtype, mt_tensor **out);
/* _softmax_backward_data / _log_softmax_backward_data: the input's gradient from the output */
mt_status mt_softmax_backward(mt_tensor *grad, mt_tensor *output, int64_t dim, int log, mt_tensor **out);
/* layer_norm over the last nnorm dims (sizes in shape); weight and bias may be NULL */
mt_status mt_layer_norm(mt_tensor *x, int nnorm, const int64_t *shape, mt_tensor *weight, mt_tensor *bias,
                        double eps, mt_tensor **out);
/* native_batch_norm over x [N, C, *]: weight, bias, running_mean, running_var [C] or NULL; in
 * training the batch statistics normalise and the running ones are updated in place (unbiased
 * variance); save_mean/save_invstd are [C] in training and empty in eval */
mt_status mt_batch_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, mt_tensor *running_mean,
                        mt_tensor *running_var, int training, double momentum, double eps, mt_tensor **out,
                        mt_tensor **save_mean, mt_tensor **save_invstd);
/* native_group_norm over x [N, C, *] in `groups` groups of channels: mean/rstd [N, groups] */
mt_status mt_group_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, int64_t groups, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);

/* Elementwise activations (MT_ACT_*); a, b, c are their scalar parameters. */
/* out NULL: a new tensor; out == x: in place */
mt_status mt_activation(int act, mt_tensor *x, double a, double b, double c, mt_tensor *out, mt_tensor **result);
/* grad * f'(input) (relu: input is the forward's result), as PyTorch's <act>_backward */
mt_status mt_activation_backward(int act, mt_tensor *grad, mt_tensor *input, double a, double b, double c,
                                 mt_tensor **result);

/* embedding: rows of a 2-D weight by int64/int32 indices (padding_idx < 0: none); the backward
 * sums gradient rows into [num_weights, D], skipping padding_idx, optionally / index frequency */
mt_status mt_embedding(mt_tensor *weight, mt_tensor *indices, int64_t padding_idx, int scale_grad_by_freq,
                       mt_tensor **out);
mt_status mt_embedding_backward(mt_tensor *grad, mt_tensor *indices, int64_t num_weights, int64_t padding_idx,
                                int scale_grad_by_freq, mt_tensor **out);
/* rows of weight named by indices whose norm_type-norm exceeds max_norm are scaled down, in place */
mt_status mt_embedding_renorm_(mt_tensor *weight, mt_tensor *indices, double max_norm, double norm_type);

/* pdist / cdist's direct form (kernels/cpu/distance.c; PyTorch's _pdist_forward, _cdist_forward and
 * their backward kernels), float32/float64, no autograd: pdist of x (n, m) gives the n(n-1)/2 pairs'
 * p-norm distances; cdist of x1 (B, r1, m), x2 (B, r2, m) gives (B, r1, r2); cdist's backward gives x1's
 * gradient (x2's: the same call with grad and dist transposed and x1, x2 swapped) */
mt_status mt_pdist_forward(mt_tensor *x, double p, mt_tensor **out);
mt_status mt_pdist_backward(mt_tensor *grad, mt_tensor *x, double p, mt_tensor *dist, mt_tensor **out);
mt_status mt_cdist_forward(mt_tensor *x1, mt_tensor *x2, double p, mt_tensor **out);
mt_status mt_cdist_backward(mt_tensor *grad, mt_tensor *x1, mt_tensor *x2, double p, mt_tensor *dist,
                            mt_tensor **out);

/* dropout (kind 0), feature dropout (channels of [N, C, ...]), alpha dropout, or both; masks drawn
 * with bernoulli_ as PyTorch draws them; without train / with p == 0 the input itself comes back */
struct mt_generator; /* the typedef is in the random numbers section */
enum mt_dropout_kind {
    MT_DROPOUT_FEATURE = 1,
    MT_DROPOUT_ALPHA = 2
};
mt_status mt_dropout(mt_tensor *x, double p, int train, int kind, int inplace, struct mt_generator *g,
                     mt_tensor **out);
/* F.linear: input @ weight.T + bias (bias may be NULL), composed as PyTorch composes it */
mt_status mt_linear(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, mt_tensor **out);
/* ---- scaled_dot_product_attention (kernels/cpu/attention.c, autograd/formulas_attention.c) ----
 * F.scaled_dot_product_attention as PyTorch 2.13 runs it on CPU: its checks and error texts, its
 * backend choice, then the fused kernel (4-D inputs, no dropout; ScaledDotProductFlashAttentionForCpu
 * Backward0) or the math path composed of public ops. mask: NULL, bool (True takes part) or additive
 * (float32 or the query dtype); scale is used when has_scale; backends: the MT_SDPA_* bits enabled
 * (torch.nn.attention.sdpa_kernel); g: the generator for dropout (NULL: default). */
enum mt_sdpa_backend {
    MT_SDPA_MATH = 1,
    MT_SDPA_FLASH = 2
};
mt_status mt_scaled_dot_product_attention(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask,
                                          double dropout_p, int is_causal, int has_scale, double scale,
                                          int enable_gqa, int backends, struct mt_generator *g, mt_tensor **out);
/* ---- losses and spatial ops --------------------------------------------
 * Kernels in kernels/cpu/{loss,conv,pool,upsample,pad}.c, autograd wrappers and
 * formulas in autograd/formulas_spatial.c. PyTorch's argument conventions:
 * reduction is its enum (0 none, 1 mean, 2 sum), an absent optional tensor is
 * NULL, spatial arguments are one int64 per spatial dim. */
enum mt_reduction {
    MT_REDUCTION_NONE = 0,
    MT_REDUCTION_MEAN = 1,
    MT_REDUCTION_SUM = 2
};
/* nll_loss as torch.nn.functional (nll_loss_nd: 1-D, 2-D, N-D inputs) */
mt_status mt_nll_loss(mt_tensor *input, mt_tensor *target, mt_tensor *weight, int reduction, int64_t ignore_index,
                      mt_tensor **out);
/* class indices or probabilities (target shaped like input), label smoothing */
mt_status mt_cross_entropy(mt_tensor *input, mt_tensor *target, mt_tensor *weight, int reduction,
                           int64_t ignore_index, double label_smoothing, mt_tensor **out);
/* the losses with a fused backward in PyTorch (MT_LOSS_*: MseLossBackward0, ...) */
mt_status mt_pointwise_loss(int kind, mt_tensor *input, mt_tensor *target, mt_tensor *weight, mt_tensor *pos_weight,
                            double param, int reduction, mt_tensor **out);
/* convolution (transposed = 0) or transposed convolution over nspatial = 1, 2 or 3 dims of a
 * batched input; pad_same: PyTorch's padding='same' (padding is then ignored) */
mt_status mt_convolution(mt_tensor *input, mt_tensor *weight, mt_tensor *bias, int nspatial, const int64_t *stride,
                         const int64_t *padding, int pad_same, const int64_t *dilation, int transposed,
                         const int64_t *output_padding, int64_t groups, mt_tensor **out);
/* im2col / col2im (F.unfold / F.fold); two values per argument (height, width) */
mt_status mt_im2col(mt_tensor *input, const int64_t *kernel_size, const int64_t *dilation, const int64_t *padding,
                    const int64_t *stride, mt_tensor **out);
mt_status mt_col2im(mt_tensor *input, const int64_t *output_size, const int64_t *kernel_size, const int64_t *dilation,
                    const int64_t *padding, const int64_t *stride, mt_tensor **out);
/* pooling (MT_POOL_*) of a [N,] C, H, W (nspatial = 2) or [N,] C, D, H, W (nspatial = 3) input, nspatial values per
 * argument; indices (int64, flat within the spatial volume, max kinds only) may be NULL */
mt_status mt_pool(int kind, int nspatial, mt_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                  const int64_t *padding, const int64_t *dilation, int ceil_mode, int count_include_pad,
                  int64_t divisor_override, mt_tensor **out, mt_tensor **indices);
/* F.pad (mode: MT_PAD_*): pad holds (left, right) pairs from the last dim backwards */
mt_status mt_pad(mt_tensor *input, int npad, const int64_t *pad, int mode, double value, mt_tensor **out);
/* torchvision's operators (kernels/cpu/vision.c), registered as torch.ops.torchvision.* by
 * mindtorch_v2/_vision_ops.py; float32/float64 on CPU; no autograd (torchvision registers it). */
mt_status mt_vision_nms(mt_tensor *dets, mt_tensor *scores, double iou_threshold, mt_tensor **out);
enum mt_vision_roi_kind {
    MT_ROI_ALIGN = 0,
    MT_ROI_POOL = 1,
    MT_PS_ROI_ALIGN = 2,
    MT_PS_ROI_POOL = 3
};
/* input [N, C, H, W], rois [K, 5]; index: int32 argmax (ROI_POOL) or channel mapping (PS_*), NULL for ROI_ALIGN */
mt_status mt_vision_roi(int kind, mt_tensor *input, mt_tensor *rois, double spatial_scale, int64_t pooled_h,
                        int64_t pooled_w, int64_t sampling_ratio, int aligned, mt_tensor **out, mt_tensor **index);
/* the input gradient, of size input_size[4] */
mt_status mt_vision_roi_backward(int kind, mt_tensor *grad, mt_tensor *rois, mt_tensor *index, double spatial_scale,
                                 int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio, int aligned,
                                 const int64_t *input_size, mt_tensor **out);
/* deform_conv2d's sampling; geometry = {kh, kw, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w};
 * mask may be NULL; columns [C * kh * kw, N * out_h * out_w]. col2im gives the input, offset and mask
 * gradients from the columns' gradient (grad_mask NULL without a mask). */
mt_status mt_vision_deform_im2col(mt_tensor *input, mt_tensor *offset, mt_tensor *mask, const int64_t *geometry,
                                  int64_t offset_groups, mt_tensor **columns);
mt_status mt_vision_deform_col2im(mt_tensor *columns, mt_tensor *input, mt_tensor *offset, mt_tensor *mask,
                                  const int64_t *geometry, int64_t offset_groups, mt_tensor **grad_input,
                                  mt_tensor **grad_offset, mt_tensor **grad_mask);
/* interpolate (mode: MT_UPSAMPLE_*) a [N, C, (H,) W] input to output_size (nspatial values); scales[i] > 0 is the
 * scale_factor PyTorch passes on (0: none). float types; uint8 for nearest and 2-D (bi)linear and the
 * antialiased modes, in PyTorch's int16 fixed point */
mt_status mt_upsample(mt_tensor *input, int mode, int nspatial, const int64_t *output_size, const double *scales,
                      int align_corners, mt_tensor **out);

/* ---- autograd --------------------------------------------------------- */
void mt_set_grad_enabled(int on);              /* thread-local */
int mt_is_grad_enabled(void);
int mt_tensor_requires_grad(const mt_tensor *t);
mt_status mt_tensor_set_requires_grad(mt_tensor *t, int on);
int mt_tensor_is_leaf(const mt_tensor *t);
int mt_tensor_retains_grad(const mt_tensor *t);
mt_status mt_tensor_retain_grad(mt_tensor *t);
mt_tensor *mt_tensor_grad(mt_tensor *t);       /* new reference, or NULL */
mt_status mt_tensor_set_grad(mt_tensor *t, mt_tensor *grad);
const char *mt_tensor_grad_fn_name(const mt_tensor *t); /* NULL for a leaf */
mt_status mt_detach(mt_tensor *t, mt_tensor **out);
void mt_detach_(mt_tensor *t);
mt_status mt_tensor_set_data(mt_tensor *t, mt_tensor *src); /* t.data = src */
/* Backward from roots with root gradients. With ninputs > 0 the gradients reaching
 * inputs are returned in input_grads (NULL if unreached); accumulate = 1 writes
 * leaf .grad (backward), 0 only returns them (autograd.grad). */
mt_status mt_backward(int nroots, mt_tensor *const *roots, mt_tensor *const *grads, int retain_graph,
                      int create_graph, int ninputs, mt_tensor *const *inputs, mt_tensor **input_grads,
                      int accumulate);

/* ---- autograd: graph nodes, hooks, custom Functions, modes (csrc/autograd/node_api.c) ----
 * Nodes (grad_fn, AccumulateGrad) are reference counted like tensors. The engine reaches
 * Python (tensor/node hooks, a custom Function's backward, anomaly traces) only through the
 * one callback registered with mt_autograd_set_callback, passing the opaque handle that
 * Python attached to the node or tensor; the core never looks inside a handle. The callback
 * returns an mt_status; out[] entries are new references (NULL: keep / none). */
typedef struct mt_node mt_node;
enum mt_callback_kind {
    MT_CB_RELEASE = 0,         /* the node (or tensor, node == NULL) owning handle is gone */
    MT_CB_TENSOR_PRE = 1,      /* in: node's summed output gradients [n_out]; out: replacements */
    MT_CB_NODE_PRE = 2,        /* in: grad_outputs [n_out]; out: replacements */
    MT_CB_NODE_POST = 3,       /* in: grad_inputs [n_next] then grad_outputs [n_out]; out: replacements [n_next] */
    MT_CB_POST_ACCUMULATE = 4, /* in[0]: the leaf, after its .grad was written */
    MT_CB_BACKWARD = 5,        /* a Function: in: grad_outputs [n_out]; out: grad_inputs [n_next] */
    MT_CB_FREE_SAVED = 6,      /* a Function: backward ran without retain_graph */
    MT_CB_ANOMALY_RECORD = 7,  /* anomaly mode: node was just recorded (handle NULL) */
    MT_CB_ANOMALY_REPORT = 8,  /* anomaly mode: node's backward failed */
    MT_CB_PACK = 9,            /* saved_tensors_hooks: in[0] the tensor saved; out[0] receives Python's
                                  handle for the packed object (a void *, not a tensor) */
    MT_CB_UNPACK = 10          /* saved_tensors_hooks: handle of the packed object; out[0]: the tensor */
};
enum mt_hook_flag {
    MT_HOOK_TENSOR_PRE = 1,
    MT_HOOK_PRE = 2,
    MT_HOOK_POST = 4,
    MT_HOOK_POST_ACCUMULATE = 8,
    MT_HOOK_FUNCTION = 16
};
typedef mt_status (*mt_autograd_callback)(void *handle, int kind, mt_node *node, int nin,
                                          mt_tensor *const *in, int nout, mt_tensor **out);
void mt_autograd_set_callback(mt_autograd_callback cb);
void mt_node_retain(mt_node *n);
void mt_node_release(mt_node *n);
mt_node *mt_tensor_grad_fn(mt_tensor *t);          /* new reference, NULL for a leaf */
int mt_tensor_output_nr(mt_tensor *t);
mt_tensor *mt_tensor_base(mt_tensor *t);           /* a view's base (new reference) or NULL */
int mt_tensor_is_inference(const mt_tensor *t);
const char *mt_node_name(const mt_node *n);
int64_t mt_node_seq(const mt_node *n);
int mt_node_num_next(const mt_node *n);
mt_node *mt_node_next(mt_node *n, int i, int *input_nr); /* new reference or NULL */
int mt_node_num_outputs(const mt_node *n);
mt_tensor *mt_node_variable(mt_node *n);           /* AccumulateGrad's leaf (new reference) or NULL */
void *mt_node_handle(const mt_node *n);
/* attach Python state (released with MT_CB_RELEASE when the node dies) and the hooks it has */
void mt_node_set_handle(mt_node *n, void *handle, int hook_flags);
void *mt_tensor_handle(const mt_tensor *t);
void mt_tensor_set_handle(mt_tensor *t, void *handle, int hook_flags);
/* A custom Function's node: one input per tensor argument (NULL allowed); each output with
 * differentiable[k] gets the node as grad_fn (dirty[k]: an input modified in place, which is
 * rebased). Backward runs MT_CB_BACKWARD with handle. *node is borrowed (the outputs own it). */
mt_status mt_function_record(const char *name, void *handle, int nin, mt_tensor *const *inputs, int nout,
                             mt_tensor *const *outputs, const int *differentiable, const int *dirty,
                             int materialize_grads, mt_node **node);
/* t (a detached alias of n's output output_nr) re-attached to n, as an unpacked saved output */
mt_status mt_node_attach(mt_node *n, mt_tensor *t, int output_nr, mt_tensor **out);
/* thread-local inference mode: tensors allocated in it are inference tensors */
void mt_set_inference_mode(int on);
int mt_is_inference_mode_enabled(void);
/* anomaly mode (process-wide, as PyTorch): 0 off, 1 on, 2 on and checking backward NaN */
void mt_set_anomaly_mode(int mode);
int mt_anomaly_mode(void);

/* ---- autograd extras (autograd/node_names.c, autograd/saved_hooks.c) -----------------
 * PyTorch's node name for the overload Python called: t's grad_fn (just recorded) is renamed;
 * name must be one of the table in node_names.c (ValueError otherwise). */
mt_status mt_tensor_rename_grad_fn(mt_tensor *t, const char *name);
/* t has just taken the header of a view of itself (squeeze_, t_, ...): count the in-place op,
 * keep its new history as current, and name it (name may be NULL) */
mt_status mt_tensor_inplace_view(mt_tensor *t, const char *name);
/* saved_tensors_hooks are on in this thread (Python keeps the hooks; the core calls MT_CB_PACK
 * when an op saves a tensor and MT_CB_UNPACK when a formula reads it) */
void mt_set_saved_tensors_hooks(int on);

/* ---- random numbers (core/rng.c, kernels/cpu/random.c) ------------------
 * A CPU generator reproducing PyTorch's CPUGeneratorImpl bit for bit (mt19937
 * plus the cached Box-Muller value; get/set_state in PyTorch's 5056-byte
 * layout). Every generator has a mutex held for the whole of each call. A
 * NULL generator means the process-wide default one, which is never freed
 * (retain/release ignore it). */
typedef struct mt_generator mt_generator;
mt_status mt_generator_create(uint64_t seed, mt_generator **out);
mt_generator *mt_generator_default(void);
void mt_generator_retain(mt_generator *g);
void mt_generator_release(mt_generator *g);
int mt_generator_is_default(const mt_generator *g);
void mt_generator_manual_seed(mt_generator *g, uint64_t seed);
uint64_t mt_generator_seed(mt_generator *g);          /* reseed from /dev/urandom; returns the seed */
uint64_t mt_generator_initial_seed(mt_generator *g);
uint32_t mt_generator_random(mt_generator *g);        /* one 32-bit draw */
uint64_t mt_generator_random64(mt_generator *g);      /* two draws, first is the high word */
mt_status mt_generator_get_state(mt_generator *g, mt_tensor **out); /* uint8[5056] */
mt_status mt_generator_set_state(mt_generator *g, mt_tensor *state);
void mt_generator_copy_state(mt_generator *dst, mt_generator *src);

/* In-place fill of t, or a new contiguous tensor filled (kind: MT_RAND_*: rand, randn, randint...). */
mt_status mt_rand_fill_(mt_tensor *t, int kind, double f0, double f1, int64_t i0, int64_t i1, mt_generator *g);
mt_status mt_rand_new(int kind, int ndim, const int64_t *sizes, int dtype, int device, double f0, double f1,
                      int64_t i0, int64_t i1, mt_generator *g, mt_tensor **out);
mt_status mt_uniform_(mt_tensor *t, double from, double to, mt_generator *g);
mt_status mt_normal_(mt_tensor *t, double mean, double std, mt_generator *g);
mt_status mt_random_(mt_tensor *t, mt_generator *g);
mt_status mt_random_from_to_(mt_tensor *t, int64_t from, int64_t to, int has_to, mt_generator *g);
mt_status mt_bernoulli_(mt_tensor *t, double p, mt_generator *g);
mt_status mt_bernoulli_tensor_(mt_tensor *t, mt_tensor *p, mt_generator *g);
mt_status mt_exponential_(mt_tensor *t, double lambd, mt_generator *g);
mt_status mt_randperm(int64_t n, int dtype, int device, mt_generator *g, mt_tensor **out);
mt_status mt_multinomial(mt_tensor *probs, int64_t n_sample, int replacement, mt_generator *g, mt_tensor **out);
/* Which of PyTorch's per-CPU-capability kernels the fills follow: bit 0 = FMA contraction
 * (AVX2/AVX-512 builds), bit 1 = the AVX2 normal_ (x86 with AVX2+FMA unless
 * ATEN_CPU_CAPABILITY=default). */
int mt_rand_capability(void);
/* PyTorch's warning of the last random_ on a float range wider than the mantissa, or NULL */
const char *mt_rand_take_warning(void);
/* torch.normal with a tensor mean and/or std (NULL: the double is used) */
mt_status mt_normal_tensors(mt_tensor *mean, mt_tensor *std, double mean_s, double std_s, mt_generator *g,
                            mt_tensor **out);

/* PyTorch's per-element samplers (kernels/cpu/samplers.c), each holding g's lock and drawing in the output's
 * row-major order as ATen's Distributions.cpp does: torch._standard_gamma, _sample_dirichlet, poisson,
 * binomial (count and prob of one dtype, prob broadcast to count's shape), and the reparameterization
 * gradients _standard_gamma_grad(alpha, sample) and _dirichlet_grad(x, alpha, total). No autograd here. */
mt_status mt_standard_gamma(mt_tensor *alpha, mt_generator *g, mt_tensor **out);
mt_status mt_sample_dirichlet(mt_tensor *alpha, mt_generator *g, mt_tensor **out);
mt_status mt_poisson(mt_tensor *rates, mt_generator *g, mt_tensor **out);
mt_status mt_binomial(mt_tensor *count, mt_tensor *prob, mt_generator *g, mt_tensor **out);
mt_status mt_standard_gamma_grad(mt_tensor *alpha, mt_tensor *x, mt_tensor **out);
mt_status mt_dirichlet_grad(mt_tensor *x, mt_tensor *alpha, mt_tensor *total, mt_tensor **out);

/* ---- multi-output views (autograd/multi_view.c) ------------------------------
 * n views of t along dim recorded as one node with n outputs, as PyTorch does: split_size >= 0 is
 * split(t, split_size) (SplitBackward0, chunk too), -1 split_with_sizes (SplitWithSizesBackward0).
 * unbind writes t's size at dim outputs (UnbindBackward0). */
mt_status mt_split_with_sizes(mt_tensor *t, int64_t dim, int n, const int64_t *sizes, int64_t split_size,
                              mt_tensor **outs);
mt_status mt_unbind(mt_tensor *t, int64_t dim, mt_tensor **outs);
/* unbind_copy: unbind's outputs, each copied into a new contiguous tensor */
mt_status mt_unbind_copy(mt_tensor *t, int64_t dim, mt_tensor **outs);
/* what a node keeps for its backward (grad_fn._saved_*, autograd/node_saved.c): saved tensor slot
 * (NULL: none), its integer arguments (25 + 2 values; returns how many dims it holds), its 4 float
 * arguments, an input's / output's sizes (returns ndim, -1: no such input/output; sizes holds 25) */
mt_status mt_node_saved(mt_node *n, int slot, mt_tensor **out);
int mt_node_int_args(const mt_node *n, int64_t *iv);
void mt_node_float_args(const mt_node *n, double *s);
int mt_node_input_sizes(const mt_node *n, int i, int64_t *sizes);
int mt_node_output_sizes(const mt_node *n, int i, int64_t *sizes);

/* ---- optimizer steps (kernels/cpu/optim.c) --------------------------------
 * One call updates one parameter in place with PyTorch's single-tensor
 * (foreach=False) formula of torch.optim.<Name>, element by element: param,
 * grad and state tensors share shape and floating dtype (float16/bfloat16
 * compute in float32, rounded to the dtype where PyTorch materialises a
 * tensor). step is the step count after this step's increment. */
enum mt_optim_flag {
    MT_OPTIM_MAXIMIZE = 1,
    MT_OPTIM_AMSGRAD = 2,
    MT_OPTIM_DECOUPLED = 4,    /* decoupled weight decay (AdamW, NAdam/RAdam decoupled_weight_decay) */
    MT_OPTIM_NESTEROV = 8,
    MT_OPTIM_CENTERED = 16,
    MT_OPTIM_FIRST = 32        /* SGD: the momentum buffer is new (it becomes a copy of the grad) */
};
mt_status mt_sgd_step(mt_tensor *param, mt_tensor *grad, mt_tensor *momentum_buffer, double lr, double momentum,
                      double dampening, double weight_decay, int flags);
mt_status mt_adam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                       mt_tensor *max_exp_avg_sq, double lr, double beta1, double beta2, double eps,
                       double weight_decay, double step, int flags);
mt_status mt_adagrad_step(mt_tensor *param, mt_tensor *grad, mt_tensor *state_sum, double lr, double weight_decay,
                          double lr_decay, double eps, double step, int flags);
mt_status mt_rmsprop_step(mt_tensor *param, mt_tensor *grad, mt_tensor *square_avg, mt_tensor *grad_avg,
                          mt_tensor *momentum_buffer, double lr, double alpha, double eps, double weight_decay,
                          double momentum, int flags);
mt_status mt_adadelta_step(mt_tensor *param, mt_tensor *grad, mt_tensor *square_avg, mt_tensor *acc_delta,
                           double lr, double rho, double eps, double weight_decay, int flags);
mt_status mt_adamax_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_inf, double lr,
                         double beta1, double beta2, double eps, double weight_decay, double step, int flags);
/* mu, mu_next and mu_product (already multiplied by mu) as torch.optim.NAdam computes them */
mt_status mt_nadam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq, double lr,
                        double beta1, double beta2, double eps, double weight_decay, double step, double mu,
                        double mu_next, double mu_product, int flags);
mt_status mt_radam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq, double lr,
                        double beta1, double beta2, double eps, double weight_decay, double step, int flags);

/* ---- profiler (core/profiler.c; torch.profiler) ----------------------------
 * While started, every op entry and every record_function range appends an event. Read them
 * after mt_profiler_stop (the array belongs to the core until the next start). Times are
 * CLOCK_MONOTONIC nanoseconds, the clock of Python's time.perf_counter_ns. */
enum mt_prof_flag {
    MT_PROF_ON = 1,
    MT_PROF_SHAPES = 2,  /* record_shapes */
    MT_PROF_MEMORY = 4   /* profile_memory */
};
enum mt_prof_kind {
    MT_PROF_OP = 0,      /* an op: PyTorch's name without "aten::" */
    MT_PROF_INPLACE = 1, /* an op run in place: the name gains PyTorch's "_" */
    MT_PROF_RANGE = 2,   /* a record_function range */
    MT_PROF_NODE = 3     /* a backward node run by the engine (PyTorch: autograd::engine::evaluate_function) */
};
typedef struct mt_prof_event {
    const char *name;
    int64_t start_ns;
    int64_t end_ns;      /* -1: still open when the profiler stopped */
    int64_t parent;      /* index of the enclosing event on the same thread, -1 at top level */
    int64_t thread;      /* the OS thread id */
    int64_t bytes;       /* bytes allocated minus freed while it ran, children included (MT_PROF_MEMORY) */
    int64_t shapes;      /* its input shapes in mt_profiler_shapes(): per input ndim (-1: none), sizes */
    int ninputs;         /* 0 without MT_PROF_SHAPES */
    int kind;
} mt_prof_event;
mt_status mt_profiler_start(int flags);
void mt_profiler_stop(void);
int64_t mt_profiler_count(void);
const mt_prof_event *mt_profiler_events(void);
const int64_t *mt_profiler_shapes(void);
int64_t mt_profiler_now(void);
/* a record_function range (name copied); *id < 0 when not recording */
mt_status mt_profiler_range_begin(const char *name, int64_t *id);
void mt_profiler_range_end(int64_t id);

/* ---- BEGIN GENERATED SELECTORS (tools/gen_ops.py from csrc/ops.tbl; do not edit) ---- */
enum mt_reduce_op {
    MT_RED_SUM = 0,
    MT_RED_PROD = 1,
    MT_RED_MEAN = 2,
    MT_RED_AMAX = 3,
    MT_RED_AMIN = 4,
    MT_RED_ALL = 5,
    MT_RED_ANY = 6,
    MT_RED_NANSUM = 7, /* sum with NaN counted as 0 */
    MT_RED_COUNT_NONZERO = 8, /* int64 count */
    MT_NUM_RED = 9
};
enum mt_scan_op {
    MT_SCAN_CUMSUM = 0,
    MT_SCAN_CUMPROD = 1,
    MT_SCAN_LOGCUMSUMEXP = 2,
    MT_NUM_SCAN = 3
};
enum mt_select_op {
    MT_SEL_MEDIAN = 0,
    MT_SEL_NANMEDIAN = 1,
    MT_SEL_MODE = 2,
    MT_NUM_SEL = 3
};
enum mt_activation {
    MT_ACT_RELU = 0,
    MT_ACT_HARDTANH = 1, /* a = min_val, b = max_val (relu6: 0, 6) */
    MT_ACT_LEAKY_RELU = 2, /* a = negative_slope */
    MT_ACT_ELU = 3, /* a = alpha, b = scale, c = input_scale (elu, selu) */
    MT_ACT_CELU = 4, /* elu with a = alpha, b = 1, c = 1 / alpha */
    MT_ACT_SILU = 5,
    MT_ACT_MISH = 6,
    MT_ACT_GELU = 7,
    MT_ACT_GELU_TANH = 8,
    MT_ACT_SOFTPLUS = 9, /* a = beta, b = threshold */
    MT_ACT_HARDSIGMOID = 10,
    MT_ACT_HARDSWISH = 11,
    MT_ACT_SOFTSHRINK = 12, /* a = lambd */
    MT_ACT_HARDSHRINK = 13, /* a = lambd */
    MT_ACT_LOGSIGMOID = 14,
    MT_ACT_THRESHOLD = 15, /* a = threshold, b = value */
    MT_NUM_ACT = 16
};
enum mt_loss_kind {
    MT_LOSS_MSE = 0,
    MT_LOSS_SMOOTH_L1 = 1, /* param: beta */
    MT_LOSS_HUBER = 2, /* param: delta */
    MT_LOSS_BCE = 3, /* weight */
    MT_LOSS_BCE_LOGITS = 4, /* weight, pos_weight */
    MT_LOSS_SOFT_MARGIN = 5,
    MT_NUM_LOSS = 6
};
enum mt_pool_kind {
    MT_POOL_MAX = 0, /* kernel_size, stride, padding, dilation, ceil_mode */
    MT_POOL_AVG = 1, /* kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override (0: none) */
    MT_POOL_ADAPTIVE_MAX = 2, /* kernel_size is the output size */
    MT_POOL_ADAPTIVE_AVG = 3,
    MT_NUM_POOL = 4
};
enum mt_pad_mode {
    MT_PAD_CONSTANT = 0,
    MT_PAD_REFLECT = 1,
    MT_PAD_REPLICATE = 2,
    MT_PAD_CIRCULAR = 3,
    MT_NUM_PAD = 4
};
enum mt_upsample_mode {
    MT_UPSAMPLE_NEAREST = 0,
    MT_UPSAMPLE_NEAREST_EXACT = 1,
    MT_UPSAMPLE_LINEAR = 2, /* linear (1-D), bilinear (2-D) */
    MT_UPSAMPLE_BILINEAR_AA = 3, /* antialias=True (2-D only): PyTorch's separable filters */
    MT_UPSAMPLE_BICUBIC_AA = 4,
    MT_UPSAMPLE_BICUBIC = 5, /* plain bicubic (2-D only): cubic convolution, A = -0.75 */
    MT_NUM_UPSAMPLE = 6
};
enum mt_rand_kind {
    MT_RAND_UNIFORM = 0, /* uniform_(f0 = from, f1 = to) */
    MT_RAND_NORMAL = 1, /* normal_(f0 = mean, f1 = std) */
    MT_RAND_INT = 2, /* random_(): [0, 2^mantissa] floating, [0, max] integral */
    MT_RAND_FROM_TO = 3, /* random_(i0 = from, i1 = to): [from, to) */
    MT_RAND_FROM = 4, /* random_(i0 = from, None): [from, max] (full 64 bits if from = INT64_MIN) */
    MT_RAND_BERNOULLI = 5, /* bernoulli_(f0 = p) */
    MT_RAND_EXPONENTIAL = 6, /* exponential_(f0 = lambd) */
    MT_NUM_RAND = 7
};
enum mt_scatter_kind {
    MT_SCATTER = 0, /* scatter (reduce NONE, or the legacy SUM 'add' / PROD 'multiply') */
    MT_SCATTER_ADD = 1,
    MT_SCATTER_REDUCE = 2,
    MT_NUM_SCATTER = 3
};
enum mt_scatter_reduce {
    MT_SR_NONE = 0,
    MT_SR_SUM = 1,
    MT_SR_PROD = 2,
    MT_SR_MEAN = 3,
    MT_SR_AMAX = 4,
    MT_SR_AMIN = 5,
    MT_NUM_SR = 6
};
enum mt_index_op {
    MT_INDEX_ADD = 0,
    MT_INDEX_COPY = 1,
    MT_INDEX_FILL = 2,
    MT_NUM_INDEX = 3
};
/* ---- END GENERATED SELECTORS ---- */
/* ---- BEGIN GENERATED OPS (tools/gen_ops.py from csrc/ops.tbl; do not edit) ---- */
enum mt_op {
    MT_OP_ABS = 0,
    MT_OP_NEG = 1,
    MT_OP_SIGN = 2,
    MT_OP_SQRT = 3,
    MT_OP_RSQRT = 4,
    MT_OP_EXP = 5,
    MT_OP_EXPM1 = 6,
    MT_OP_LOG = 7,
    MT_OP_LOG1P = 8,
    MT_OP_LOG2 = 9,
    MT_OP_LOG10 = 10,
    MT_OP_SIN = 11,
    MT_OP_COS = 12,
    MT_OP_TAN = 13,
    MT_OP_TANH = 14,
    MT_OP_SIGMOID = 15,
    MT_OP_ERF = 16,
    MT_OP_RECIPROCAL = 17,
    MT_OP_FLOOR = 18,
    MT_OP_CEIL = 19,
    MT_OP_ROUND = 20,
    MT_OP_TRUNC = 21,
    MT_OP_BITWISE_NOT = 22,
    MT_OP_LOGICAL_NOT = 23,
    MT_OP_ISNAN = 24,
    MT_OP_ISINF = 25,
    MT_OP_ISFINITE = 26,
    MT_OP_ACOS = 27,
    MT_OP_ASIN = 28,
    MT_OP_ATAN = 29,
    MT_OP_SINH = 30,
    MT_OP_COSH = 31,
    MT_OP_ASINH = 32,
    MT_OP_ACOSH = 33,
    MT_OP_ATANH = 34,
    MT_OP_EXP2 = 35,
    MT_OP_ERFC = 36,
    MT_OP_ERFINV = 37,
    MT_OP_FREXP_MANTISSA = 38,
    MT_OP_FREXP_EXPONENT = 39,
    MT_OP_LGAMMA = 40,
    MT_OP_DIGAMMA = 41,
    MT_OP_TRIGAMMA = 42,
    MT_OP_SINC = 43,
    MT_OP_DEG2RAD = 44,
    MT_OP_RAD2DEG = 45,
    MT_OP_FRAC = 46,
    MT_OP_SGN = 47,
    MT_OP_SIGNBIT = 48,
    MT_OP_ADD = 49,
    MT_OP_SUB = 50,
    MT_OP_MUL = 51,
    MT_OP_DIV = 52,
    MT_OP_DIV_TRUNC = 53,
    MT_OP_DIV_FLOOR = 54,
    MT_OP_REMAINDER = 55,
    MT_OP_FMOD = 56,
    MT_OP_XLOGY = 57,
    MT_OP_POW = 58,
    MT_OP_MAXIMUM = 59,
    MT_OP_MINIMUM = 60,
    MT_OP_BITWISE_AND = 61,
    MT_OP_BITWISE_OR = 62,
    MT_OP_BITWISE_XOR = 63,
    MT_OP_BITWISE_LEFT_SHIFT = 64,
    MT_OP_BITWISE_RIGHT_SHIFT = 65,
    MT_OP_EQ = 66,
    MT_OP_NE = 67,
    MT_OP_LT = 68,
    MT_OP_LE = 69,
    MT_OP_GT = 70,
    MT_OP_GE = 71,
    MT_OP_LOGICAL_AND = 72,
    MT_OP_LOGICAL_OR = 73,
    MT_OP_LOGICAL_XOR = 74,
    MT_OP_ATAN2 = 75,
    MT_OP_HYPOT = 76,
    MT_OP_NEXTAFTER = 77,
    MT_OP_COPYSIGN = 78,
    MT_OP_FMAX = 79,
    MT_OP_FMIN = 80,
    MT_OP_LOGADDEXP = 81,
    MT_OP_LOGADDEXP2 = 82,
    MT_OP_GCD = 83,
    MT_OP_LCM = 84,
    MT_OP_TANH_BACKWARD = 85,
    MT_OP_SIGMOID_BACKWARD = 86,
    MT_OP_LOGIT_BACKWARD = 87,
    MT_OP_MSE = 88,
    MT_OP_HUBER = 89,
    MT_OP_SMOOTH_L1 = 90,
    MT_OP_MSE_BACKWARD = 91,
    MT_OP_HUBER_BACKWARD = 92,
    MT_OP_SMOOTH_L1_BACKWARD = 93,
    MT_OP_GLU_BACKWARD = 94,
    MT_OP_CONJ = 95,
    MT_OP_CONJ_PHYSICAL = 96,
    MT_OP_REAL = 97,
    MT_OP_IMAG = 98,
    MT_OP_ANGLE = 99,
    MT_OP_COMPLEX = 100,
    MT_OP_POLAR = 101,
    MT_OP_WHERE = 102,
    MT_OP_CLAMP = 103,
    MT_OP_LERP = 104,
    MT_OP_ADDCMUL = 105,
    MT_OP_ADDCDIV = 106,
    MT_OP_MASKED_FILL = 107,
    MT_OP_NAN_TO_NUM = 108,
    MT_NUM_OPS = 109
};
/* ---- END GENERATED OPS ---- */
