// Newline-delimited framing of a byte stream into JSON-RPC lines, with a
// bound on line length so memory never grows without limit.
#pragma once

#include <algorithm>
#include <cstring>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

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
  // valid until the next call of next(); for too_long, the line's last bytes
  // (up to k_tail_bytes) that were still in the buffer, where a JSON-RPC
  // answer whose "result" comes first keeps its id
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
// Reads go into one fixed buffer. A line that outgrows half of it is set
// aside in pieces and joined once, into a string of its exact size, when its
// newline arrives: no regrowing buffer, so a long line costs two copies and
// at most twice its size in memory, however long it is.
template <class Stream>
class LineReader {
public:
  LineReader(Stream& stream, std::size_t max_line_bytes)
    : m_stream(stream), m_max_line_bytes(max_line_bytes), m_buffer(k_buffer_bytes, '\0')
  {
  }

  void set_max_line_bytes(std::size_t max_line_bytes) { m_max_line_bytes = max_line_bytes; }

  boost::asio::awaitable<LineEvent> next()
  {
    forget_line(); // a line the caller skipped without taking it
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
  // its own (a long line is moved out, not copied).
  std::string take_line()
  {
    std::string line;
    if (!m_joined.empty()) {
      line = std::move(m_joined);
      std::string().swap(m_joined);
    } else {
      line.reserve(m_taken_end - m_taken_begin + 1);
      line.assign(m_buffer.data() + m_taken_begin, m_taken_end - m_taken_begin);
    }
    if (line.empty() || line.back() != '\n') {
      line += '\n';
    }
    m_taken_begin = m_taken_end = 0;
    return line;
  }

  // Frees the memory of the line that next() just returned, for a caller
  // that is done with its text and does not take it.
  void forget_line()
  {
    std::string().swap(m_joined); // assigning an empty string would keep the capacity
  }

private:
  static constexpr std::size_t k_buffer_bytes = 256 * 1024;
  // A partial line longer than this is set aside as a piece before reading on.
  static constexpr std::size_t k_set_aside_above = k_buffer_bytes / 2;

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
      const std::size_t length = m_pieces_bytes + (end - m_line_start);
      m_taken_begin = m_line_start;
      m_taken_end = end + 1;
      m_line_start = m_scanned = end + 1;
      if (m_discarding || length > m_max_line_bytes) {
        m_discarding = false;
        drop_pieces();
        const std::size_t tail_begin = std::max(m_taken_begin, end - std::min(end, k_tail_bytes));
        const std::size_t total = std::exchange(m_discarded, 0) + length;
        return LineEvent{LineStatus::too_long,
                         std::string_view(begin + tail_begin, end - tail_begin), total};
      }
      return LineEvent{LineStatus::line, line_text(length)};
    }
    if (m_pieces_bytes + (m_end - m_line_start) > m_max_line_bytes) {
      m_discarding = true;
    }
    if (m_discarding) {
      m_discarded += m_pieces_bytes + (m_end - m_line_start);
      drop_pieces();
      m_end = m_line_start = m_scanned = 0;
    }
    return LineEvent{LineStatus::eof, {}};
  }

  LineEvent take_unterminated_line()
  {
    if (m_discarding) {
      m_discarding = false;
      return LineEvent{LineStatus::too_long, {}, std::exchange(m_discarded, 0)};
    }
    if (m_line_start < m_end || m_pieces_bytes > 0) {
      const std::size_t length = m_pieces_bytes + (m_end - m_line_start);
      m_taken_begin = m_line_start;
      m_taken_end = m_end;
      m_line_start = m_scanned = m_end;
      return LineEvent{LineStatus::line, line_text(length)};
    }
    return LineEvent{LineStatus::eof, {}};
  }

  // The text of the line now taken (`length` bytes without its newline):
  // in the buffer, or joined from the pieces set aside and the buffer's part.
  std::string_view line_text(std::size_t length)
  {
    if (m_pieces.empty()) {
      return std::string_view(m_buffer.data() + m_taken_begin, length);
    }
    m_joined.reserve(m_pieces_bytes + (m_taken_end - m_taken_begin) + 1);
    for (const auto& piece : m_pieces) {
      m_joined += piece;
    }
    m_joined.append(m_buffer.data() + m_taken_begin, m_taken_end - m_taken_begin);
    drop_pieces();
    return std::string_view(m_joined.data(), length);
  }

  void drop_pieces()
  {
    m_pieces.clear();
    m_pieces.shrink_to_fit();
    m_pieces_bytes = 0;
  }

  boost::asio::awaitable<void> read_more()
  {
    const std::size_t partial = m_end - m_line_start;
    if (partial > k_set_aside_above) {
      m_pieces.emplace_back(m_buffer.data() + m_line_start, partial);
      m_pieces_bytes += partial;
      m_end = m_line_start = m_scanned = 0;
    } else if (m_line_start > 0) {
      // Move the partial line to the front.
      std::memmove(m_buffer.data(), m_buffer.data() + m_line_start, partial);
      m_end = partial;
      m_scanned -= m_line_start;
      m_line_start = 0;
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
  std::vector<std::string> m_pieces; // the current line's earlier bytes, set aside
  std::size_t m_pieces_bytes = 0;
  bool m_discarding = false;
  std::size_t m_discarded = 0;   // bytes of the line being discarded, so far
  bool m_eof = false;
  std::string m_joined;          // the last line returned, if joined from pieces (never empty)
  std::size_t m_taken_begin = 0; // the last line returned, for take_line()
  std::size_t m_taken_end = 0;
};

} // namespace fsguard
