// The one write request: uv_write with the bytes it owns, kept alive until libuv is done with
// them, then (optionally) wiped and freed, and the outcome told to a WriteListener.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "appliance/loop/handle.h"

namespace appliance::loop {

class WriteListener {
 public:
  // status: 0, a libuv error, or UV_ECANCELED when the stream was closed first. Called before
  // the stream's close callback, so the listener (part of a HandleOwner) is still alive.
  virtual void on_written(int status) noexcept = 0;

 protected:
  ~WriteListener() = default;
};

// Bytes that may hold a secret (a request head with a grant's key, a control body) are
// overwritten before their buffer is freed.
enum class Wipe : std::uint8_t { kNo = 0, kYes };

// Queues `bytes` on `stream`. Returns 0, or uv_write's error (then `listener` is never called and
// the bytes are already freed). `listener` may be null.
int write(uv_stream_t* stream, std::string bytes, WriteListener* listener, Wipe wipe = Wipe::kNo);
// The same for `length` bytes at `offset` of a read chunk, without a copy.
int write(uv_stream_t* stream, Chunk chunk, std::size_t offset, std::size_t length,
          WriteListener* listener);

// Writes what the socket takes right now (uv_try_write) and erases it from `bytes`; the caller
// queues the rest, if any. A write done this way costs no write request and, in libuv 1.44, no
// epoll_ctl when it completes. Returns 0 or a libuv error other than UV_EAGAIN.
int write_what_fits(uv_stream_t* stream, std::string& bytes);

// write_what_fits, then write() for the rest. `listener` hears only of a queued rest.
int send(uv_stream_t* stream, std::string bytes, WriteListener* listener, Wipe wipe = Wipe::kNo);
// The same for bytes the caller keeps: only what the socket does not take now is copied (into the
// queued write request, wiped when it is done if `wipe`). The caller wipes its own buffer.
int send(uv_stream_t* stream, std::string_view bytes, WriteListener* listener,
         Wipe wipe = Wipe::kNo);

// Overwrites `length` bytes in a way the compiler keeps (explicit_bzero: a plain memset before a
// free is a dead store it may drop). For a std::string pass capacity(), not size(): bytes past
// the end (an erased prefix, a shrunk value) are stale copies too.
void wipe_bytes(char* bytes, std::size_t length) noexcept;

}  // namespace appliance::loop
