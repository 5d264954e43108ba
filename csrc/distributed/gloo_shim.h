/* The C ABI of mindtorch_v2._gloo: a thin shim over Gloo (C++), in mt.h's rules. Opaque handles;
 * every call returns 0 or -1 with the text in a thread-local buffer (mtg_last_error), C++
 * exceptions never cross it; no CPython types. Preprocessor-free: build_gloo.py uses it as the cdef.
 * Tensor memory comes in as the core's data pointers (mt_tensor_data_ptr); dtype codes are mt.h's
 * enum mt_dtype, op codes are enum mtg_op. */

typedef struct mtg_context mtg_context;  /* one connected Gloo context (a full mesh of pairs) */
typedef struct mtg_buffer mtg_buffer;    /* a posted point-to-point send or receive */
typedef struct mtg_bytes mtg_bytes;      /* where a store's get callback puts the value */

enum mtg_op {
    MTG_SUM = 0,
    MTG_PRODUCT = 1,
    MTG_MIN = 2,
    MTG_MAX = 3,
    MTG_BAND = 4,
    MTG_BOR = 5,
    MTG_BXOR = 6
};

/* The rendezvous store, as function pointers into the caller (c10d's Store seen by Gloo, as
 * PyTorch's GlooStore). Each returns 0, or nonzero when the store raised (the caller keeps why). */
typedef struct mtg_store {
    void *handle;
    int (*set)(void *handle, const char *key, const char *data, size_t len);
    int (*get)(void *handle, const char *key, mtg_bytes *out);
    int (*wait)(void *handle, const char *const *keys, size_t nkeys, int64_t timeout_ms);
} mtg_store;

const char *mtg_last_error(void);
int mtg_bytes_assign(mtg_bytes *out, const char *data, size_t len);

/* 1 when the dtype can be carried, 1 when the op can reduce it */
int mtg_dtype_supported(int dtype);
int mtg_op_supported(int dtype, int op);

/* hostname or iface (GLOO_SOCKET_IFNAME) picks the address this rank listens on; "" for none */
int mtg_context_new(const mtg_store *store, int rank, int size, const char *hostname, const char *iface,
                    int64_t timeout_ms, mtg_context **out);
void mtg_context_free(mtg_context *ctx);

/* Collectives: count in elements of dtype for the reducing ones, bytes for the others. */
int mtg_allreduce(mtg_context *ctx, void *data, size_t count, int dtype, int op, uint32_t tag, int64_t timeout_ms);
int mtg_reduce(mtg_context *ctx, void *data, size_t count, int dtype, int op, int root, uint32_t tag,
               int64_t timeout_ms);
int mtg_broadcast(mtg_context *ctx, void *data, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtg_allgather(mtg_context *ctx, void *in, void *out, size_t nbytes, uint32_t tag, int64_t timeout_ms);
int mtg_gather(mtg_context *ctx, void *in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtg_scatter(mtg_context *ctx, void **in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtg_alltoallv(mtg_context *ctx, void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes,
                  uint32_t tag, int64_t timeout_ms);
int mtg_barrier(mtg_context *ctx, uint32_t tag, int64_t timeout_ms);

/* Point to point: post, then wait (peer gets the rank a receive from any source came from). */
int mtg_send(mtg_context *ctx, void *data, size_t nbytes, int dst, uint64_t slot, mtg_buffer **out);
int mtg_recv(mtg_context *ctx, void *data, size_t nbytes, int src, uint64_t slot, mtg_buffer **out);
int mtg_buffer_wait(mtg_buffer *buf, int64_t timeout_ms, int *peer);
void mtg_buffer_abort(mtg_buffer *buf);
void mtg_buffer_free(mtg_buffer *buf);
