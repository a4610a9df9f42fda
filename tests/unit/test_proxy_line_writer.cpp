#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "proxy/process/line_writer.hpp"

using namespace fsguard;

namespace {

using Stream = Descriptor;

// A pipe that holds one page, so a line longer than that is taken in part.
struct SmallPipe {
  int read_end = -1;
  int write_end = -1;

  SmallPipe()
  {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read_end = fds[0];
    write_end = fds[1];
    REQUIRE(::fcntl(write_end, F_SETPIPE_SZ, 4096) == 4096);
  }
  ~SmallPipe()
  {
    if (read_end >= 0) {
      ::close(read_end);
    }
  }

  // Everything the pipe holds now.
  std::string drain() const
  {
    const int flags = ::fcntl(read_end, F_GETFL);
    ::fcntl(read_end, F_SETFL, flags | O_NONBLOCK);
    std::string out;
    char buffer[8192];
    for (ssize_t n; (n = ::read(read_end, buffer, sizeof buffer)) > 0;) {
      out.append(buffer, static_cast<std::size_t>(n));
    }
    ::fcntl(read_end, F_SETFL, flags);
    return out;
  }
};

// A LineWriter on the write end of a SmallPipe.
struct PipeWriter {
  SmallPipe pipe;
  boost::asio::io_context context;
  Stream stream{context, pipe.write_end};
  Log log;
  LineWriter<Stream> writer{stream, log, "test"};

  // Hands `rest` to write() and runs the writer to its end, draining the
  // pipe as it goes; returns what was drained.
  std::string write_and_drain(std::string_view rest)
  {
    boost::asio::co_spawn(context, [this, rest]() -> Task<void> {
      co_await writer.write(rest);
    }, boost::asio::detached);
    std::string received;
    while (context.run_one() > 0) {
      received += pipe.drain();
    }
    return received + pipe.drain();
  }
};

} // namespace

TEST_SUITE("line writer")
{
  TEST_CASE("try_write writes a line that fits whole, with its newline, and leaves nothing")
  {
    PipeWriter w;
    auto& [pipe, context, stream, log, writer] = w;
    CHECK_FALSE(writer.try_write("{\"id\":1}").has_value());
    CHECK_FALSE(writer.try_write("{\"id\":2}\n").has_value()); // has its newline already
    CHECK(pipe.drain() == "{\"id\":1}\n{\"id\":2}\n");
  }

  TEST_CASE("what try_write leaves, write() finishes: every byte once, in order")
  {
    PipeWriter w;
    auto& [pipe, context, stream, log, writer] = w;
    const std::string line(10000, 'x'); // longer than the pipe holds, short for try_write
    REQUIRE(line.size() <= LineWriter<Stream>::k_at_once_bytes);
    const auto rest = writer.try_write(line);
    REQUIRE(rest.has_value());
    CHECK(rest->size() == line.size() - 4096);
    CHECK(rest->data() == line.data() + 4096); // the unwritten end of the caller's line
    std::string received = pipe.drain();
    received += w.write_and_drain(*rest);
    CHECK(received == line + "\n");
  }

  TEST_CASE("a long line is handed back whole, unwritten, for write()")
  {
    PipeWriter w;
    auto& [pipe, context, stream, log, writer] = w;
    const std::string line(LineWriter<Stream>::k_at_once_bytes + 1, 'z');
    const auto rest = writer.try_write(line);
    REQUIRE(rest.has_value());
    CHECK(rest->data() == line.data());
    CHECK(rest->size() == line.size());
    CHECK(pipe.drain().empty());
  }

  TEST_CASE("when only the newline does not fit, the rest is empty and write() sends the newline")
  {
    PipeWriter w;
    auto& [pipe, context, stream, log, writer] = w;
    const std::string line(4096, 'y'); // fills the pipe; its newline is a 4097th byte
    const auto rest = writer.try_write(line);
    REQUIRE(rest.has_value());
    CHECK(rest->empty());
    std::string received = pipe.drain();
    received += w.write_and_drain(*rest);
    CHECK(received == line + "\n");
  }

  TEST_CASE("while a write is in progress, try_write writes nothing and hands the whole line back")
  {
    PipeWriter w;
    auto& [pipe, context, stream, log, writer] = w;
    const std::string first(10000, 'a');
    bool first_written = false;
    boost::asio::co_spawn(context, [&]() -> Task<void> {
      co_await writer.write(first);
      first_written = true;
    }, boost::asio::detached);
    context.poll(); // the first line fills the pipe and waits for it to drain
    REQUIRE_FALSE(first_written);
    // Room in the pipe again, but the first line is not finished.
    std::string received = pipe.drain();
    const std::string second = "{\"id\":2}";
    const auto rest = writer.try_write(second);
    REQUIRE(rest.has_value());
    CHECK(*rest == second);
    received += w.write_and_drain(*rest);
    CHECK(first_written);
    CHECK(received == first + "\n" + second + "\n");
  }

  TEST_CASE("once the reader is gone, try_write drops the line and so does every line after it")
  {
    std::signal(SIGPIPE, SIG_IGN);
    SmallPipe pipe;
    ::close(pipe.read_end);
    pipe.read_end = -1;
    boost::asio::io_context context;
    Stream stream(context, pipe.write_end);
    const Log log(LogLevel::error); // the broken pipe is logged at info
    LineWriter<Stream> writer(stream, log, "test");
    CHECK_FALSE(writer.try_write("{\"id\":1}").has_value());
    CHECK_FALSE(writer.try_write("{\"id\":2}").has_value());
  }
}
