#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "proxy/guard/outbox.hpp"
#include "proxy/jsonrpc/outgoing_line.hpp"

using namespace fsguard;

TEST_SUITE("outgoing line")
{
  TEST_CASE("a borrowed line shows its buffer's bytes, and once owned keeps them when the buffer is reused")
  {
    std::string buffer = "{\"id\":1}\n";
    OutgoingLine line = OutgoingLine::borrowed(buffer);
    CHECK(line.is_borrowed());
    CHECK(line.text().data() == buffer.data());
    line.own();
    CHECK_FALSE(line.is_borrowed());
    std::fill(buffer.begin(), buffer.end(), '#');
    CHECK(line == "{\"id\":1}\n");
  }

  TEST_CASE("take() copies a borrowed line and moves an owned one's string")
  {
    std::string buffer = "borrowed\n";
    std::string taken = OutgoingLine::borrowed(buffer).take();
    std::fill(buffer.begin(), buffer.end(), '#');
    CHECK(taken == "borrowed\n");
    std::string owned(1000, 'o'); // past the small-string room: its bytes move
    const char* bytes = owned.data();
    const std::string moved = OutgoingLine(std::move(owned)).take();
    CHECK(moved.data() == bytes);
  }

  TEST_CASE("the written front of a line is dropped, borrowed or owned")
  {
    const std::string buffer = "abcdef\n";
    OutgoingLine borrowed = OutgoingLine::borrowed(buffer);
    borrowed.drop_front(3);
    CHECK(borrowed == "def\n");
    CHECK(borrowed.is_borrowed());
    OutgoingLine owned(std::string("abcdef\n"));
    owned.drop_front(7);
    CHECK(owned == ""); // a line written whole but for its newline
  }

  TEST_CASE("an Outbox's own_lines() leaves no line to the upstream on the reader's buffer")
  {
    std::string buffer = "{\"id\":2}\n";
    Outbox out;
    out.to_upstream.push_back(std::string("{\"id\":\"fsguard/verify/1\"}\n"));
    out.to_upstream.push_back(OutgoingLine::borrowed(buffer));
    out.to_upstream.back().drop_front(1); // written in part
    out.own_lines();
    std::fill(buffer.begin(), buffer.end(), '#');
    CHECK_FALSE(out.to_upstream[0].is_borrowed());
    CHECK_FALSE(out.to_upstream[1].is_borrowed());
    CHECK(out.to_upstream[0] == "{\"id\":\"fsguard/verify/1\"}\n");
    CHECK(out.to_upstream[1] == "\"id\":2}\n");
  }
}
