#include "appliance/loop/handle.h"

#include "appliance/loop/limits.h"

#include <array>

namespace appliance::loop {

namespace {

// Per thread: the loop that reads is one thread; the controller's servers have their own.
struct ChunkStock {
  std::array<char*, kStockedChunks> chunks{};
  std::size_t count = 0;
  ChunkStock() = default;
  ChunkStock(const ChunkStock&) = delete;
  ChunkStock& operator=(const ChunkStock&) = delete;
  ~ChunkStock() {
    for (std::size_t i = 0; i < count; ++i) std::free(chunks[i]);
    count = 0;
    gone = true;  // a chunk freed later (a static's destructor at exit) is freed at once
  }
  bool gone = false;
};
thread_local ChunkStock stock;

}  // namespace

void free_chunk(char* chunk) noexcept {
  if (chunk == nullptr) return;
  if (!stock.gone && stock.count < kStockedChunks) {
    stock.chunks[stock.count++] = chunk;
    return;
  }
  std::free(chunk);
}

void alloc_chunk(uv_handle_t*, std::size_t, uv_buf_t* buf) noexcept {
  buf->base = !stock.gone && stock.count > 0 ? stock.chunks[--stock.count]
                                             : static_cast<char*>(std::malloc(kReadChunk));
  buf->len = buf->base == nullptr ? 0 : kReadChunk;
}

void HandleOwner::opened(uv_handle_t* handle) noexcept {
  handle->data = this;
  ++open_;
}

bool HandleOwner::begin_closing() noexcept {
  if (life_ == Life::kClosing) return false;
  life_ = Life::kClosing;
  return true;
}

void HandleOwner::close_handle(uv_handle_t* handle) noexcept {
  if (handle->data == nullptr || uv_is_closing(handle) != 0) return;
  uv_close(handle, on_closed);
}

void HandleOwner::on_closed(uv_handle_t* handle) noexcept {
  auto* self = static_cast<HandleOwner*>(handle->data);
  handle->data = nullptr;
  if (--self->open_ == 0) {
    self->on_all_closed();
    delete self;
  }
}

namespace {

class Dropped final : public HandleOwner {
 public:
  explicit Dropped(uv_loop_t* loop) noexcept {
    uv_tcp_init(loop, &tcp_);
    opened(as_handle(&tcp_));
  }
  int accept_from(uv_stream_t* server) noexcept {
    const int rc = uv_accept(server, as_stream(&tcp_));
    begin_closing();
    close_handle(as_handle(&tcp_));
    return rc;
  }

 private:
  uv_tcp_t tcp_{};
};

}  // namespace

int accept_and_close(uv_loop_t* loop, uv_stream_t* server) noexcept {
  return (new Dropped(loop))->accept_from(server);
}

}  // namespace appliance::loop
