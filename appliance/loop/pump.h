// Moving bytes from one side to a stream, with backpressure and half-close: the corridor's
// tunnel is two Pumps, the window's two directions use the same WaterMarks.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "appliance/loop/handle.h"
#include "appliance/loop/limits.h"
#include "appliance/loop/write.h"

namespace appliance::loop {

// The reading side of a pump: stops and restarts reading (backpressure).
class Reader {
 public:
  virtual void pause_reading() noexcept = 0;
  virtual void resume_reading() noexcept = 0;

 protected:
  ~Reader() = default;
};

// A stream read with alloc_chunk and one read callback.
class StreamReader final : public Reader {
 public:
  StreamReader() = default;
  StreamReader(uv_stream_t* stream, uv_read_cb on_read) noexcept
      : stream_(stream), on_read_(on_read) {}
  void pause_reading() noexcept override;
  void resume_reading() noexcept override;

 private:
  uv_stream_t* stream_ = nullptr;
  uv_read_cb on_read_ = nullptr;
};

// kHighWater / kLowWater for one reader and the write queue it fills.
class WaterMarks {
 public:
  // After bytes were queued: true (once) when the reader must stop now.
  [[nodiscard]] bool over(std::size_t queued) noexcept {
    if (paused_ || queued <= kHighWater) return false;
    paused_ = true;
    return true;
  }
  // After a write completed: true (once) when the stopped reader may read again.
  [[nodiscard]] bool under(std::size_t queued) noexcept {
    if (!paused_ || queued >= kLowWater) return false;
    paused_ = false;
    return true;
  }
  [[nodiscard]] bool paused() const noexcept { return paused_; }

 private:
  bool paused_ = false;
};

// One direction: bytes read from `from` are written to `to`, `from` pauses while `to` is over
// the high water mark, and the end of `from` becomes uv_shutdown (FIN) on `to` once everything
// queued was written. A Pump lives inside its HandleOwner, like the streams it names.
class Pump final : private WriteListener {
 public:
  class Events {
   public:
    virtual void pump_moved(Pump& pump, std::size_t bytes) noexcept = 0;  // read, or written
    virtual void pump_finished(Pump& pump) noexcept = 0;                  // FIN passed on
    virtual void pump_failed(Pump& pump, int status) noexcept = 0;        // writing `to` failed

   protected:
    ~Events() = default;
  };

  Pump() = default;
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

  void start(Reader& from, uv_stream_t* to, Events& events) noexcept;
  // `length` bytes read from `from`: tried at once, the rest queued without a copy.
  void push(Chunk chunk, std::size_t length) noexcept;
  // `from` ended (EOF): FIN on `to` after the queued bytes.
  void end() noexcept;
  [[nodiscard]] bool ended() const noexcept { return from_ended_; }
  [[nodiscard]] bool finished() const noexcept { return finished_; }

 private:
  void on_written(int status) noexcept override;
  static void on_shutdown(uv_shutdown_t* req, int status) noexcept;

  Reader* from_ = nullptr;
  uv_stream_t* to_ = nullptr;
  Events* events_ = nullptr;
  WaterMarks marks_;
  uv_shutdown_t shutdown_{};
  bool from_ended_ = false;
  bool finished_ = false;
  bool failed_ = false;
};

}  // namespace appliance::loop
