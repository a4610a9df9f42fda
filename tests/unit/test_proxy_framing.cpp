#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "proxy/process/framing.hpp"

using namespace fsguard;

namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<std::string> taken; // line_with_newline() after each line
  int too_long = 0;
  std::size_t largest_buffer = 0; // the reader's buffer at its largest
};

// Feeds `input` through a pipe into a LineReader and collects what it yields.
Collected frame(const std::string& input, std::size_t max_line_bytes)
{
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&] {
    std::size_t at = 0;
    while (at < input.size()) {
      const ssize_t n = ::write(fds[1], input.data() + at, std::min<std::size_t>(input.size() - at, 7001));
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  boost::asio::io_context context;
  Descriptor stream(context, fds[0]);
  Collected collected;
  boost::asio::co_spawn(context, [&]() -> Task<void> {
    LineReader reader(stream, max_line_bytes);
    for (;;) {
      const LineEvent event = co_await reader.next();
      collected.largest_buffer = std::max(collected.largest_buffer, reader.buffer().lock()->size());
      if (event.status == LineStatus::eof) break;
      if (event.status == LineStatus::too_long) {
        ++collected.too_long;
      } else {
        collected.lines.emplace_back(event.text);
        collected.taken.emplace_back(reader.line_with_newline());
      }
    }
  }, boost::asio::detached);
  context.run();
  writer.join();
  return collected;
}

} // namespace

