// Newline-delimited framing of a byte stream into JSON-RPC lines, with a
// bound on line length so memory never grows without limit.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/buffer.hpp>

#include "proxy/process/executor.hpp"
#include "proxy/process/line_buffer.hpp"
#include "proxy/process/pipe_size.hpp"

namespace fsguard {

enum class LineStatus {
  line,     // a complete line, without its LF (a CR before it stays: JSON
            // treats it as white space, and relaying it keeps the bytes)
  too_long, // a line over the limit ended; its bytes were discarded
  eof,      // the stream ended
};

struct LineEvent {
  LineStatus status = LineStatus::eof;
  // valid until the next call of next(); for too_long, the line's last bytes
  // (up to k_tail_bytes, however the reads split the line), where a
  // JSON-RPC answer whose "result" comes first keeps its id
  std::string_view text;
  std::size_t length = 0; // too_long: the line's length in bytes
};

// How much of the end of a discarded line a too_long event shows.
inline constexpr std::size_t k_tail_bytes = 512;

// Reads lines from `Stream` (any Asio async read stream). A line longer than
// `max_line_bytes` is discarded as it streams in and reported once, as
// too_long, when its newline arrives. A last line without a newline still
// counts as a line.
//
// Reads go into one LineBuffer. A line that does not fit grows the buffer,
// whose pages are remapped rather than copied, so every line lies whole in
// one place: a long line is never copied or joined from pieces, and costs
// its own size in memory (bounded by `max_line_bytes`). The buffer keeps its
// size while long lines come; buffer() lets whoever sees the session idle
// give its memory back.
template <class Stream>
class LineReader {
public:
  LineReader(Stream& stream, std::size_t max_line_bytes)
    : m_stream(stream), m_max_line_bytes(max_line_bytes), m_buffer(std::make_shared<LineBuffer>(k_buffer_bytes))
  {
  }

  void set_max_line_bytes(std::size_t max_line_bytes) { m_max_line_bytes = max_line_bytes; }

  // The next line, or the end.
  Task<LineEvent> next()
  {
    auto event = try_next();
    while (!event) {
      note_read(co_await read_more());
      event = try_next();
    }
    co_return *event;
  }

  // The next line, or the end, if the bytes read so far tell it; nothing
  // when read_more() must come first. A caller on the hot path awaits that
  // in its own coroutine, as next() does: a coroutine frame less a line.
  std::optional<LineEvent> try_next()
  {
    if (auto event = take_buffered_line(); event.status != LineStatus::eof) {
      return event;
    }
    if (m_eof) {
      return take_unterminated_line();
    }
    return std::nullopt;
  }

  // Reads what the stream has into the room after the bytes read, for
  // note_read() to take in.
  auto read_more() { return m_stream.async_read_some(room_to_read(), k_use); }

  // Takes in what read_more() read (an error code and a count); an error,
  // EOF among them, ends the stream.
  template <class Read>
  void note_read(const Read& read)
  {
    const auto& [error, count] = read;
    m_end += count;
    m_buffer->set_used(m_end); // and no read is pending
    if (error) {
      m_eof = true;
    }
  }

  // The line that next() just returned, with its newline (a last line
  // without one has none), where it lies in the buffer: valid until next()
  // is called again, which may move or overwrite it.
  std::string_view line_with_newline() const
  {
    return std::string_view(m_buffer->data() + m_taken_begin, m_taken_end - m_taken_begin);
  }

  // The buffer, whose unused memory may be given back while no line comes
  // (LineBuffer::release_unused); shared so that a holder that outlives
  // the reader finds it gone rather than dangling.
  std::weak_ptr<LineBuffer> buffer() const { return m_buffer; }

  // The buffer's size at first, and what it keeps when idle.
  static constexpr std::size_t k_buffer_bytes = 256 * 1024;

private:
  // A partial line at most this long is moved to the front of the buffer
  // before reading on.
  static constexpr std::size_t k_move_at_most = k_buffer_bytes / 2;
  // The most one read asks for: what the upstream's pipes hold.
  static constexpr std::size_t k_read_bytes = k_pipe_bytes;

