#include <doctest/doctest.h>

#include <cerrno>
#include <memory>

#include "fake_disk.hpp"
#include "tracker/content_traits.hpp"
#include "tracker/tracker.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

constexpr std::int64_t k_tick = 4'000'000;          // one 250 Hz jiffy
constexpr std::int64_t k_later = 10'000'000'000LL;  // well past the racy window
const std::string k_file = "/ws/a.txt";

struct Fixture {
  FakeDisk disk;
  Tracker tracker{disk};

  Fixture()
  {
    disk.make_directory("/ws");
    disk.write(k_file, "hello\n");
  }

  // A read whose response has been forwarded, and whose hash may be owed.
  void read_forwarded(const std::string& path = k_file, ReadExtent extent = ReadExtent::whole,
                      ReadView view = ReadView::utf8_text)
  {
    const ReadStart start = tracker.begin_read(path);
    tracker.finish_read(path, start, extent, view);
  }

  void read(const std::string& path = k_file, ReadExtent extent = ReadExtent::whole,
            ReadView view = ReadView::utf8_text)
  {
    read_forwarded(path, extent, view);
    tracker.settle_reads(); // as the relay does once the response is forwarded
  }

  std::optional<Veto> overwrite(const std::string& path = k_file)
  {
    return tracker.check_write(path, WriteKind::overwrite, PartialReadAllowsOverwrite::no);
  }

  std::optional<Veto> edit(const std::string& path = k_file)
  {
    return tracker.check_write(path, WriteKind::edit, PartialReadAllowsOverwrite::no);
  }
};

VetoCode code_of(const std::optional<Veto>& veto)
{
  REQUIRE(veto.has_value());
  return veto->code;
}

} // namespace

