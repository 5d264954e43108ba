// mindtorch_v2._gloo: the extern "C" shim over Gloo declared in gloo_shim.h.
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

extern "C" {
#include "gloo_shim.h"
}
#include "shim_common.h"

struct mtg_context {
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
};

struct mtg_buffer {
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    bool is_send;
};

struct mtg_bytes {
    std::vector<char> data;
};

namespace {

using namespace mtdist;

std::chrono::milliseconds ms(int64_t timeout_ms) { return std::chrono::milliseconds(timeout_ms); }

// c10d's Store seen by Gloo's rendezvous through the caller's callbacks (PyTorch's GlooStore).
class CallbackStore : public gloo::rendezvous::Store {
  public:
    explicit CallbackStore(const mtg_store &s) : s_(s) {}

    void set(const std::string &key, const std::vector<char> &data) override {
        if (s_.set(s_.handle, key.c_str(), data.data(), data.size())) throw Fail("store set failed: " + key);
    }

    std::vector<char> get(const std::string &key) override {
        mtg_bytes out;
        if (s_.get(s_.handle, key.c_str(), &out)) throw Fail("store get failed: " + key);
        return std::move(out.data);
    }

    void wait(const std::vector<std::string> &keys) override { wait(keys, std::chrono::milliseconds(-1)); }

    void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &timeout) override {
        std::vector<const char *> names;
        for (const auto &k : keys) names.push_back(k.c_str());
        if (s_.wait(s_.handle, names.data(), names.size(), timeout.count())) throw Fail("store wait failed");
    }

  private:
    mtg_store s_;
};

// ---- reductions: one function per (C type, op); float16/bfloat16 (shim_common.h) in float32 -

template <typename T, typename Op>
void reduce_plain(void *c, const void *a, const void *b, size_t n) {
    T *out = static_cast<T *>(c);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; i++) out[i] = Op::f(x[i], y[i]);
}

// bool: sum and max are "or", product and min are "and" (as PyTorch's gloo on bool)
template <typename Op>
void reduce_bool(void *c, const void *a, const void *b, size_t n) {
    uint8_t *out = static_cast<uint8_t *>(c);
    const uint8_t *x = static_cast<const uint8_t *>(a), *y = static_cast<const uint8_t *>(b);
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(Op::f((uint8_t)(x[i] != 0), (uint8_t)(y[i] != 0)) != 0);
}

using Func = void (*)(void *, const void *, const void *, size_t);

// mt.h's dtype codes (MT_BOOL=0 ... MT_F64=9); -1 for one Gloo cannot carry (int16, float8).
size_t itemsize(int dtype) {
    static const int sizes[] = {1, 1, 1, -1, 4, 8, 2, 2, 4, 8};
    return dtype >= 0 && dtype < 10 ? (size_t)sizes[dtype] : (size_t)-1;
}

bool integral(int dtype) { return dtype <= 5; }

template <typename Op>
Func pick_op(int dtype) {
    switch (dtype) {
    case 0: return reduce_bool<Op>;
    case 1: return reduce_plain<uint8_t, Op>;
    case 2: return reduce_plain<int8_t, Op>;
    case 4: return reduce_plain<int32_t, Op>;
    case 5: return reduce_plain<int64_t, Op>;
    default: return nullptr;
    }
}

template <typename Op>
Func pick_float_op(int dtype) {
    switch (dtype) {
    case 6: return reduce_16<half_to_float, float_to_half, Op>;
    case 7: return reduce_16<bf16_to_float, float_to_bf16, Op>;
    case 8: return reduce_plain<float, Op>;
    case 9: return reduce_plain<double, Op>;
    default: return pick_op<Op>(dtype);
    }
}

Func reduction(int dtype, int op) {
    if (itemsize(dtype) == (size_t)-1) return nullptr;
    switch (op) {
    case MTG_SUM: return pick_float_op<Sum>(dtype);
    case MTG_PRODUCT: return pick_float_op<Prod>(dtype);
    case MTG_MIN: return pick_float_op<Min>(dtype);
    case MTG_MAX: return pick_float_op<Max>(dtype);
    case MTG_BAND: return integral(dtype) ? pick_op<BAnd>(dtype) : nullptr;
    case MTG_BOR: return integral(dtype) ? pick_op<BOr>(dtype) : nullptr;
    case MTG_BXOR: return integral(dtype) ? pick_op<BXor>(dtype) : nullptr;
    default: return nullptr;
    }
}

