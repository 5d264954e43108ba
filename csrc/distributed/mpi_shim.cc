// mindtorch_v2._mpi: the extern "C" shim over Open MPI declared in mpi_shim.h.
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define OMPI_SKIP_MPICXX 1  // the C API only (Open MPI's mpi.h pulls its C++ bindings into C++)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

extern "C" {
#include "mpi_shim.h"
}
#include "shim_common.h"

struct mtm_comm {
    MPI_Comm comm;
};

struct mtm_buffer {
    MPI_Request request;
};

namespace {

using namespace mtdist;

void check(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Fail(std::string("MPI ") + what + " failed: " + std::string(text, len));
}

bool finalized() {
    int done = 0;
    MPI_Finalized(&done);
    return done;
}

MPI_Comm live(mtm_comm *c) {
    if (!c || c->comm == MPI_COMM_NULL) throw Fail("the MPI communicator is closed");
    if (finalized()) throw Fail("MPI has been finalized");
    return c->comm;
}

int as_int(size_t n) {
    if (n > (size_t)INT_MAX) throw Fail("MPI counts are int: a message of " + std::to_string(n) + " is too large");
    return (int)n;
}

// MPI progresses only inside MPI calls: poll (yielding the core, as Open MPI does when
// oversubscribed) until done or the timeout; after a second of waiting, poll every millisecond.
void wait_for(MPI_Request *req, int64_t timeout_ms, MPI_Status *status, const char *what) {
    auto start = std::chrono::steady_clock::now();
    for (;;) {
        int done = 0;
        check(MPI_Test(req, &done, status), what);
        if (done) return;
        auto waited = std::chrono::steady_clock::now() - start;
        if (timeout_ms >= 0 && waited > std::chrono::milliseconds(timeout_ms))
            throw Fail(std::string("MPI ") + what + " timed out after " + std::to_string(timeout_ms) +
                       "ms: a rank of the group did not take part");
        if (waited < std::chrono::seconds(1)) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void run(int rc, MPI_Request *req, int64_t timeout_ms, const char *what) {
    check(rc, what);
    wait_for(req, timeout_ms, MPI_STATUS_IGNORE, what);
}

// mt.h's dtype codes (MT_BOOL=0 ... MT_F64=9), the same set as the Gloo shim carries
MPI_Datatype datatype(int dtype) {
    switch (dtype) {
    case 0: return MPI_UNSIGNED_CHAR;  // bool: reduced with the logical ops
    case 1: return MPI_UINT8_T;
    case 2: return MPI_INT8_T;
    case 4: return MPI_INT32_T;
    case 5: return MPI_INT64_T;
    case 6: case 7: return MPI_UINT16_T;  // float16 / bfloat16: user ops (shim_common.h) in float32
    case 8: return MPI_FLOAT;
    case 9: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

template <float (*Load)(uint16_t), uint16_t (*Store)(float), typename Op>
void user16(void *in, void *inout, int *len, MPI_Datatype *) {
    reduce_16<Load, Store, Op>(inout, inout, in, (size_t)*len);
}

MPI_Op half_ops[2][4];  // [float16, bfloat16][SUM, PRODUCT, MIN, MAX]
std::once_flag half_ops_once;

void make_half_ops() {
    MPI_User_function *fns[2][4] = {
        {user16<half_to_float, float_to_half, Sum>, user16<half_to_float, float_to_half, Prod>,
         user16<half_to_float, float_to_half, Min>, user16<half_to_float, float_to_half, Max>},
        {user16<bf16_to_float, float_to_bf16, Sum>, user16<bf16_to_float, float_to_bf16, Prod>,
         user16<bf16_to_float, float_to_bf16, Min>, user16<bf16_to_float, float_to_bf16, Max>}};
    for (int d = 0; d < 2; d++)
        for (int o = 0; o < 4; o++) MPI_Op_create(fns[d][o], 1, &half_ops[d][o]);
}

// enum mtg_op codes: SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR; MPI_OP_NULL where the pair is invalid
MPI_Op reduction(int dtype, int op) {
    if (datatype(dtype) == MPI_DATATYPE_NULL || op < 0 || op > 6) return MPI_OP_NULL;
    if (dtype == 0) {  // bool as PyTorch's gloo: sum and max are "or", product and min are "and"
        static const MPI_Op logical[] = {MPI_LOR, MPI_LAND, MPI_LAND, MPI_LOR, MPI_LAND, MPI_LOR, MPI_LXOR};
        return logical[op];
    }
    if (dtype == 6 || dtype == 7) {
        if (op > 3) return MPI_OP_NULL;
        std::call_once(half_ops_once, make_half_ops);
        return half_ops[dtype - 6][op];
    }
    if (op > 3 && dtype >= 8) return MPI_OP_NULL;  // bitwise ops on floats
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR};
    return ops[op];
}

MPI_Op checked_reduction(int dtype, int op) {
    MPI_Op o = reduction(dtype, op);
    if (o == MPI_OP_NULL)
        throw Fail("the MPI shim cannot reduce dtype " + std::to_string(dtype) + " with op " + std::to_string(op));
    return o;
}

int my_rank(MPI_Comm c) {
    int r = 0;
    check(MPI_Comm_rank(c, &r), "Comm_rank");
    return r;
}

int tag_of(uint64_t slot) {  // MPI tags are int (Open MPI's MPI_TAG_UB is 2^31-1)
    return (int)(slot & 0x3fffffff) | ((slot >> 31) & 1 ? 0x40000000 : 0);
}

}  // namespace

extern "C" {

const char *mtm_last_error(void) { return last_error.c_str(); }

int mtm_init(int *rank, int *size) {
    return guarded([&] {
        int ready = 0;
        check(MPI_Initialized(&ready), "Initialized");
        if (!ready) {
            int provided = 0;
            check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "Init_thread");
            if (provided < MPI_THREAD_MULTIPLE)
                throw Fail("this MPI does not provide MPI_THREAD_MULTIPLE (the process group's worker thread and "
                           "the caller's point-to-point calls use MPI at once)");
            std::atexit([] {
                if (!finalized()) MPI_Finalize();
            });
        }
        check(MPI_Comm_rank(MPI_COMM_WORLD, rank), "Comm_rank");
        check(MPI_Comm_size(MPI_COMM_WORLD, size), "Comm_size");
    });
}

int mtm_comm_world(mtm_comm **out) {
    return guarded([&] {
        auto c = new mtm_comm{MPI_COMM_NULL};
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
        if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        if (rc != MPI_SUCCESS) delete c;
        check(rc, "Comm_dup");
        *out = c;
    });
}

int mtm_comm_split(mtm_comm *parent, int member, int key, mtm_comm **out) {
    return guarded([&] {
        MPI_Comm c = MPI_COMM_NULL;
        check(MPI_Comm_split(live(parent), member ? 0 : MPI_UNDEFINED, key, &c), "Comm_split");
        *out = nullptr;
        if (c != MPI_COMM_NULL) {
            check(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "Comm_set_errhandler");
            *out = new mtm_comm{c};
        }
    });
}

void mtm_comm_free(mtm_comm *c) {
    if (!c) return;
    if (c->comm != MPI_COMM_NULL && !finalized()) MPI_Comm_free(&c->comm);
    delete c;
}

int mtm_dtype_supported(int dtype) { return datatype(dtype) != MPI_DATATYPE_NULL; }

int mtm_op_supported(int dtype, int op) { return reduction(dtype, op) != MPI_OP_NULL; }

int mtm_allreduce(mtm_comm *comm, void *data, size_t count, int dtype, int op, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Request req;
        run(MPI_Iallreduce(MPI_IN_PLACE, data, as_int(count), datatype(dtype), checked_reduction(dtype, op),
                           live(comm), &req), &req, timeout_ms, "allreduce");
    });
}

int mtm_reduce(mtm_comm *comm, void *data, size_t count, int dtype, int op, int root, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Comm c = live(comm);
        MPI_Request req;
        bool at_root = my_rank(c) == root;
        run(MPI_Ireduce(at_root ? MPI_IN_PLACE : data, at_root ? data : nullptr, as_int(count), datatype(dtype),
                        checked_reduction(dtype, op), root, c, &req), &req, timeout_ms, "reduce");
    });
}