TEST_SUITE("tracker")
{
  TEST_CASE("a write to an existing file that was never read is vetoed as not_read")
  {
    Fixture f;
    CHECK(code_of(f.overwrite()) == VetoCode::not_read);
    CHECK(code_of(f.edit()) == VetoCode::not_read);
  }

  TEST_CASE("a write to a file that does not exist is allowed")
  {
    Fixture f;
    CHECK_FALSE(f.overwrite("/ws/new.txt"));
  }

  TEST_CASE("a write after a whole read of an unchanged file is allowed")
  {
    Fixture f;
    f.read();
    CHECK_FALSE(f.overwrite());
    CHECK_FALSE(f.edit());
  }

  TEST_CASE("an old, unchanged file passes on stat alone without hashing again")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    const int hashes_after_read = f.disk.hash_calls;
    CHECK_FALSE(f.overwrite());
    CHECK(f.disk.hash_calls == hashes_after_read);
  }

  TEST_CASE("a same-size rewrite in the same clock tick as the read is caught by content")
  {
    Fixture f;
    f.read();
    f.disk.write(k_file, "HELLO\n"); // same size; same tick, so same mtime and ctime
    const auto veto = f.overwrite();
    CHECK(code_of(veto) == VetoCode::changed);
    CHECK(veto->seen_size == 6);
    CHECK(veto->current_size == 6);
  }

  TEST_CASE("a same-size rewrite with the mtime restored is caught")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(k_later);
    f.disk.write_keeping_mtime(k_file, "HELLO\n");
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("an mtime moved backwards with new content is caught")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "other content\n");
    f.disk.set_mtime(k_file, 1);
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a rename-over by an editor with new content is caught")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.replace(k_file, "edited\n");
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("touch, chmod and identical rewrites are not vetoed, and refresh the record")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_later);
    f.disk.set_mtime(k_file, f.disk.now_ns());
    CHECK_FALSE(f.overwrite());
    f.disk.advance(k_later);
    f.disk.chmod(k_file, 0600);
    CHECK_FALSE(f.overwrite());
    f.disk.advance(k_later);
    f.disk.replace(k_file, "hello\n");
    CHECK_FALSE(f.edit());
    f.disk.advance(k_later);
    CHECK_FALSE(f.overwrite()); // the refreshed record was racy: confirmed by content
    const int hashes = f.disk.hash_calls;
    CHECK_FALSE(f.overwrite()); // now old enough: the stat fast path applies again
    CHECK(f.disk.hash_calls == hashes);
  }

  TEST_CASE("a change while the read is in flight makes the read not count")
  {
    Fixture f;
    f.disk.advance(k_later);
    const ReadStart start = f.tracker.begin_read(k_file);
    f.disk.advance(k_tick);
    f.disk.write(k_file, "changed meanwhile\n");
    f.tracker.finish_read(k_file, start, ReadExtent::whole, ReadView::utf8_text);
    CHECK(code_of(f.overwrite()) == VetoCode::changed_during_read);
    f.read();
    CHECK_FALSE(f.overwrite());
  }

  TEST_CASE("a same-tick same-size change during a read of a fresh file is caught by content")
  {
    Fixture f;
    const ReadStart start = f.tracker.begin_read(k_file); // racy: hashes up front
    REQUIRE(start.hash.has_value());
    f.disk.write(k_file, "HELLO\n");
    f.tracker.finish_read(k_file, start, ReadExtent::whole, ReadView::utf8_text);
    CHECK(code_of(f.overwrite()) == VetoCode::changed_during_read);
  }

  TEST_CASE("a file that changes while it is hashed is never paired with the wrong stat")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "next\n");
    f.disk.on_next_hash = [&] { f.disk.advance(k_tick); f.disk.write(k_file, "third\n"); };
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a head/tail read licenses edit_file but not write_file")
  {
    Fixture f;
    f.read(k_file, ReadExtent::partial);
    CHECK(code_of(f.overwrite()) == VetoCode::partial_read);
    CHECK_FALSE(f.edit());
    CHECK_FALSE(f.tracker.check_write(k_file, WriteKind::overwrite, PartialReadAllowsOverwrite::yes));
  }

  TEST_CASE("a head/tail read after a whole read of the same content keeps the whole read")
  {
    Fixture f;
    f.read();
    f.read(k_file, ReadExtent::partial);
    CHECK_FALSE(f.overwrite());
  }

  TEST_CASE("the agent's own write becomes the new baseline")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "agent wrote this\n");
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("agent wrote this\n"));
    CHECK_FALSE(f.overwrite());
    f.disk.advance(k_tick);
    f.disk.write(k_file, "then a formatter\n");
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a write whose result is not what the agent wrote holds the agent to its content")
  {
    Fixture f;
    f.read();
    f.disk.write(k_file, "someone else\n");
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("agent wrote this\n"));
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a write's bytes at hand spare reading the file back while its stat is racy")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "agent wrote this\n");
    const int before = f.disk.hash_calls;
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("agent wrote this\n"),
                           ReadExtent::whole, 0, ExpectedBytes{"agent wrote this\n"});
    CHECK(f.disk.hash_calls == before);
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->hash == fsguard::testing::fake_hash("agent wrote this\n"));
    CHECK_FALSE(record->trusted_stat); // a stat never checked against the content
    CHECK(record->traits == content_traits("agent wrote this\n"));
    CHECK_FALSE(f.overwrite()); // compared by content, and found as written
    f.disk.advance(k_tick);
    f.disk.write(k_file, "then a formatter\n");
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a write's bytes at hand with their traits give the record those traits unscanned")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "a\rb");
    // Traits the bytes do not have: taken at their word, so none were scanned.
    const ContentTraits told{.valid_utf8 = false, .bare_cr = false};
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("a\rb"), ReadExtent::whole, 0,
                           ExpectedBytes{"a\rb", told});
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->traits == told);
    // Without them, the bytes are scanned.
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("a\rb"), ReadExtent::whole, 0,
                           ExpectedBytes{"a\rb"});
    record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->traits == content_traits("a\rb"));
  }

  TEST_CASE("a write's bytes at hand do not hide another writer that landed before the record")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "someone else\n"); // after the agent's write, before its record
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("agent wrote this\n"),
                           ReadExtent::whole, 0, ExpectedBytes{"agent wrote this\n"});
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
    CHECK(code_of(f.edit()) == VetoCode::changed);
  }

  TEST_CASE("a changed veto gives the size of what the agent wrote, not that of another writer's")
  {
    const std::string mine = "the agent wrote 28 bytes...\n";
    const std::string theirs = "someone else wrote 29 bytes.\n";
    REQUIRE(mine.size() == 28);
    REQUIRE(theirs.size() == 29);
    for (const bool bytes_at_hand : {true, false}) {
      CAPTURE(bytes_at_hand);
      Fixture f;
      f.read();
      f.disk.advance(k_tick);
      f.disk.write(k_file, theirs); // after the agent's write, before its record
      f.tracker.finish_write(k_file, fsguard::testing::fake_hash(mine), ReadExtent::whole, 0,
                             bytes_at_hand ? std::optional<ExpectedBytes>(ExpectedBytes{mine})
                                           : std::nullopt);
      const auto veto = f.overwrite();
      REQUIRE(code_of(veto) == VetoCode::changed);
      CHECK(veto->seen_size == (bytes_at_hand ? 28 : k_unknown_size)); // not "unchanged at 29"
      CHECK(veto->current_size == 29);
    }
  }

  TEST_CASE("a write's bytes at hand: a stat that could vouch is checked against the file")
  {
    Fixture f;
    f.read();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "agent wrote this\n");
    f.disk.advance(k_later); // recorded long after the write (a slow client)
    const int before = f.disk.hash_calls;
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("agent wrote this\n"),
                           ReadExtent::whole, 0, ExpectedBytes{"agent wrote this\n"});
    CHECK(f.disk.hash_calls > before); // read back: its stat vouches from now on
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->trusted_stat);
    const int checked = f.disk.hash_calls;
    CHECK_FALSE(f.overwrite());
    CHECK(f.disk.hash_calls == checked);
  }

  TEST_CASE("a write returns the record it leaves: the one find() gives, or none for a file gone")
  {
    Fixture f;
    const ReadStart start = f.tracker.begin_read(k_file);
    f.tracker.finish_read(k_file, start, ReadExtent::partial, ReadView::utf8_text, "cut at 3 lines");
    f.tracker.settle_reads();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "edited\n");
    // An edit keeps the partial view, and how it was cut, of the record it replaces.
    const SeenRecord* edited =
      f.tracker.finish_write(k_file, fsguard::testing::fake_hash("edited\n"), ReadExtent::partial);
    REQUIRE(edited != nullptr);
    CHECK(edited == f.tracker.find(k_file));
    CHECK(edited->hash == fsguard::testing::fake_hash("edited\n"));
    CHECK(edited->extent == ReadExtent::partial);
    CHECK(edited->partial_reason == "cut at 3 lines");

    const std::string created = "/ws/new.txt"; // no record before it
    f.disk.write(created, "created\n");
    const SeenRecord* written =
      f.tracker.finish_write(created, fsguard::testing::fake_hash("created\n"), ReadExtent::whole,
                             7, ExpectedBytes{"created\n"});
    REQUIRE(written != nullptr);
    CHECK(written == f.tracker.find(created));
    CHECK(written->hash == fsguard::testing::fake_hash("created\n"));
    CHECK(written->known_since == 7);
    CHECK(f.tracker.find(k_file) == edited); // the other record untouched

    f.disk.remove(created);
    CHECK(f.tracker.finish_write(created, fsguard::testing::fake_hash("created\n")) == nullptr);
    CHECK(f.tracker.find(created) == nullptr);
  }

  TEST_CASE("a file deleted after the read may be created again, and its record is dropped")
  {
    Fixture f;
    f.read();
    f.disk.remove(k_file);
    CHECK_FALSE(f.overwrite());
    CHECK(f.tracker.find(k_file) == nullptr);
    f.disk.write(k_file, "someone recreated it\n");
    CHECK(code_of(f.overwrite()) == VetoCode::not_read);
  }

  TEST_CASE("a failed or vanished read records nothing")
  {
    Fixture f;
    const ReadStart start = f.tracker.begin_read("/ws/missing.txt");
    f.tracker.finish_read("/ws/missing.txt", start, ReadExtent::whole, ReadView::utf8_text);
    CHECK(f.tracker.find("/ws/missing.txt") == nullptr);
  }

  TEST_CASE("a move carries the record to the new name")
  {
    Fixture f;
    f.read();
    f.disk.write("/ws/b.txt", "hello\n");
    f.disk.remove(k_file);
    f.tracker.finish_move(k_file, "/ws/b.txt");
    CHECK_FALSE(f.overwrite("/ws/b.txt"));
    CHECK(f.tracker.find(k_file) == nullptr);
  }

  TEST_CASE("directories pass to the server, other special files and stat errors fail closed")
  {
    Fixture f;
    CHECK_FALSE(f.overwrite("/ws"));
    f.disk.make_fifo("/ws/pipe");
    CHECK(code_of(f.overwrite("/ws/pipe")) == VetoCode::cannot_inspect);
    f.disk.fail_stat(k_file, EACCES);
    const auto veto = f.overwrite();
    CHECK(code_of(veto) == VetoCode::cannot_inspect);
    CHECK(veto->reason.find("denied") != std::string::npos);
  }

  TEST_CASE("forget drops the record so the file must be read again")
  {
    Fixture f;
    f.read();
    f.tracker.forget(k_file);
    CHECK(code_of(f.overwrite()) == VetoCode::not_read);
  }

  TEST_CASE("a read of a file that held still costs one stat, and is hashed after its response")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    CHECK(f.disk.hash_calls == 0);
    REQUIRE(f.tracker.find(k_file) != nullptr);
    CHECK(f.tracker.find(k_file)->hash_state == HashState::owed);
    f.tracker.settle_reads();
    CHECK(f.disk.hash_calls == 1);
    CHECK(f.tracker.find(k_file)->hash_state == HashState::known);
    CHECK(f.tracker.find(k_file)->hash == fsguard::testing::fake_hash("hello\n"));
    CHECK_FALSE(f.overwrite());
  }

  TEST_CASE("a change between a forwarded read and its hash is vetoed as changed")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "HELLO\n"); // after the agent saw "hello"
    f.tracker.settle_reads();
    CHECK(f.tracker.find(k_file)->hash_state == HashState::lost);
    CHECK_FALSE(f.tracker.find(k_file)->trusted_stat.has_value()); // no stat vouches for it
    const auto veto = f.overwrite();
    CHECK(code_of(veto) == VetoCode::changed);
    CHECK(veto->seen_size == 6);
    f.read();
    CHECK_FALSE(f.overwrite());
  }

  TEST_CASE("a metadata-only change before the hash also fails closed, as the content is unknown")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    f.disk.advance(k_tick);
    f.disk.chmod(k_file, 0600);
    f.tracker.settle_reads();
    CHECK(code_of(f.edit()) == VetoCode::changed);
  }

  TEST_CASE("a write checked while a read's hash is owed hashes first")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    CHECK_FALSE(f.overwrite());
    CHECK(f.tracker.find(k_file)->hash_state == HashState::known);
  }

  TEST_CASE("an owed read that changed before the write is checked is vetoed as changed")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    f.disk.advance(k_tick);
    f.disk.write(k_file, "HELLO\n");
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a head/tail read of an old file keeps an earlier whole read once it is hashed")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.read(k_file, ReadExtent::partial);
    CHECK(f.tracker.find(k_file)->extent == ReadExtent::whole);
    CHECK_FALSE(f.overwrite());
    f.disk.advance(k_tick);
    f.disk.write(k_file, "other\n");
    f.disk.advance(k_later);
    f.read(k_file, ReadExtent::partial); // the content differs from the whole read
    CHECK(code_of(f.overwrite()) == VetoCode::partial_read);
  }

  TEST_CASE("a move after a read whose hash is owed keeps nothing it cannot vouch for")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    f.disk.replace("/ws/b.txt", "hello\n");
    f.disk.remove(k_file);
    f.tracker.finish_move(k_file, "/ws/b.txt");
    CHECK(f.tracker.find("/ws/b.txt") == nullptr);
    CHECK(code_of(f.overwrite("/ws/b.txt")) == VetoCode::not_read);
  }

  TEST_CASE("a forwarded read whose file cannot be hashed afterwards records nothing")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded();
    f.disk.fail_hash(k_file, EACCES); // the stat still works and still matches
    f.tracker.settle_reads();
    CHECK(f.tracker.find(k_file) == nullptr);
    CHECK(code_of(f.overwrite()) == VetoCode::not_read);
  }

  TEST_CASE("a text read of bytes that are not valid UTF-8 licenses neither a write nor an edit")
  {
    Fixture f;
    f.disk.write(k_file, "caf\xE9\n"); // Latin-1: read_text_file showed "caf\uFFFD"
    f.read();
    const auto veto = f.overwrite();
    CHECK(code_of(veto) == VetoCode::lossy_read);
    CHECK(veto->path == k_file);
    CHECK(code_of(f.edit()) == VetoCode::lossy_read);
    f.disk.advance(k_later);
    f.disk.chmod(k_file, 0600); // same bytes, new metadata: still lossy
    CHECK(code_of(f.overwrite()) == VetoCode::lossy_read);
  }

  TEST_CASE("a lossy read is caught when its hash was owed, and with the stat fast path")
  {
    Fixture f;
    f.disk.write(k_file, "\xFF\xFE binary-ish\n");
    f.disk.advance(k_later);
    f.read_forwarded(); // recorded at once, hashed later
    REQUIRE(f.tracker.find(k_file)->hash_state == HashState::owed);
    CHECK(code_of(f.overwrite()) == VetoCode::lossy_read); // settles, then decides
    f.tracker.settle_reads();
    CHECK(code_of(f.overwrite()) == VetoCode::lossy_read); // stat alone vouches now
  }

  TEST_CASE("a write whose file's owed hash cannot be taken finds no record: it was not read")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read_forwarded(); // recorded at once, hashed later
    REQUIRE(f.tracker.find(k_file)->hash_state == HashState::owed);
    f.disk.fail_hash(k_file, EACCES); // the file stays; its bytes cannot be read
    CHECK(code_of(f.overwrite()) == VetoCode::not_read); // settling dropped the record
    CHECK(f.tracker.find(k_file) == nullptr);
  }

  TEST_CASE("after a read of the exact bytes, a non-UTF-8 file may be replaced whole but not edited")
  {
    Fixture f;
    f.disk.write(k_file, "caf\xE9\n");
    f.read(k_file, ReadExtent::whole, ReadView::bytes);
    CHECK_FALSE(f.overwrite());
    // edit_file reads the whole file as UTF-8 and writes it back.
    CHECK(code_of(f.edit()) == VetoCode::lossy_read);
  }

  TEST_CASE("valid UTF-8 is unaffected by the view it was read through")
  {
    Fixture f;
    f.disk.write(k_file, "caf\xC3\xA9 \xF0\x9F\x99\x82\n");
    f.read();
    CHECK_FALSE(f.overwrite());
    CHECK_FALSE(f.edit());
  }

  TEST_CASE("the agent's own write is exact: a later overwrite needs no read")
  {
    Fixture f;
    f.disk.write(k_file, "caf\xE9\n");
    f.read(k_file, ReadExtent::whole, ReadView::bytes);
    f.disk.write(k_file, "new\n");
    f.tracker.finish_write(k_file, fsguard::testing::fake_hash("new\n"));
    CHECK_FALSE(f.overwrite());
  }

  TEST_CASE("readline's lines are partial when a bare carriage return makes them disagree with the count of newlines")
  {
    Fixture f;
    f.disk.write(k_file, "step 1\rstep 2\rdone\nend\n");
    f.read(k_file, ReadExtent::whole, ReadView::utf8_lines);
    CHECK(f.tracker.find(k_file)->extent == ReadExtent::partial);
    CHECK(code_of(f.overwrite()) == VetoCode::partial_read);
    CHECK_FALSE(f.edit());

    // The same file hashed at once (its stat is racy) and after a hash owed.
    Fixture owed;
    owed.disk.write(k_file, "a\rb\n");
    owed.disk.advance(k_later);
    owed.read_forwarded(k_file, ReadExtent::whole, ReadView::utf8_lines);
    owed.tracker.settle_reads();
    CHECK(owed.tracker.find(k_file)->extent == ReadExtent::partial);

    Fixture plain;
    plain.disk.write(k_file, "a\r\nb\n");
    plain.read(k_file, ReadExtent::whole, ReadView::utf8_lines);
    CHECK_FALSE(plain.overwrite());
  }
}

