#include "appliance/loop/write.h"

#include <string.h>  // explicit_bzero

#include <utility>

namespace appliance::loop {
namespace {

struct WriteRequest {
  uv_write_t req{};
  std::string text;
  Chunk chunk;
  WriteListener* listener = nullptr;
  Wipe wipe = Wipe::kNo;

  ~WriteRequest() {
    if (wipe == Wipe::kYes) wipe_bytes(text.data(), text.capacity());
  }
};

void on_done(uv_write_t* req, int status) noexcept {
  auto* w = static_cast<WriteRequest*>(req->data);
  WriteListener* listener = w->listener;
  delete w;
  if (listener != nullptr) listener->on_written(status);
}

int start(WriteRequest* w, uv_stream_t* stream, uv_buf_t buf) {
  w->req.data = w;
  const int rc = uv_write(&w->req, stream, &buf, 1, on_done);
  if (rc != 0) delete w;
  return rc;
}

}  // namespace

void wipe_bytes(char* bytes, std::size_t length) noexcept { explicit_bzero(bytes, length); }

int write(uv_stream_t* stream, std::string bytes, WriteListener* listener, Wipe wipe) {
  auto* w = new WriteRequest;
  w->text = std::move(bytes);
  w->listener = listener;
  w->wipe = wipe;
  return start(w, stream, uv_buf_init(w->text.data(), static_cast<unsigned>(w->text.size())));
}

int write(uv_stream_t* stream, Chunk chunk, std::size_t offset, std::size_t length,
          WriteListener* listener) {
  auto* w = new WriteRequest;
  w->chunk = std::move(chunk);
  w->listener = listener;
  return start(w, stream, uv_buf_init(w->chunk.get() + offset, static_cast<unsigned>(length)));
}

int write_what_fits(uv_stream_t* stream, std::string& bytes) {
  if (bytes.empty()) return 0;
  uv_buf_t buf = uv_buf_init(bytes.data(), static_cast<unsigned>(bytes.size()));
  const int n = uv_try_write(stream, &buf, 1);
  if (n == UV_EAGAIN) return 0;  // also when writes are queued: the order is kept
  if (n < 0) return n;
  bytes.erase(0, static_cast<std::size_t>(n));
  return 0;
}

int send(uv_stream_t* stream, std::string_view bytes, WriteListener* listener, Wipe wipe) {
  if (bytes.empty()) return 0;
  uv_buf_t buf = uv_buf_init(const_cast<char*>(bytes.data()), static_cast<unsigned>(bytes.size()));
  const int n = uv_try_write(stream, &buf, 1);
  if (n < 0 && n != UV_EAGAIN) return n;
  if (n > 0) bytes.remove_prefix(static_cast<std::size_t>(n));
  if (bytes.empty()) return 0;
  return write(stream, std::string(bytes), listener, wipe);
}

int send(uv_stream_t* stream, std::string bytes, WriteListener* listener, Wipe wipe) {
  int rc = write_what_fits(stream, bytes);
  if (rc == 0 && !bytes.empty()) return write(stream, std::move(bytes), listener, wipe);
  if (wipe == Wipe::kYes) wipe_bytes(bytes.data(), bytes.capacity());
  return rc;
}

}  // namespace appliance::loop