Func checked_reduction(int dtype, int op) {
    Func fn = reduction(dtype, op);
    if (!fn) throw Fail("the Gloo shim cannot reduce dtype " + std::to_string(dtype) + " with op " + std::to_string(op));
    return fn;
}

std::shared_ptr<gloo::Context> live(mtg_context *ctx) {
    if (!ctx || !ctx->context) throw Fail("the Gloo context is closed");
    return ctx->context;
}

// Calls body with a null pointer of the unsigned type of itemsize bytes (Gloo's options take
// the element size from their template type; the reduction itself is untyped).
template <typename F>
void by_itemsize(size_t size, F body) {
    switch (size) {
    case 1: body((uint8_t *)nullptr); break;
    case 2: body((uint16_t *)nullptr); break;
    case 4: body((uint32_t *)nullptr); break;
    case 8: body((uint64_t *)nullptr); break;
    default: throw Fail("the Gloo shim cannot carry an element of " + std::to_string(size) + " bytes");
    }
}

// Gloo's tcp device starts its epoll loop thread in its constructor, and a thread inherits its
// creator's scheduling policy: made on a SCHED_BATCH helper, the loop is SCHED_BATCH. A woken batch
// thread never preempts the running one, which is what keeps small collectives off the 4 ms
// scheduler tick on a busy machine: the loop's handleEvents only try-locks the pair and returns
// when it is held, so a loop thread woken by the peer's bytes that preempts the collective's
// thread in the middle of its locked send spins on level-triggered EPOLLIN until the next tick
// (docs/PERFORMANCE.md, torch.distributed). Batch keeps the loop's full CPU share (SCHED_IDLE
// would starve it under load); where the policy cannot be set the device is made as before.
std::shared_ptr<gloo::transport::Device> make_device(const gloo::transport::tcp::attr &attr) {
    std::shared_ptr<gloo::transport::Device> device;
    std::exception_ptr error;
    std::thread maker([&] {
        try {
#ifdef SCHED_BATCH
            sched_param param{};
            pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
#endif
            device = gloo::transport::tcp::CreateDevice(attr);
        } catch (...) {
            error = std::current_exception();
        }
    });
    maker.join();
    if (error) std::rethrow_exception(error);
    return device;
}

}  // namespace

extern "C" {

const char *mtg_last_error(void) { return last_error.c_str(); }

int mtg_bytes_assign(mtg_bytes *out, const char *data, size_t len) {
    return guarded([&] { out->data.assign(data, data + len); });
}

int mtg_dtype_supported(int dtype) { return itemsize(dtype) != (size_t)-1; }

int mtg_op_supported(int dtype, int op) { return reduction(dtype, op) != nullptr; }

int mtg_context_new(const mtg_store *store, int rank, int size, const char *hostname, const char *iface,
                    int64_t timeout_ms, mtg_context **out) {
    return guarded([&] {
        gloo::transport::tcp::attr attr;
        if (iface && *iface) attr.iface = iface;
        else attr.hostname = hostname && *hostname ? hostname : "127.0.0.1";
        auto ctx = std::make_unique<mtg_context>();
        ctx->device = make_device(attr);
        auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        context->setTimeout(ms(timeout_ms));
        CallbackStore adapter(*store);
        context->connectFullMesh(adapter, ctx->device);
        ctx->context = std::move(context);
        *out = ctx.release();
    });
}

void mtg_context_free(mtg_context *ctx) {
    try {
        delete ctx;  // closes the pairs: peers blocked on this rank see the connection close
    } catch (...) {
    }
}

int mtg_allreduce(mtg_context *ctx, void *data, size_t count, int dtype, int op, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        Func fn = checked_reduction(dtype, op);
        gloo::AllreduceOptions opts(live(ctx));
        by_itemsize(itemsize(dtype), [&](auto *type) {
            opts.setOutput(static_cast<decltype(type)>(data), count);
        });
        opts.setReduceFunction(fn);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::allreduce(opts);
    });
}