TEST_SUITE("tracker")
{
  TEST_CASE("a file larger than the hash limit is never hashed, and a write to it is refused")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.set_max_hash_bytes(10);
    f.disk.advance(k_later);
    f.disk.write(k_file, std::string(100, 'x'));
    f.disk.advance(k_later);
    const int hashes = f.disk.hash_calls;
    const auto veto = f.overwrite();
    CHECK(code_of(veto) == VetoCode::cannot_inspect);
    CHECK(veto->reason.find("max_line_bytes") != std::string::npos);
    CHECK(f.disk.hash_calls == hashes);
    f.read(); // a read of it records nothing it cannot vouch for
    CHECK(f.disk.hash_calls == hashes);
  }

  TEST_CASE("a file of another size is changed without hashing it")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(k_later);
    f.disk.write(k_file, "a longer text\n");
    f.disk.advance(k_later);
    const int hashes = f.disk.hash_calls;
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
    CHECK(f.disk.hash_calls == hashes);
  }
}

TEST_SUITE("tracker")
{
  TEST_CASE("a write to a file over the hash limit is refused as cannot_inspect even after a read")
  {
    Fixture f;
    f.disk.set_max_hash_bytes(10);
    f.disk.write(k_file, std::string(100, 'x'));
    f.disk.advance(k_later);
    f.read();
    CHECK(code_of(f.edit()) == VetoCode::cannot_inspect);
  }
}

