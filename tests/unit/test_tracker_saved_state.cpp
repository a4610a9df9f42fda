#include <doctest/doctest.h>

#include "tracker/saved_state.hpp"

using namespace fsguard;

namespace {

const StateKey k_key{{"node", "server.js", "."}, "/home/me/project"};
const StateKey k_other_key{{"node", "server.js", "."}, "/home/me/other"};

SavedRecord record(const std::string& path, std::int64_t taken_at_ns, std::uint64_t hash = 1)
{
  SavedRecord saved;
  saved.path = path;
  saved.hash = {hash, ~hash};
  saved.stat = FileStat{64769, 1234, 6, 1'700'000'000'000'000'000, 1'700'000'000'000'000'001,
                        0100644};
  saved.stat_trusted = true;
  saved.taken_at_ns = taken_at_ns;
  saved.seen_at_ns = taken_at_ns - 5;
  saved.view = ReadView::utf8_text;
  return saved;
}

SavedState state_of(const StateKey& key, const std::vector<SavedRecord>& records)
{
  SavedState state;
  merge_state(state, key, records);
  return state;
}

} // namespace

TEST_SUITE("saved_state")
{
  TEST_CASE("records written to a state file read back the same, for their upstream only")
  {
    SavedRecord partial = record("/p/b.txt", 20, 7);
    partial.extent = ReadExtent::partial;
    partial.partial_reason = "the client cut it";
    partial.stat_trusted = false;
    partial.view = ReadView::utf8_lines;
    partial.traits = ContentTraits{false, true};
    const std::vector<SavedRecord> records{partial, record("/p/a.txt", 10)};
    const SavedState parsed = parse_state(state_text(state_of(k_key, records)));
    CHECK(parsed.kind == StateKind::ours);
    CHECK(records_of(parsed, k_key) == records);
    CHECK(records_of(parsed, k_other_key).empty());
  }

  TEST_CASE("no text, or only white space, is an empty state file")
  {
    CHECK(parse_state("").kind == StateKind::empty);
    CHECK(parse_state(" \n").kind == StateKind::empty);
  }

  TEST_CASE("text that is not an fsguard state file is foreign, and gives no records")
  {
    for (const char* text : {"garbage", "{\"a\": 1}", "[1, 2]", "{\"format\": \"other\"}",
                             "# my notes\n{\"format\":\"fsguard-state\""}) {
      CAPTURE(text);
      const SavedState state = parse_state(text);
      CHECK(state.kind == StateKind::foreign);
      CHECK_FALSE(state.problem.empty());
      CHECK(records_of(state, k_key).empty());
    }
  }

  TEST_CASE("a state file cut short, or with a damaged record, is fsguard's but unreadable")
  {
    const std::string text = state_text(state_of(k_key, {record("/p/a.txt", 10)}));
    CHECK(parse_state(text.substr(0, text.size() / 2)).kind == StateKind::ours_damaged);
    std::string bad_hash = text;
    bad_hash.replace(bad_hash.find("\"xxh3_128\":\"") + 12, 1, "Z");
    CHECK(parse_state(bad_hash).kind == StateKind::ours_damaged);
    std::string relative = text;
    relative.replace(relative.find("\"/p/a.txt\""), 10, "\"p/a.txt\"");
    CHECK(parse_state(relative).kind == StateKind::ours_damaged);
    CHECK(records_of(parse_state(relative), k_key).empty());
  }

  TEST_CASE("a state file of another version is neither read nor foreign")
  {
    std::string text = state_text(state_of(k_key, {record("/p/a.txt", 10)}));
    text.replace(text.find("\"version\":1"), 11, "\"version\":2");
    const SavedState state = parse_state(text);
    CHECK(state.kind == StateKind::other_version);
    CHECK(records_of(state, k_key).empty());
  }

  TEST_CASE("a merge keeps the record taken later for a path, and the other upstreams' records")
  {
    SavedState state = state_of(k_key, {record("/p/a.txt", 10, 1), record("/p/b.txt", 30, 2)});
    merge_state(state, k_other_key, {record("/q/c.txt", 5)});
    merge_state(state, k_key, {record("/p/a.txt", 20, 3), record("/p/b.txt", 25, 4)});
    const auto mine = records_of(state, k_key);
    REQUIRE(mine.size() == 2);
    CHECK(mine[0].path == "/p/b.txt");
    CHECK(mine[0].hash == ContentHash{2, ~std::uint64_t{2}}); // taken at 30, not at 25
    CHECK(mine[1].hash == ContentHash{3, ~std::uint64_t{3}}); // taken at 20, not at 10
    CHECK(records_of(state, k_other_key).size() == 1);
  }

  TEST_CASE("a merge keeps only the most recently taken records of all upstreams")
  {
    SavedState state = state_of(k_other_key, {record("/q/old.txt", 1), record("/q/new.txt", 50)});
    merge_state(state, k_key, {record("/p/a.txt", 10), record("/p/b.txt", 20)}, 2);
    CHECK(records_of(state, k_other_key).size() == 1);
    CHECK(records_of(state, k_other_key).front().path == "/q/new.txt");
    CHECK(records_of(state, k_key).size() == 1);
    CHECK(records_of(state, k_key).front().path == "/p/b.txt");
  }

  TEST_CASE("a merge into a damaged or older state file starts afresh")
  {
    SavedState state = parse_state("{\"format\":\"fsguard-state\",\"version\":0}");
    REQUIRE(state.kind == StateKind::other_version);
    merge_state(state, k_key, {record("/p/a.txt", 10)});
    CHECK(parse_state(state_text(state)).kind == StateKind::ours);
    CHECK(records_of(parse_state(state_text(state)), k_key).size() == 1);
  }

  TEST_CASE("a record whose path is not valid UTF-8 is not written")
  {
    const SavedState state = state_of(k_key, {record("/p/\xff.txt", 10), record("/p/a.txt", 5)});
    const auto read_back = records_of(parse_state(state_text(state)), k_key);
    REQUIRE(read_back.size() == 1);
    CHECK(read_back.front().path == "/p/a.txt");
  }
}