TEST_SUITE("framing")
{
  TEST_CASE("lines split on LF, a CR before it is kept for relaying, and a last unterminated line counts")
  {
    const auto collected = frame("one\ntwo\r\n\nthree", 1024);
    CHECK(collected.lines == std::vector<std::string>{"one", "two\r", "", "three"});
    CHECK(collected.taken == std::vector<std::string>{"one\n", "two\r\n", "\n", "three"});
    CHECK(collected.too_long == 0);
  }

  TEST_CASE("a line over the limit is discarded and reported once, and framing stays in step")
  {
    const std::string huge(100'000, 'x');
    const auto collected = frame("before\n" + huge + "\nafter\n" + huge, 4096);
    CHECK(collected.lines == std::vector<std::string>{"before", "after"});
    CHECK(collected.too_long == 2);
  }

  TEST_CASE("lines much larger than a read chunk arrive whole")
  {
    const std::string big(3'000'000, 'y');
    const auto collected = frame(big + "\nsmall\n", 64 * 1024 * 1024);
    REQUIRE(collected.lines.size() == 2);
    CHECK(collected.lines[0] == big);
    CHECK(collected.lines[1] == "small");
    CHECK(collected.taken[0] == big + "\n");
    CHECK(collected.taken[1] == "small\n");
  }
}

TEST_SUITE("framing")
{
  TEST_CASE("long lines one after another keeps every byte in order")
  {
    std::string input;
    std::vector<std::string> expected;
    for (int index = 0; index < 6; ++index) {
      expected.push_back(std::string(100'000 + index * 77'777, static_cast<char>('a' + index)) + "\n");
      input += expected.back();
      expected.push_back("short " + std::to_string(index) + "\n");
      input += expected.back();
    }
    const auto collected = frame(input, 64 * 1024 * 1024);
    CHECK(collected.taken == expected);
  }

  TEST_CASE("a complete line over the limit that arrives in one read is still refused")
  {
    const std::string long_line(10'000, 'z');
    const auto collected = frame("a\n" + long_line + "\nb\n", 4096);
    CHECK(collected.lines == std::vector<std::string>{"a", "b"});
    CHECK(collected.too_long == 1);
  }
}

TEST_SUITE("framing")
{
  TEST_CASE("lines of every length around the buffer's size arrive whole and in order")
  {
    std::string input;
    std::vector<std::string> expected;
    std::size_t length = 1;
    for (int index = 0; index < 40; ++index) {
      length = (length * 7 + 1234567) % 700'000; // short to 2.7 buffers long
      std::string line(length, static_cast<char>('a' + index % 26));
      line[length / 2] = '"';
      expected.push_back(line + "\n");
      input += expected.back();
    }
    expected.push_back(std::string(400'000, 'q')); // a long last line without a newline
    input += std::string(400'000, 'q');
    const auto collected = frame(input, 64 * 1024 * 1024);
    REQUIRE(collected.taken.size() == expected.size());
    CHECK(collected.taken == expected);
    CHECK(collected.too_long == 0);
    // It grows for long lines (remapped, not copied), but never past a few
    // times the longest line, however the lines fall across reads.
    CHECK(collected.largest_buffer > 700'000);
    CHECK(collected.largest_buffer <= 4 * 700'000);
  }

  TEST_CASE("a long line over the limit is refused even when it was set aside in pieces")
  {
    const std::string long_line(1'000'000, 'z');
    const auto collected = frame("a\n" + long_line + "\nb\n" + long_line, 600'000);
    CHECK(collected.lines == std::vector<std::string>{"a", "b"});
    CHECK(collected.too_long == 2);
  }
}

TEST_SUITE("framing")
{
  TEST_CASE("a long line skipped without taking it leaves the next line intact")
  {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const std::string input = std::string(300'000, ' ') + "\nnext\n";
    std::thread writer([&] {
      std::size_t at = 0;
      while (at < input.size()) {
        const ssize_t n = ::write(fds[1], input.data() + at, input.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fds[1]);
    });
    boost::asio::io_context context;
    Descriptor stream(context, fds[0]);
    std::string taken;
    boost::asio::co_spawn(context, [&]() -> Task<void> {
      LineReader reader(stream, 1 << 20);
      const LineEvent blank = co_await reader.next(); // not taken, as the relay skips blank lines
      CHECK(blank.text.size() == 300'000);
      const LineEvent next = co_await reader.next();
      CHECK(next.text == "next");
      taken = reader.line_with_newline();
    }, boost::asio::detached);
    context.run();
    writer.join();
    CHECK(taken == "next\n");
  }

  TEST_CASE("a release of the buffer's unused memory leaves the bytes a read put there before they are counted")
  {
    // The heap trimmer gives back the buffer's pages past the bytes in use
    // while fsguard waits; here it does so on every turn of the event loop.
    // Asio reads in its reactor (or speculatively) and resumes the reader
    // later, so a release in between must not zero what the read put there.
    const std::string line(1024 * 1024, 'x');
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] {
      const std::string text = line + "\n";
      std::size_t at = 0;
      while (at < text.size()) {
        const ssize_t n = ::write(fds[1], text.data() + at, std::min<std::size_t>(text.size() - at, 50000));
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fds[1]);
    });
    boost::asio::io_context context;
    Descriptor stream(context, fds[0]);
    LineReader reader(stream, 64 * 1024 * 1024);
    const auto buffer = reader.buffer();
    bool done = false;
    std::function<void()> trim = [&] {
      if (done) {
        return;
      }
      buffer.lock()->release_unused(0);
      boost::asio::post(context, trim);
    };
    boost::asio::post(context, trim);
    std::string received;
    boost::asio::co_spawn(context, [&]() -> Task<void> {
      const LineEvent event = co_await reader.next();
      received = std::string(event.text);
      done = true;
    }, boost::asio::detached);
    context.run();
    writer.join();
    CHECK(received.size() == line.size());
    CHECK(received == line);
  }
}

namespace {

// A stream that hands out `chunks` one read each (a chunk larger than the
// room a read offers is handed out over several), then the end: the reads
// split the bytes exactly where a test says, as a pipe may.
class ChunkStream {
public:
  ChunkStream(boost::asio::io_context& context, std::vector<std::string> chunks)
    : m_executor(context.get_executor()), m_chunks(std::move(chunks))
  {
  }

  template <class Token>
  auto async_read_some(boost::asio::mutable_buffer room, Token&& token)
  {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      [this, room](auto handler) {
        boost::system::error_code error;
        std::size_t count = 0;
        if (m_next == m_chunks.size()) {
          error = boost::asio::error::eof;
        } else {
          std::string& chunk = m_chunks[m_next];
          count = std::min(chunk.size(), room.size());
          std::memcpy(room.data(), chunk.data(), count);
          chunk.erase(0, count);
          m_next += chunk.empty() ? 1 : 0;
        }
        boost::asio::post(m_executor, [handler = std::move(handler), error, count]() mutable {
          std::move(handler)(error, count);
        });
      },
      token);
  }

private:
  Executor m_executor;
  std::vector<std::string> m_chunks;
  std::size_t m_next = 0;
};

struct TooLong {
  std::string tail;
  std::size_t length = 0;
};

// The too_long events and the lines a LineReader yields from `chunks`.
std::pair<std::vector<TooLong>, std::vector<std::string>>
frame_chunks(std::vector<std::string> chunks, std::size_t max_line_bytes)
{
  boost::asio::io_context context;
  ChunkStream stream(context, std::move(chunks));
  std::vector<TooLong> too_long;
  std::vector<std::string> lines;
  boost::asio::co_spawn(context, [&]() -> Task<void> {
    LineReader reader(stream, max_line_bytes);
    for (;;) {
      const LineEvent event = co_await reader.next();
      if (event.status == LineStatus::eof) break;
      if (event.status == LineStatus::too_long) {
        too_long.push_back({std::string(event.text), event.length});
      } else {
        lines.emplace_back(event.text);
      }
    }
  }, boost::asio::detached);
  context.run();
  return {too_long, lines};
}

} // namespace

TEST_SUITE("framing")
{
  TEST_CASE("a discarded line's tail is its true last bytes, however the reads split it")
  {
    // An answer over the limit whose id is at its end: the last read may
    // bring only a few of its bytes ("55}"), the rest of the id having come
    // in reads that were discarded.
    std::string line = R"({"result":{"content":[{"type":"text","text":")";
    line += std::string(20'000, 'x') + R"("}]},"jsonrpc":"2.0","id":55})";
    const std::string tail = line.substr(line.size() - k_tail_bytes);
    for (std::size_t last = 1; last <= 40; ++last) {
      for (const std::size_t middle : {std::size_t{1}, std::size_t{7}, std::size_t{600}}) {
        CAPTURE(last);
        CAPTURE(middle);
        const std::size_t cut = line.size() - last;
        const auto [too_long, lines] = frame_chunks(
          {line.substr(0, cut - middle), line.substr(cut - middle, middle),
           line.substr(cut) + "\nnext\n"},
          4096);
        REQUIRE(too_long.size() == 1);
        CHECK(too_long.front().tail == tail);
        CHECK(too_long.front().length == line.size());
        CHECK(lines == std::vector<std::string>{"next"});
      }
    }
    // Read a byte at a time, and cut off by the end of the stream.
    std::vector<std::string> bytes;
    for (const char c : line.substr(line.size() - 100)) {
      bytes.emplace_back(1, c);
    }
    bytes.insert(bytes.begin(), line.substr(0, line.size() - 100));
    const auto [unterminated, none] = frame_chunks(bytes, 4096);
    REQUIRE(unterminated.size() == 1);
    CHECK(unterminated.front().tail == tail);
    CHECK(unterminated.front().length == line.size());
    CHECK(none.empty());
  }
}
