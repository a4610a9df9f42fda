#include <doctest/doctest.h>

#include "proxy/process/stderr_tail.hpp"

using namespace fsguard;

TEST_SUITE("stderr_tail")
{
  TEST_CASE("the last words are the last line that speaks of an error, else the last line")
  {
    StderrTail node;
    node.append("node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n");
    node.append("Error: Cannot find module '/srv/index.jss'\n    at Module._resolveFilename\n");
    node.append("  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n");
    CHECK(node.last_words() == "Error: Cannot find module '/srv/index.jss'");

    StderrTail quiet;
    quiet.append("Secure MCP Filesystem Server running on stdio\n  \n");
    CHECK(quiet.last_words() == "Secure MCP Filesystem Server running on stdio");
    CHECK(StderrTail().last_words().empty());
  }

  TEST_CASE("the last words are cut to the limit")
  {
    StderrTail tail;
    tail.append("error: " + std::string(500, 'x'));
    CHECK(tail.last_words(20) == "error: xxxxxxxxxxxxx");
  }
}
