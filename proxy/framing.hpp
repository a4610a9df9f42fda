// Newline-delimited framing of a byte stream into JSON-RPC lines, with a
// bound on line length so memory never grows without limit.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace fsguard {

enum class LineStatus {
  line,     // a complete line, without its LF (a CR before it stays: JSON
            // treats it as white space, and relaying it keeps the bytes)
  too_long, // a line over the limit ended; its bytes were discarded
  eof,      // the stream ended
};

struct LineEvent {
  LineStatus status = LineStatus::eof;
  std::string_view text; // valid until the next call of next()
};

// Reads lines from `Stream` (any Asio async read stream). A line longer than
// `max_line_bytes` is discarded as it streams in and reported once, as
// too_long, when its newline arrives. A last line without a newline still
// counts as a line.
template <class Stream>
class LineReader {
public:
  LineReader(Stream& stream, std::size_t max_line_bytes)
    : m_stream(stream), m_max_line_bytes(max_line_bytes)
  {
  }

  void set_max_line_bytes(std::size_t max_line_bytes) { m_max_line_bytes = max_line_bytes; }

  boost::asio::awaitable<LineEvent> next()
  {
    for (;;) {
      if (auto event = take_buffered_line(); event.status != LineStatus::eof) {
        co_return event;
      }
      if (m_eof) {
        co_return take_unterminated_line();
      }
      co_await read_more();
    }
  }

  // The line that next() just returned, with its newline, as a string of
  // its own. A long line at the start of the buffer is moved out without
  // copying; only the bytes after it are copied back.
  std::string take_line()
  {
    const std::size_t begin = m_taken_begin;
    const std::size_t end = m_taken_end; // one past the newline, or the end
    std::string line;
    if (begin == 0 && end > k_copy_below) {
      line = std::move(m_buffer);
      m_buffer.assign(line.data() + end, m_end - end);
      line.resize(end);
      m_end -= end;
      m_line_start -= end;
      m_scanned -= end;
    } else {
      line.assign(m_buffer.data() + begin, end - begin);
    }
    if (line.empty() || line.back() != '\n') {
      line += '\n';
    }
    m_taken_begin = m_taken_end = 0;
    return line;
  }

private:
  static constexpr std::size_t k_read_chunk = 256 * 1024;
  static constexpr std::size_t k_copy_below = 64 * 1024;

  LineEvent take_buffered_line()
  {
    while (m_scanned < m_end) {
      const char* begin = m_buffer.data();
      const void* newline = std::memchr(begin + m_scanned, '\n', m_end - m_scanned);
      if (newline == nullptr) {
        m_scanned = m_end;
        break;
      }
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(newline) - begin);
      std::string_view text(begin + m_line_start, end - m_line_start);
      m_taken_begin = m_line_start;
      m_taken_end = end + 1;
      m_line_start = m_scanned = end + 1;
      if (m_discarding || text.size() > m_max_line_bytes) {
        m_discarding = false;
        return LineEvent{LineStatus::too_long, {}};
      }
      return LineEvent{LineStatus::line, text};
    }
    if (m_end - m_line_start > m_max_line_bytes) {
      m_discarding = true;
    }
    if (m_discarding) {
      m_end = m_line_start = m_scanned = 0;
    }
    return LineEvent{LineStatus::eof, {}};
  }

  LineEvent take_unterminated_line()
  {
    if (m_discarding) {
      m_discarding = false;
      return LineEvent{LineStatus::too_long, {}};
    }
    if (m_line_start < m_end) {
      std::string_view text(m_buffer.data() + m_line_start, m_end - m_line_start);
      m_taken_begin = m_line_start;
      m_taken_end = m_end;
      m_line_start = m_scanned = m_end;
      return LineEvent{LineStatus::line, text};
    }
    return LineEvent{LineStatus::eof, {}};
  }

  boost::asio::awaitable<void> read_more()
  {
    if (m_line_start > 0) {
      // Move the partial line to the front.
      std::memmove(m_buffer.data(), m_buffer.data() + m_line_start, m_end - m_line_start);
      m_end -= m_line_start;
      m_scanned -= m_line_start;
      m_line_start = 0;
    }
    if (m_buffer.size() < m_end + k_read_chunk) {
      // Grow (zero-filling only the new part, once) by a quarter rather than
      // doubling: a 60 MiB line then needs about 75 MiB, not 128.
      m_buffer.resize(m_end + k_read_chunk + m_end / 4);
    }
    auto [error, count] = co_await m_stream.async_read_some(
      boost::asio::buffer(m_buffer.data() + m_end, m_buffer.size() - m_end),
      boost::asio::as_tuple(boost::asio::use_awaitable));
    m_end += count;
    if (error) {
      m_eof = true;
    }
  }

  Stream& m_stream;
  std::size_t m_max_line_bytes;
  std::string m_buffer;          // m_buffer[0, m_end) holds bytes read
  std::size_t m_end = 0;
  std::size_t m_line_start = 0;  // where the current line begins
  std::size_t m_scanned = 0;     // bytes already searched for a newline
  bool m_discarding = false;
  bool m_eof = false;
  std::size_t m_taken_begin = 0; // the last line returned, for take_line()
  std::size_t m_taken_end = 0;
};

} // namespace fsguard