int mtg_reduce(mtg_context *ctx, void *data, size_t count, int dtype, int op, int root, uint32_t tag,
               int64_t timeout_ms) {
    return guarded([&] {
        Func fn = checked_reduction(dtype, op);
        gloo::ReduceOptions opts(live(ctx));
        by_itemsize(itemsize(dtype), [&](auto *type) {
            opts.setOutput(static_cast<decltype(type)>(data), count);
        });
        opts.setRoot(root);
        opts.setReduceFunction(fn);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::reduce(opts);
    });
}

int mtg_broadcast(mtg_context *ctx, void *data, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        gloo::BroadcastOptions opts(live(ctx));
        opts.setOutput(static_cast<uint8_t *>(data), nbytes);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::broadcast(opts);
    });
}

int mtg_allgather(mtg_context *ctx, void *in, void *out, size_t nbytes, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        auto context = live(ctx);
        gloo::AllgatherOptions opts(context);
        opts.setInput(static_cast<uint8_t *>(in), nbytes);
        opts.setOutput(static_cast<uint8_t *>(out), nbytes * context->size);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::allgather(opts);
    });
}

int mtg_gather(mtg_context *ctx, void *in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        auto context = live(ctx);
        gloo::GatherOptions opts(context);
        opts.setInput(static_cast<uint8_t *>(in), nbytes);
        if (context->rank == root) opts.setOutput(static_cast<uint8_t *>(out), nbytes * context->size);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::gather(opts);
    });
}

int mtg_scatter(mtg_context *ctx, void **in, void *out, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        auto context = live(ctx);
        gloo::ScatterOptions opts(context);
        if (context->rank == root) opts.setInputs(reinterpret_cast<uint8_t **>(in), (size_t)context->size, nbytes);
        opts.setOutput(static_cast<uint8_t *>(out), nbytes);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::scatter(opts);
    });
}

int mtg_alltoallv(mtg_context *ctx, void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes,
                  uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        auto context = live(ctx);
        gloo::AlltoallvOptions opts(context);
        opts.setInput(static_cast<uint8_t *>(in), std::vector<int64_t>(in_bytes, in_bytes + context->size));
        opts.setOutput(static_cast<uint8_t *>(out), std::vector<int64_t>(out_bytes, out_bytes + context->size));
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::alltoallv(opts);
    });
}

int mtg_barrier(mtg_context *ctx, uint32_t tag, int64_t timeout_ms) {
    return guarded([&] {
        gloo::BarrierOptions opts(live(ctx));
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::barrier(opts);
    });
}

int mtg_send(mtg_context *ctx, void *data, size_t nbytes, int dst, uint64_t slot, mtg_buffer **out) {
    return guarded([&] {
        auto buf = std::make_unique<mtg_buffer>();
        buf->buffer = live(ctx)->createUnboundBuffer(data, nbytes);
        buf->is_send = true;
        buf->buffer->send(dst, slot);
        *out = buf.release();
    });
}

int mtg_recv(mtg_context *ctx, void *data, size_t nbytes, int src, uint64_t slot, mtg_buffer **out) {
    return guarded([&] {
        auto context = live(ctx);
        auto buf = std::make_unique<mtg_buffer>();
        buf->buffer = context->createUnboundBuffer(data, nbytes);
        buf->is_send = false;
        if (src >= 0) {
            buf->buffer->recv(src, slot);
        } else {  // from any source: every other rank
            std::vector<int> ranks;
            for (int r = 0; r < context->size; r++)
                if (r != context->rank) ranks.push_back(r);
            buf->buffer->recv(ranks, slot);
        }
        *out = buf.release();
    });
}

int mtg_buffer_wait(mtg_buffer *buf, int64_t timeout_ms, int *peer) {
    return guarded([&] {
        bool done = buf->is_send ? buf->buffer->waitSend(peer, ms(timeout_ms))
                                 : buf->buffer->waitRecv(peer, ms(timeout_ms));
        if (!done) throw Fail("the point-to-point operation was aborted");
    });
}

void mtg_buffer_abort(mtg_buffer *buf) {
    try {
        if (buf->is_send) buf->buffer->abortWaitSend();
        else buf->buffer->abortWaitRecv();
    } catch (...) {
    }
}

void mtg_buffer_free(mtg_buffer *buf) {
    try {
        delete buf;
    } catch (...) {
    }
}

}  // extern "C"