TEST_SUITE("tracker: saved records")
{
  // A record saved by `f`'s session, restored by a new session on the same
  // disk: whether it was taken, and the new tracker.
  struct Restored {
    bool taken = false;
    std::unique_ptr<Tracker> tracker;
  };

  Restored restore_in_new_session(Fixture& f, const std::string& path = k_file)
  {
    const auto saved = f.tracker.saved(100);
    Restored restored{false, std::make_unique<Tracker>(f.disk)};
    for (const auto& record : saved) {
      if (record.path == path) {
        restored.taken = restored.tracker->restore(record);
      }
    }
    return restored;
  }

  TEST_CASE("a record saved by one session licenses the first write of the next while the file is unchanged")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(k_later);
    const int hashes = f.disk.hash_calls;
    auto restored = restore_in_new_session(f);
    CHECK(restored.taken);
    CHECK(f.disk.hash_calls == hashes); // an old file: its stat vouches for it
    CHECK_FALSE(restored.tracker->check_write(k_file, WriteKind::overwrite,
                                              PartialReadAllowsOverwrite::no, 1));
  }

  TEST_CASE("a saved record of a file changed since is dropped, and a write is vetoed as not_read")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(k_later);
    f.disk.write(k_file, "hello, changed\n");
    f.disk.advance(k_later);
    auto restored = restore_in_new_session(f);
    CHECK_FALSE(restored.taken);
    CHECK(restored.tracker->find(k_file) == nullptr);
    CHECK(code_of(restored.tracker->check_write(k_file, WriteKind::edit,
                                                PartialReadAllowsOverwrite::no, 1))
          == VetoCode::not_read);
  }

  TEST_CASE("a saved record taken in the racy window is trusted only by the file's hash")
  {
    Fixture f; // written and read in the same tick: the stat cannot vouch
    f.read();
    const auto saved = f.tracker.saved(1);
    REQUIRE(saved.size() == 1);
    // The same size, the same tick: the stat stays the same, the content not.
    f.disk.write(k_file, "jello\n");
    Tracker next(f.disk);
    CHECK_FALSE(next.restore(saved.front()));
    f.disk.write(k_file, "hello\n");
    const int hashes = f.disk.hash_calls;
    CHECK(next.restore(saved.front()));
    CHECK(f.disk.hash_calls > hashes);
  }

  TEST_CASE("a saved partial read licenses edits but not a rewrite")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read(k_file, ReadExtent::partial);
    auto restored = restore_in_new_session(f);
    REQUIRE(restored.taken);
    CHECK_FALSE(restored.tracker->check_write(k_file, WriteKind::edit,
                                              PartialReadAllowsOverwrite::no, 1));
    CHECK(code_of(restored.tracker->check_write(k_file, WriteKind::overwrite,
                                                PartialReadAllowsOverwrite::no, 1))
          == VetoCode::partial_read);
  }

  TEST_CASE("a saved text view of bytes that are not UTF-8 still refuses a rewrite as lossy")
  {
    Fixture f;
    f.disk.write(k_file, "caf\xe9\n");
    f.disk.advance(k_later);
    f.read(k_file, ReadExtent::whole, ReadView::utf8_text);
    auto restored = restore_in_new_session(f);
    REQUIRE(restored.taken);
    CHECK(code_of(restored.tracker->check_write(k_file, WriteKind::overwrite,
                                                PartialReadAllowsOverwrite::no, 1))
          == VetoCode::lossy_read);
  }

  TEST_CASE("a saved record of a file that is gone, or now too large to hash, is dropped")
  {
    Fixture f;
    f.disk.write("/ws/b.txt", "b\n");
    f.disk.advance(k_later);
    f.read();
    f.read("/ws/b.txt");
    f.disk.remove(k_file);
    f.disk.set_max_hash_bytes(1);
    const auto saved = f.tracker.saved(10);
    Tracker next(f.disk);
    for (const auto& record : saved) {
      CHECK_FALSE(next.restore(record));
    }
  }

  TEST_CASE("only content the agent knows is saved: not a hash still owed, nor an unknown outcome")
  {
    Fixture f;
    f.disk.write("/ws/b.txt", "b\n");
    f.disk.write("/ws/c.txt", "c\n");
    f.disk.advance(k_later);
    f.read();
    f.read("/ws/b.txt");
    f.tracker.mark_unknown("/ws/b.txt");
    f.read_forwarded("/ws/c.txt"); // its hash is owed until settle_reads()
    auto saved = f.tracker.saved(10);
    REQUIRE(saved.size() == 1);
    CHECK(saved.front().path == k_file);
    f.tracker.settle_reads();
    CHECK(f.tracker.saved(10).size() == 2);
  }

  TEST_CASE("the records saved are the most recently taken, up to the limit")
  {
    Fixture f;
    for (const char* name : {"/ws/1", "/ws/2", "/ws/3"}) {
      f.disk.write(name, name);
      f.disk.advance(k_later);
      f.read(name);
    }
    const auto saved = f.tracker.saved(2);
    REQUIRE(saved.size() == 2);
    CHECK(saved[0].path == "/ws/3");
    CHECK(saved[1].path == "/ws/2");
  }

  TEST_CASE("a restored record keeps the moment it was read: a restart renews no read_ttl_s")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    f.disk.advance(50'000'000'000LL); // 50 s later, the server restarts
    auto restored = restore_in_new_session(f);
    REQUIRE(restored.taken);
    CHECK(restored.tracker->find(k_file)->seen_at_ns == f.tracker.find(k_file)->seen_at_ns);
    restored.tracker->set_read_ttl(std::chrono::seconds(60));
    CHECK_FALSE(restored.tracker->check_write(k_file, WriteKind::edit,
                                              PartialReadAllowsOverwrite::no, 1));
    f.disk.advance(20'000'000'000LL); // 70 s after the read
    CHECK(code_of(restored.tracker->check_write(k_file, WriteKind::edit,
                                                PartialReadAllowsOverwrite::no, 1))
          == VetoCode::expired);
  }

  TEST_CASE("the generation goes up when a read or a write changes the records, not on a look")
  {
    Fixture f;
    f.disk.advance(k_later);
    const auto before = f.tracker.generation();
    CHECK(f.tracker.find(k_file) == nullptr);
    CHECK(f.tracker.generation() == before);
    f.read();
    const auto after_read = f.tracker.generation();
    CHECK(after_read > before);
    f.tracker.finish_write(k_file, std::nullopt);
    CHECK(f.tracker.generation() > after_read);
  }
}

