// One writer per output stream. Whoever sends a line writes it directly if
// the stream is free, and otherwise waits its turn: writes never overlap,
// a sender resumes once its line is written (so a slow peer slows whoever
// feeds it, and fsguard holds at most one line per sender), and no line
// takes an extra hop through a queue and a writer coroutine.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

#include "proxy/process/executor.hpp"
#include "proxy/app/log.hpp"

namespace fsguard {

template <class Stream>
class LineWriter {
public:
  // `peer` names the other end in log messages ("client", "upstream").
  LineWriter(Stream& stream, const Log& log, const char* peer)
    : m_stream(stream), m_log(log), m_peer(peer),
      m_changed(stream.get_executor(), Timer::time_point::max()),
      m_closing(stream.get_executor(), Timer::time_point::max())
  {
    boost::system::error_code ignored;
    m_stream.non_blocking(true, ignored); // write_some() returns would_block, never waits
  }

  // Writes `line` and a newline if it lacks one, once the stream is free.
  // Returns when it is written, or at once if the stream is closed or broke
  // (after a write error every line is dropped, so senders never block on a
  // dead peer). `line` must stay valid until then.
  Task<void> write(std::string_view line)
  {
    while (m_busy && !stopped()) {
      co_await m_changed.async_wait(k_use);
    }
    if (stopped()) {
      co_return;
    }
    m_busy = true;
    auto buffers = line_buffers(line);
    boost::system::error_code error = write_at_once(buffers);
    if (!error && (buffers[0].size() > 0 || buffers[1].size() > 0)) {
      // The rest as the stream drains (Asio's composed write, which the
      // reactor drives chunk by chunk without resuming this coroutine).
      std::tie(error, std::ignore) = co_await boost::asio::async_write(m_stream, buffers, k_use);
    }
    m_busy = false;
    note_error(error);
    if (m_close_requested) {
      close_now();
    }
    m_changed.cancel(); // the next sender's turn
  }

  // Writes what the stream takes at once of `line` and its newline, if no
  // write is in progress and the line is short: nearly every line goes this
  // way, with no coroutine frame and no pass through the event loop.
  // Returns what is left for write() to finish, which the caller hands it
  // at once (empty if only the newline is left; all of `line` if another
  // write is in progress or the line is long), or nothing once the line is
  // written, or dropped because the stream is closed or broke (as write()
  // drops it).
  std::optional<std::string_view> try_write(std::string_view line)
  {
    if (stopped()) {
      return std::nullopt;
    }
    if (m_busy || line.size() > k_at_once_bytes) {
      return line;
    }
    // A sender still to resume from the last write()'s wake-up finds the
    // stream free or busy when it runs, and waits again if busy: a write
    // that never set m_busy has no one to wake.
    auto buffers = line_buffers(line);
    const boost::system::error_code error = write_at_once(buffers);
    if (error) {
      note_error(error);
      return std::nullopt;
    }
    if (buffers[0].size() == 0 && buffers[1].size() == 0) {
      return std::nullopt;
    }
    return line.substr(line.size() - buffers[0].size());
  }

  // Closes the stream once the write in progress, if any, has ended; lines
  // sent after this are dropped. Does not wait.
  void close()
  {
    m_close_requested = true;
    if (!m_busy) {
      close_now();
    }
    m_changed.cancel();
  }

  // Waits until the stream is closed.
  Task<void> closed()
  {
    while (!m_closed) {
      co_await m_closing.async_wait(k_use);
    }
  }

  // A longer line goes to write() whole: it takes several writes anyway,
  // and a caller that keeps the rest of a line it could not send whole
  // (flush_at_once) need not move a long one's bytes.
  static constexpr std::size_t k_at_once_bytes = 64 * 1024;

private:
  bool stopped() const { return m_close_requested || m_broken; }

  // `line`, and a newline if it lacks one.
  static std::array<boost::asio::const_buffer, 2> line_buffers(std::string_view line)
  {
    static constexpr char k_newline = '\n';
    const bool whole = !line.empty() && line.back() == '\n';
    return {boost::asio::buffer(line.data(), line.size()),
            boost::asio::buffer(&k_newline, whole ? 0 : 1)};
  }

  // After a write error every line is dropped (see write()).
  void note_error(const boost::system::error_code& error)
  {
    if (error && !m_closed) {
      m_broken = true;
      m_log.info(std::string("cannot write to the ") + m_peer + ": " + error.message());
    }
  }

  // Writes as much of `buffers` as the stream takes at once, and consumes
  // it from them: a small line costs one write and no pass through the
  // event loop (nor a coroutine frame). An error other than would_block.
  boost::system::error_code write_at_once(std::array<boost::asio::const_buffer, 2>& buffers)
  {
    boost::system::error_code error;
    std::size_t written = m_stream.write_some(buffers, error);
    for (auto& buffer : buffers) {
      const std::size_t used = std::min(written, buffer.size());
      buffer += used;
      written -= used;
    }
    if (error == boost::asio::error::would_block || error == boost::asio::error::interrupted) {
      return {};
    }
    return error;
  }

  void close_now()
  {
    if (!m_closed) {
      m_closed = true;
      boost::system::error_code ignored;
      m_stream.close(ignored);
      m_closing.cancel();
    }
  }

  Stream& m_stream;
  const Log& m_log;
  const char* m_peer;
  // Never expire: cancel() wakes every sender waiting for its turn, and
  // whoever waits for the close.
  Timer m_changed;
  Timer m_closing;
  bool m_busy = false;
  bool m_broken = false;
  bool m_close_requested = false;
  bool m_closed = false;
};

} // namespace fsguard