int mtm_broadcast(mtm_comm *comm, void *data, size_t nbytes, int root, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Request req;
        run(MPI_Ibcast(data, as_int(nbytes), MPI_BYTE, root, live(comm), &req), &req, timeout_ms, "broadcast");
    });
}

int mtm_allgather(mtm_comm *comm, void *in, void *out, size_t nbytes, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Request req;
        int n = as_int(nbytes);
        run(MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, live(comm), &req), &req, timeout_ms, "allgather");
    });
}

int mtm_gather(mtm_comm *comm, void *in, void *out, size_t nbytes, int root, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Request req;
        int n = as_int(nbytes);
        run(MPI_Igather(in, n, MPI_BYTE, out, n, MPI_BYTE, root, live(comm), &req), &req, timeout_ms, "gather");
    });
}

int mtm_scatter(mtm_comm *comm, void **in, void *out, size_t nbytes, int root, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Comm c = live(comm);
        int n = as_int(nbytes), size = 0;
        check(MPI_Comm_size(c, &size), "Comm_size");
        std::vector<char> packed;  // MPI scatters one buffer: the root's inputs side by side
        if (my_rank(c) == root) {
            packed.resize(nbytes * (size_t)size);
            for (int i = 0; i < size; i++) std::memcpy(packed.data() + nbytes * (size_t)i, in[i], nbytes);
        }
        MPI_Request req;
        run(MPI_Iscatter(packed.data(), n, MPI_BYTE, out, n, MPI_BYTE, root, c, &req), &req, timeout_ms, "scatter");
    });
}