TEST_SUITE("tracker: a read settled from its answer's text")
{
  // A whole read of k_file, outside the racy window, whose answer was shown
  // at moment `shown_at`: its hash is owed.
  void read_owed(Fixture& f, std::uint64_t shown_at, ReadExtent extent = ReadExtent::whole,
                 ReadView view = ReadView::utf8_text)
  {
    const ReadStart start = f.tracker.begin_read(k_file);
    f.tracker.finish_read(k_file, start, extent, view, {}, shown_at);
  }

  ContentDigest digest_of(Fixture& f, const std::string& text)
  {
    return ContentDigest{f.disk.hash_of(text), content_traits(text)};
  }

  TEST_CASE("a read that held still is settled from the text its answer showed: the file is not read again")
  {
    Fixture f;
    f.disk.advance(k_later);
    read_owed(f, 7);
    const int hashes = f.disk.hash_calls;
    CHECK(f.tracker.settle_from_text(k_file, 7, digest_of(f, "hello\n"), 6));
    f.tracker.settle_reads();
    CHECK(f.disk.hash_calls == hashes);
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known);
    CHECK(record->hash == f.disk.hash_of("hello\n"));
    CHECK(record->extent == ReadExtent::whole);
    CHECK_FALSE(f.overwrite().has_value());
    f.disk.advance(k_later);
    f.disk.write(k_file, "changed\n"); // a change after the read is still caught
    CHECK(code_of(f.overwrite()) == VetoCode::changed);
  }

  TEST_CASE("a read paid from its text leaves the hashes other reads owe to settle_reads")
  {
    Fixture f;
    const std::string other = "/ws/b.txt";
    f.disk.write(other, "other\n");
    f.disk.advance(k_later);
    f.tracker.finish_read(other, f.tracker.begin_read(other), ReadExtent::whole,
                          ReadView::utf8_text, {}, 6);
    read_owed(f, 7);
    CHECK(f.tracker.settle_from_text(k_file, 7, digest_of(f, "hello\n"), 6));
    f.disk.advance(k_later);
    f.disk.write(other, "changed\n"); // after the read: what the agent saw is lost
    const int hashes = f.disk.hash_calls;
    f.tracker.settle_reads();
    CHECK(f.disk.hash_calls == hashes + 1); // the other file's, and only it
    const SeenRecord* record = f.tracker.find(other);
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::lost);
    CHECK(code_of(f.overwrite(other)) == VetoCode::changed);
    CHECK(f.tracker.find(k_file)->hash_state == HashState::known);
    CHECK_FALSE(f.overwrite().has_value());
  }

  TEST_CASE("a text that may not be the file's bytes, or not this read's, leaves the hash to the file")
  {
    const auto refused = [](std::uint64_t shown_at, std::int64_t size, ReadExtent extent,
                            ReadView view) {
      Fixture f;
      f.disk.advance(k_later);
      read_owed(f, 7, extent, view);
      const bool taken = f.tracker.settle_from_text(k_file, shown_at, digest_of(f, "other!"), size);
      const int hashes = f.disk.hash_calls;
      f.tracker.settle_reads();
      const SeenRecord* record = f.tracker.find(k_file);
      REQUIRE(record != nullptr);
      // The record holds what the disk holds, whatever the text said.
      CHECK((record->hash_state != HashState::known || record->hash == f.disk.hash_of("hello\n")));
      return !taken && (f.disk.hash_calls > hashes || record->hash_state != HashState::owed);
    };
    CHECK(refused(7, 5, ReadExtent::whole, ReadView::utf8_text));   // not the stat's size
    CHECK(refused(8, 6, ReadExtent::whole, ReadView::utf8_text));   // another read's answer
    CHECK(refused(7, 6, ReadExtent::partial, ReadView::utf8_text)); // a head/tail read
    CHECK(refused(7, 6, ReadExtent::whole, ReadView::bytes));       // base64, not text
  }

  TEST_CASE("a file read again with the stat its known content had owes no hash at all")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    read_owed(f, 9);
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known); // nothing to decode or hash
    CHECK(record->hash == f.disk.hash_of("hello\n"));
    CHECK(record->known_since == 0); // known since the first read
    CHECK_FALSE(f.tracker.settle_from_text(k_file, 9, digest_of(f, "other!"), 6));
    f.disk.advance(k_later);
    f.disk.write(k_file, "hello again\n"); // changed: read again, it owes its hash
    f.disk.advance(k_later);
    read_owed(f, 10);
    CHECK(f.tracker.find(k_file)->hash_state == HashState::owed);
  }

  TEST_CASE("a read in the racy window or one that saw the file change owes no hash to settle")
  {
    Fixture f; // k_file was written just now: racy, fingerprinted at once
    read_owed(f, 7);
    CHECK_FALSE(f.tracker.settle_from_text(k_file, 7, digest_of(f, "other!"), 6));
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record != nullptr);
    CHECK(record->hash == f.disk.hash_of("hello\n"));
  }
}

