/* The C ABI of mindtorch_v2._mpi: a thin shim over Open MPI's C API, in mt.h's rules (as
 * gloo_shim.h). Opaque handles; every call returns 0 or -1 with the text in a thread-local buffer
 * (mtm_last_error); no CPython types. Preprocessor-free: build_mpi.py uses it as the cdef.
 * The collectives have gloo_shim.h's signatures (the tag is unused: MPI orders a communicator's
 * collectives itself), so distributed_c10d.py issues them to either engine. Each runs as MPI's
 * non-blocking call, polled until done or timeout_ms: a rank that never arrives is an error. */

typedef struct mtm_comm mtm_comm;        /* one communicator (a process group) */
typedef struct mtm_buffer mtm_buffer;  /* a posted point-to-point send or receive */

const char *mtm_last_error(void);

/* MPI_Init_thread (MPI_THREAD_MULTIPLE) once per process; the world's rank and size */
int mtm_init(int *rank, int *size);
/* a duplicate of MPI_COMM_WORLD, errors returned rather than fatal */
int mtm_comm_world(mtm_comm **out);
/* collective over parent: the members' new communicator (ranks ordered by key); NULL for the others */
int mtm_comm_split(mtm_comm *parent, int member, int key, mtm_comm **out);
void mtm_comm_free(mtm_comm *comm);

int mtm_dtype_supported(int dtype);
int mtm_op_supported(int dtype, int op);

int mtm_allreduce(mtm_comm *comm, void *data, size_t count, int dtype, int op, uint32_t tag, int64_t timeout_ms);
int mtm_reduce(mtm_comm *comm, void *data, size_t count, int dtype, int op, int root, uint32_t tag,
               int64_t timeout_ms);
int mtm_broadcast(mtm_comm *comm, void *data, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtm_allgather(mtm_comm *comm, void *in, void *out, size_t nbytes, uint32_t tag, int64_t timeout_ms);
int mtm_gather(mtm_comm *comm, void *in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtm_scatter(mtm_comm *comm, void **in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms);
int mtm_alltoallv(mtm_comm *comm, void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes,
                  uint32_t tag, int64_t timeout_ms);
int mtm_barrier(mtm_comm *comm, uint32_t tag, int64_t timeout_ms);

/* Point to point: post, then wait (peer gets the rank a receive from any source (-1) came from). */
int mtm_send(mtm_comm *comm, void *data, size_t nbytes, int dst, uint64_t slot, mtm_buffer **out);
int mtm_recv(mtm_comm *comm, void *data, size_t nbytes, int src, uint64_t slot, mtm_buffer **out);
int mtm_buffer_wait(mtm_buffer *req, int64_t timeout_ms, int *peer);
void mtm_buffer_free(mtm_buffer *req);