int mtm_alltoallv(mtm_comm *comm, void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes, uint32_t,
                  int64_t timeout_ms) {
    return guarded([&] {
        MPI_Comm c = live(comm);
        int size = 0;
        check(MPI_Comm_size(c, &size), "Comm_size");
        std::vector<int> sc(size), sd(size), rc(size), rd(size);
        size_t s_at = 0, r_at = 0;
        for (int i = 0; i < size; i++) {
            sc[i] = as_int((size_t)in_bytes[i]);
            rc[i] = as_int((size_t)out_bytes[i]);
            sd[i] = as_int(s_at);
            rd[i] = as_int(r_at);
            s_at += (size_t)in_bytes[i];
            r_at += (size_t)out_bytes[i];
        }
        MPI_Request req;
        run(MPI_Ialltoallv(in, sc.data(), sd.data(), MPI_BYTE, out, rc.data(), rd.data(), MPI_BYTE, c, &req), &req,
            timeout_ms, "alltoallv");
    });
}

int mtm_barrier(mtm_comm *comm, uint32_t, int64_t timeout_ms) {
    return guarded([&] {
        MPI_Request req;
        run(MPI_Ibarrier(live(comm), &req), &req, timeout_ms, "barrier");
    });
}

int mtm_send(mtm_comm *comm, void *data, size_t nbytes, int dst, uint64_t slot, mtm_buffer **out) {
    return guarded([&] {
        auto r = new mtm_buffer{MPI_REQUEST_NULL};
        int rc = MPI_Isend(data, as_int(nbytes), MPI_BYTE, dst, tag_of(slot), live(comm), &r->request);
        if (rc != MPI_SUCCESS) delete r;
        check(rc, "send");
        *out = r;
    });
}

int mtm_recv(mtm_comm *comm, void *data, size_t nbytes, int src, uint64_t slot, mtm_buffer **out) {
    return guarded([&] {
        auto r = new mtm_buffer{MPI_REQUEST_NULL};
        int rc = MPI_Irecv(data, as_int(nbytes), MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, tag_of(slot), live(comm),
                           &r->request);
        if (rc != MPI_SUCCESS) delete r;
        check(rc, "recv");
        *out = r;
    });
}

int mtm_buffer_wait(mtm_buffer *req, int64_t timeout_ms, int *peer) {
    return guarded([&] {
        MPI_Status status;
        wait_for(&req->request, timeout_ms, &status, "send/recv");
        *peer = status.MPI_SOURCE;
    });
}

void mtm_buffer_free(mtm_buffer *req) {
    if (!req) return;
    if (req->request != MPI_REQUEST_NULL && !finalized()) {  // never waited, or timed out: withdraw it
        MPI_Cancel(&req->request);
        MPI_Request_free(&req->request);
    }
    delete req;
}

}  // extern "C"
