#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "proxy/process/stderr_writer.hpp"

using namespace fsguard;

namespace {

// A pipe standing in for fsguard's stderr; the test is the client that does
// or does not read it.
struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe()
  {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    read_end = fds[0];
    write_end = fds[1];
    ::fcntl(read_end, F_SETFL, ::fcntl(read_end, F_GETFL) | O_NONBLOCK);
  }
  ~Pipe()
  {
    ::close(read_end);
    ::close(write_end);
  }
  // Everything the pipe holds right now.
  std::string take()
  {
    std::string text;
    char buffer[65536];
    for (;;) {
      const ssize_t count = ::read(read_end, buffer, sizeof buffer);
      if (count <= 0) {
        return text;
      }
      text.append(buffer, static_cast<std::size_t>(count));
    }
  }
};

std::string numbered_line(int number)
{
  return "fsguard: warn: line " + std::to_string(number) + " " + std::string(100, 'x') + "\n";
}

} // namespace

TEST_SUITE("stderr_writer")
{
  TEST_CASE("lines go out at once while the reader keeps up")
  {
    boost::asio::io_context io;
    Pipe pipe;
    StderrWriter writer(io.get_executor(), pipe.write_end, 4096);
    writer.write("fsguard: one\n");
    writer.write("fsguard: two\n");
    CHECK(pipe.take() == "fsguard: one\nfsguard: two\n");
    CHECK(writer.queued_bytes() == 0);
  }

  TEST_CASE("a reader that never reads costs dropped lines, never a blocked write, and hears of them once it reads")
  {
    boost::asio::io_context io;
    Pipe pipe;
    StderrWriter writer(io.get_executor(), pipe.write_end, 8192);
    boost::asio::co_spawn(io, writer.drain(), boost::asio::detached);
    constexpr int k_lines = 10'000; // about 1.2 MB, far more than the pipe and the queue hold
    for (int number = 0; number < k_lines; ++number) {
      writer.write(numbered_line(number)); // a blocking write would hang here
    }
    io.poll();
    CHECK(writer.queued_bytes() <= 8192 + numbered_line(0).size());
    const std::size_t dropped = writer.dropped_lines();
    CHECK(dropped > 0);

    // The client reads at last: what was kept arrives whole and in order,
    // then one report of what was not.
    std::string text;
    for (int round = 0; round < 1000 && text.find("because stderr") == std::string::npos; ++round) {
      text += pipe.take();
      io.poll();
    }
    text += pipe.take();
    CHECK(text.find("fsguard: warn: dropped " + std::to_string(dropped)
                    + " log lines (") != std::string::npos);
    CHECK(text.find("bytes) because stderr was not being read\n") != std::string::npos);
    int previous = -1;
    std::size_t kept = 0;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = text.find('\n', at);
      REQUIRE(end != std::string::npos);
      const std::string line = text.substr(at, end - at + 1);
      at = end + 1;
      if (line.starts_with("fsguard: warn: dropped")) {
        continue;
      }
      const int number = std::stoi(line.substr(std::string("fsguard: warn: line ").size()));
      CHECK(line == numbered_line(number));
      CHECK(number > previous);
      previous = number;
      ++kept;
    }
    CHECK(kept + dropped == k_lines);
    CHECK(writer.dropped_lines() == 0);
  }

  TEST_CASE("finish gives the queue a last chance, and then never waits")
  {
    boost::asio::io_context io;
    Pipe pipe;
    StderrWriter writer(io.get_executor(), pipe.write_end, 8192);
    for (int number = 0; number < 2000; ++number) {
      writer.write(numbered_line(number));
    }
    writer.finish(std::chrono::milliseconds(1)); // nobody reads: it gives up
    CHECK(writer.queued_bytes() == 0);
    writer.write(numbered_line(0)); // after the session: dropped, not waited for
    CHECK(writer.queued_bytes() == 0);
  }

  TEST_CASE("a file is written directly, since a file never waits for a reader")
  {
    boost::asio::io_context io;
    char name[] = "/tmp/fsguard-stderr-XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::unlink(name);
    std::size_t total = 0;
    {
      StderrWriter writer(io.get_executor(), fd, 16);
      for (int number = 0; number < 100; ++number) {
        writer.write(numbered_line(number));
        total += numbered_line(number).size();
      }
      CHECK(writer.dropped_lines() == 0);
    }
    CHECK(::lseek(fd, 0, SEEK_END) == static_cast<off_t>(total));
    ::close(fd);
  }
}