TEST_SUITE("tracker: a change known only from fsguard's own text")
{
  // The file read whole as "hello\n", then shown by a veto's diff as `shown`.
  ContentHash show(Fixture& f, const std::string& shown, std::uint64_t at)
  {
    const ContentHash seen = f.tracker.find(k_file)->hash;
    f.disk.write(k_file, shown);
    f.disk.advance(k_later);
    const auto fingerprint = f.disk.fingerprint(k_file);
    REQUIRE(fingerprint);
    f.tracker.record_shown(k_file, *fingerprint, at, seen);
    return seen;
  }

  TEST_CASE("the agent's own write or edit keeps the change shown, and its base")
  {
    for (const bool through_upstream : {false, true}) {
      CAPTURE(through_upstream);
      Fixture f;
      f.disk.advance(k_later);
      f.read();
      const ContentHash read = f.tracker.find(k_file)->hash;
      show(f, "hello\nworld\n", 1);
      const ContentHash shown = f.tracker.find(k_file)->hash;
      f.disk.write(k_file, "HELLO\nworld\n"); // the agent's edit
      const ContentHash edited = f.disk.fingerprint(k_file)->hash;
      if (through_upstream) {
        f.tracker.record_known(k_file, ContentDigest{edited, {}}, 12, ReadExtent::whole,
                               ReadView::bytes, {}, 2, KnownFrom::own_change);
      } else {
        f.tracker.finish_write(k_file, edited, ReadExtent::whole, 2);
      }
      const SeenRecord* record = f.tracker.find(k_file);
      REQUIRE(record->shown_over);
      CHECK(record->shown_over->hash == read);
      CHECK(record->shown_over->shown == shown);
      CHECK(record->shown_over->until == k_never);
    }
  }

  TEST_CASE("a second change shown keeps the version read as the base; a read ends it")
  {
    Fixture f;
    f.disk.advance(k_later);
    f.read();
    const ContentHash read = f.tracker.find(k_file)->hash;
    show(f, "hello\nworld\n", 1);
    show(f, "hello\nworld\nagain\n", 2);
    const SeenRecord* record = f.tracker.find(k_file);
    REQUIRE(record->shown_over);
    CHECK(record->shown_over->hash == read);
    CHECK(record->shown_over->shown == record->hash);
    // Read whole at moment 3: calls sent before it may still rest on the version read.
    const ReadStart start = f.tracker.begin_read(k_file);
    f.tracker.finish_read(k_file, start, ReadExtent::whole, ReadView::utf8_text, {}, 3);
    f.tracker.settle_reads();
    record = f.tracker.find(k_file);
    REQUIRE(record->shown_over);
    CHECK(record->shown_over->until == 3);
    CHECK(record->shown_over->hash == read);
    // A change shown after that read is over the version read then.
    const ContentHash reread = record->hash;
    show(f, "bye\n", 4);
    CHECK(f.tracker.find(k_file)->shown_over->hash == reread);
  }

  TEST_CASE("read_ttl_s: a diff renews no clock, a head read only the edit's")
  {
    Fixture f;
    f.tracker.set_read_ttl(std::chrono::seconds(20));
    f.disk.advance(k_later);
    f.read();
    const std::int64_t read_at = f.tracker.find(k_file)->whole_seen_at_ns;
    show(f, "hello\nworld\n", 1); // k_later on: 10 s
    CHECK(f.tracker.find(k_file)->whole_seen_at_ns == read_at);
    CHECK(f.tracker.find(k_file)->seen_at_ns == read_at);
    f.read(k_file, ReadExtent::partial); // a head read of the version shown
    const SeenRecord* record = f.tracker.find(k_file);
    CHECK(record->extent == ReadExtent::whole);
    CHECK(record->whole_seen_at_ns == read_at);
    CHECK(record->seen_at_ns > read_at);
    f.disk.advance(k_later + 1); // 20 s after the whole read: expired for a whole write only
    CHECK(code_of(f.overwrite()) == VetoCode::expired);
    CHECK_FALSE(f.edit());
  }
}
