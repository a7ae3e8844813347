// The libuv boundary: the casts between handle types, the read buffer, and the owner of handles.
//
// An owner holds its handles inside itself (it never moves) and is freed only in the close
// callback of the last one (libuv's rule: handle memory lives until its close callback). It is
// created with `new`, starts kOpen, and close_all() moves it to kClosing once; it deletes itself
// after the last close callback, so nothing else may delete it.
#pragma once

#include <uv.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace appliance::loop {

// libuv's handle "inheritance" is C struct layout: these are the only casts the appliance makes
// between handle types.
template <class Handle>
uv_handle_t* as_handle(Handle* handle) noexcept {
  return reinterpret_cast<uv_handle_t*>(handle);
}
template <class Stream>
uv_stream_t* as_stream(Stream* stream) noexcept {
  return reinterpret_cast<uv_stream_t*>(stream);
}
template <class Stream>
const uv_stream_t* as_stream(const Stream* stream) noexcept {
  return reinterpret_cast<const uv_stream_t*>(stream);
}

// A read buffer handed from alloc_chunk to whoever keeps it (a relay queues it without a copy).
// Freeing one gives it back to a small per-thread stock that alloc_chunk takes from first
// (kStockedChunks at most; past that it is freed), so a read costs no malloc and free of
// kReadChunk bytes.
void free_chunk(char* chunk) noexcept;
struct ChunkFree {
  void operator()(char* p) const noexcept { free_chunk(p); }
};
using Chunk = std::unique_ptr<char, ChunkFree>;

// The one alloc callback: kReadChunk bytes (a failed malloc reads nothing: libuv reports
// UV_ENOBUFS to the read callback).
void alloc_chunk(uv_handle_t* handle, std::size_t suggested, uv_buf_t* buf) noexcept;

class HandleOwner {
 public:
  enum class Life : std::uint8_t { kOpen = 0, kClosing };

  HandleOwner(const HandleOwner&) = delete;
  HandleOwner& operator=(const HandleOwner&) = delete;

  [[nodiscard]] Life life() const noexcept { return life_; }
  [[nodiscard]] bool closing() const noexcept { return life_ == Life::kClosing; }

  // The owner a handle's data points to (set by opened()), as the class that owns it.
  template <class Owner>
  static Owner* owner_of(const uv_handle_t* handle) noexcept {
    return static_cast<Owner*>(static_cast<HandleOwner*>(handle->data));
  }
  template <class Owner, class Handle>
  static Owner* owner_of(const Handle* handle) noexcept {
    return owner_of<Owner>(reinterpret_cast<const uv_handle_t*>(handle));
  }

 protected:
  HandleOwner() = default;
  virtual ~HandleOwner() = default;

  // Counts an initialised handle as open and points its data here.
  void opened(uv_handle_t* handle) noexcept;
  // kOpen → kClosing. False when it was closing already (close_all() runs once).
  bool begin_closing() noexcept;
  // uv_close with the counting callback; a handle never opened, or already closing, is skipped.
  void close_handle(uv_handle_t* handle) noexcept;
  // Runs once, after the last close callback, just before `delete this`.
  virtual void on_all_closed() noexcept {}

 private:
  static void on_closed(uv_handle_t* handle) noexcept;

  int open_ = 0;
  Life life_ = Life::kOpen;
};

// A socket accepted only to be closed at once (over a cap): accepts from `server` and closes;
// frees itself in its close callback. Returns the uv_accept result.
int accept_and_close(uv_loop_t* loop, uv_stream_t* server) noexcept;

}  // namespace appliance::loop