  // Makes room after the bytes read for the next read, and returns it.
  boost::asio::mutable_buffer room_to_read()
  {
    const std::size_t partial = m_end - m_line_start;
    const bool full = m_end == m_buffer->size();
    // Move the partial line to the front when that is cheap, or when the
    // buffer is full and the line takes at most half of it (so the buffer
    // never grows past twice the longest line); otherwise a full buffer
    // grows, and a long line's bytes stay where they are.
    if (m_line_start > 0 && (partial <= k_move_at_most || (full && partial <= m_buffer->size() / 2))) {
      std::memmove(m_buffer->data(), m_buffer->data() + m_line_start, partial);
      m_end = partial;
      m_scanned -= m_line_start;
      m_line_start = 0;
    } else if (full) {
      m_buffer->grow(2 * m_buffer->size());
    }
    // At most k_read_bytes at a time (a pipe holds no more), so that the
    // room a pending read may fill, which the heap trimmer must leave be,
    // stays within what it keeps anyway while fsguard waits for a line.
    const std::size_t room = std::min(m_buffer->size() - m_end, k_read_bytes);
    m_buffer->set_used(m_end, room);
    return boost::asio::buffer(m_buffer->data() + m_end, room);
  }

  LineEvent take_buffered_line()
  {
    while (m_scanned < m_end) {
      const char* begin = m_buffer->data();
      const void* newline = std::memchr(begin + m_scanned, '\n', m_end - m_scanned);
      if (newline == nullptr) {
        m_scanned = m_end;
        break;
      }
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(newline) - begin);
      const std::size_t length = end - m_line_start;
      m_taken_begin = m_line_start;
      m_taken_end = end + 1;
      m_line_start = m_scanned = end + 1;
      if (m_discarding || length > m_max_line_bytes) {
        m_discarding = false;
        const std::size_t tail_begin = std::max(m_taken_begin, end - std::min(end, k_tail_bytes));
        const std::size_t total = std::exchange(m_discarded, 0) + length;
        return LineEvent{LineStatus::too_long,
                         std::string_view(begin + tail_begin, end - tail_begin), total};
      }
      return LineEvent{LineStatus::line, std::string_view(begin + m_taken_begin, length)};
    }
    if (m_end - m_line_start > m_max_line_bytes) {
      m_discarding = true;
    }
    if (m_discarding) {
      // The line's last k_tail_bytes so far stay, at the front, so that its
      // tail is its true last bytes however the reads split it.
      const std::size_t kept = std::min(m_end - m_line_start, k_tail_bytes);
      m_discarded += m_end - m_line_start - kept;
      std::memmove(m_buffer->data(), m_buffer->data() + m_end - kept, kept);
      m_line_start = 0;
      m_end = m_scanned = kept;
    }
    return LineEvent{LineStatus::eof, {}};
  }

  LineEvent take_unterminated_line()
  {
    if (m_discarding) {
      m_discarding = false;
      const std::size_t kept = m_end - m_line_start;
      const std::string_view tail(m_buffer->data() + m_line_start, kept);
      m_line_start = m_scanned = m_end;
      return LineEvent{LineStatus::too_long, tail, std::exchange(m_discarded, 0) + kept};
    }
    if (m_line_start < m_end) {
      const std::size_t length = m_end - m_line_start;
      m_taken_begin = m_line_start;
      m_taken_end = m_end;
      m_line_start = m_scanned = m_end;
      return LineEvent{LineStatus::line, std::string_view(m_buffer->data() + m_taken_begin, length)};
    }
    return LineEvent{LineStatus::eof, {}};
  }

  Stream& m_stream;
  std::size_t m_max_line_bytes;
  std::shared_ptr<LineBuffer> m_buffer; // [0, m_end) holds bytes read
  std::size_t m_end = 0;
  std::size_t m_line_start = 0;  // where the current line begins
  std::size_t m_scanned = 0;     // bytes already searched for a newline
  bool m_discarding = false;     // [m_line_start, m_end) holds the line's last bytes only
  std::size_t m_discarded = 0;   // bytes of the line being discarded, so far, not kept
  bool m_eof = false;
  std::size_t m_taken_begin = 0; // the last line returned, for line_with_newline()
  std::size_t m_taken_end = 0;
};

} // namespace fsguard
