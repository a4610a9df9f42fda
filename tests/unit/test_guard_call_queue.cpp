// The call queue alone, as ninja tests its Plan before its Builder: calls
// are names and files, with no JSON-RPC and no JSON at all.
#include "proxy/guard/call_queue.hpp"

#if defined(INCLUDE_NLOHMANN_JSON_FWD_HPP_) || defined(INCLUDE_NLOHMANN_JSON_HPP_)
#error "the call queue must not depend on nlohmann::json"
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace fsguard;

namespace {

using Files = std::vector<std::optional<std::string>>;
using Queue = CallQueue<std::string>;

// A runner of named calls over the queue, as Guard drives it: a call that
// may run is started (its files marked busy), else held; when a call is
// done, the held ones are tried again in arrival order.
struct Plan {
  explicit Plan(ReadsWaitForChanges reads_wait = ReadsWaitForChanges::no) : queue(reads_wait) {}

  // The call `name` arrives, doing `use` to `files`; true if it runs now.
  bool arrive(const std::string& name, FileUse use, Files files,
              Queue::Clock::time_point at = {})
  {
    if (queue.must_wait(use, CallFiles(files))) {
      Queue::Held held{name};
      held.files.emplace(use, std::move(files));
      held.arrived = at;
      queue.hold(std::move(held));
      return false;
    }
    start(name, use, std::move(files));
    return true;
  }

  // The call `name`, in flight, is done with its files; the held calls are
  // tried again. Returns the names that ran, in order.
  std::vector<std::string> finish(const std::string& name)
  {
    const auto& [use, files] = running.at(name);
    queue.busy().mark(use, CallFiles(files), -1);
    running.erase(name);
    std::vector<std::string> ran;
    queue.retry([&](Queue::Held& held) {
      if (queue.must_wait(held.files->first, CallFiles(held.files->second))) {
        return false;
      }
      ran.push_back(held.payload);
      start(held.payload, held.files->first, std::move(held.files->second));
      return true;
    });
    return ran;
  }

  std::vector<std::string> held() const
  {
    std::vector<std::string> names;
    for (const auto& held : queue.held()) {
      names.push_back(held.payload);
    }
    return names;
  }

  void start(const std::string& name, FileUse use, Files files)
  {
    queue.busy().mark(use, CallFiles(files), +1);
    running.emplace(name, std::make_pair(use, std::move(files)));
  }

  Queue queue;
  std::map<std::string, std::pair<FileUse, Files>> running;
};

} // namespace

TEST_SUITE("guard: call queue")
{
  TEST_CASE("readers share a file")
  {
    Plan plan;
    CHECK(plan.arrive("read 1", FileUse::read, {"/ws/a"}));
    CHECK(plan.arrive("read 2", FileUse::read, {"/ws/a"}));
    CHECK(plan.held().empty());
    CHECK_FALSE(plan.queue.holds_calls());
  }

  TEST_CASE("a writer waits behind the readers of its file, and runs once the last is done")
  {
    Plan plan;
    CHECK(plan.arrive("read 1", FileUse::read, {"/ws/a"}));
    CHECK(plan.arrive("read 2", FileUse::read, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write", FileUse::change, {"/ws/a"}));
    CHECK(plan.queue.holds_calls());
    CHECK(plan.finish("read 1").empty());
    CHECK(plan.finish("read 2") == std::vector<std::string>{"write"});
    CHECK_FALSE(plan.queue.holds_calls());
  }

  TEST_CASE("a writer waits behind a writer of its file")
  {
    Plan plan;
    CHECK(plan.arrive("write 1", FileUse::change, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write 2", FileUse::change, {"/ws/a"}));
    CHECK(plan.arrive("write elsewhere", FileUse::change, {"/ws/b"}));
    CHECK(plan.finish("write 1") == std::vector<std::string>{"write 2"});
  }

  TEST_CASE("readers wait behind a writer in flight when reads are records (verify: upstream)")
  {
    Plan plan(ReadsWaitForChanges::yes);
    CHECK(plan.arrive("write", FileUse::change, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("read 1", FileUse::read, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("read 2", FileUse::read, {"/ws/a"}));
    CHECK(plan.arrive("read elsewhere", FileUse::read, {"/ws/b"}));
    CHECK(plan.finish("write") == std::vector<std::string>{"read 1", "read 2"});
  }

  TEST_CASE("a reader does not wait for a writer in flight when it stats the file itself")
  {
    // With verify: local a read's record is taken from its own stat and
    // hash, which the write cannot leave older than the write.
    Plan plan;
    CHECK(plan.arrive("write", FileUse::change, {"/ws/a"}));
    CHECK(plan.arrive("read", FileUse::read, {"/ws/a"}));
  }

  TEST_CASE("arrival order is kept among the calls waiting on one file")
  {
    Plan plan;
    CHECK(plan.arrive("write 1", FileUse::change, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write 2", FileUse::change, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write 3", FileUse::change, {"/ws/a"}));
    CHECK(plan.held() == std::vector<std::string>{"write 2", "write 3"});
    CHECK(plan.finish("write 1") == std::vector<std::string>{"write 2"});
    CHECK(plan.held() == std::vector<std::string>{"write 3"});
    CHECK(plan.finish("write 2") == std::vector<std::string>{"write 3"});
  }

  TEST_CASE("a later call waits behind a held one on its file even when no call is in flight on it")
  {
    Plan plan;
    CHECK(plan.arrive("read", FileUse::read, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("move", FileUse::move, {"/ws/a", "/ws/c"}));
    // c is idle, but the held move will replace it: the write waits behind it.
    CHECK_FALSE(plan.arrive("write c", FileUse::change, {"/ws/c"}));
    CHECK(plan.finish("read") == std::vector<std::string>{"move"});
    CHECK(plan.held() == std::vector<std::string>{"write c"});
    CHECK(plan.finish("move") == std::vector<std::string>{"write c"});
  }

  TEST_CASE("a move holds both its paths, and what lies above and below them")
  {
    Plan plan;
    CHECK(plan.arrive("move", FileUse::move, {"/ws/dir", "/ws/new"}));
    CHECK_FALSE(plan.arrive("read source", FileUse::read, {"/ws/dir"}));
    CHECK_FALSE(plan.arrive("write destination", FileUse::change, {"/ws/new"}));
    CHECK_FALSE(plan.arrive("read below", FileUse::read, {"/ws/dir/x"}));
    CHECK_FALSE(plan.arrive("read above", FileUse::read, {"/ws"}));
    CHECK(plan.arrive("read beside", FileUse::read, {"/ws/other"}));
    CHECK(plan.finish("move")
          == std::vector<std::string>{"read source", "write destination", "read below",
                                      "read above"});
  }

  TEST_CASE("a move waits for any call on a file below the directory it moves")
  {
    Plan plan;
    CHECK(plan.arrive("read below", FileUse::read, {"/ws/dir/x"}));
    CHECK_FALSE(plan.arrive("move", FileUse::move, {"/ws/dir", "/ws/new"}));
    CHECK(plan.finish("read below") == std::vector<std::string>{"move"});
  }

  TEST_CASE("a call on two files waits while either is busy, and holds both")
  {
    Plan plan;
    CHECK(plan.arrive("write b", FileUse::change, {"/ws/b"}));
    CHECK_FALSE(plan.arrive("change a and b", FileUse::change, {"/ws/a", "/ws/b"}));
    CHECK_FALSE(plan.arrive("write a", FileUse::change, {"/ws/a"})); // behind the held one
    CHECK(plan.finish("write b") == std::vector<std::string>{"change a and b"});
    CHECK(plan.held() == std::vector<std::string>{"write a"});
    CHECK(plan.finish("change a and b") == std::vector<std::string>{"write a"});
  }

  TEST_CASE("an unresolved path holds nothing")
  {
    Plan plan;
    CHECK(plan.arrive("write", FileUse::change, {std::nullopt, "/ws/a"}));
    CHECK(plan.arrive("write unresolved", FileUse::change, {std::nullopt}));
    CHECK_FALSE(plan.arrive("write a", FileUse::change, {"/ws/a"}));
  }

  TEST_CASE("a call done frees exactly its files")
  {
    Plan plan;
    CHECK(plan.arrive("write a", FileUse::change, {"/ws/a"}));
    CHECK(plan.arrive("read b", FileUse::read, {"/ws/b"}));
    CHECK(plan.arrive("read a", FileUse::read, {"/ws/a"}));
    plan.finish("write a");
    CHECK_FALSE(plan.queue.busy().idle("/ws/a")); // the read of it is still in flight
    plan.finish("read a");
    CHECK(plan.queue.busy().idle("/ws/a"));
    CHECK_FALSE(plan.queue.busy().idle("/ws/b"));
    CHECK_FALSE(plan.arrive("write b", FileUse::change, {"/ws/b"}));
    CHECK(plan.arrive("write a again", FileUse::change, {"/ws/a"}));
  }

  TEST_CASE("a file held for a check makes changes wait, and is freed by its release")
  {
    Plan plan;
    plan.queue.busy().hold("/ws/a");
    CHECK(plan.queue.holds_calls());
    CHECK(plan.arrive("read", FileUse::read, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write", FileUse::change, {"/ws/a"}));
    plan.queue.busy().free("/ws/a");
    CHECK(plan.finish("read") == std::vector<std::string>{"write"});
    CHECK_FALSE(plan.queue.holds_calls());
  }

  TEST_CASE("a call given up on frees its files: the calls behind it go ahead")
  {
    Plan plan;
    CHECK(plan.arrive("write 1", FileUse::change, {"/ws/a"}));
    CHECK_FALSE(plan.arrive("write 2", FileUse::change, {"/ws/a"}));
    // No answer in time: its owner marks it done without an answer.
    CHECK(plan.finish("write 1") == std::vector<std::string>{"write 2"});
    CHECK(plan.running.contains("write 2"));
  }

  TEST_CASE("held calls overdue at a moment are dropped, the others kept in order")
  {
    using namespace std::chrono_literals;
    Plan plan;
    const Queue::Clock::time_point t0{};
    CHECK(plan.arrive("write", FileUse::change, {"/ws/a"}, t0));
    CHECK_FALSE(plan.arrive("early", FileUse::change, {"/ws/a"}, t0 + 1s));
    CHECK_FALSE(plan.arrive("late 1", FileUse::change, {"/ws/a"}, t0 + 5s));
    CHECK_FALSE(plan.arrive("late 2", FileUse::change, {"/ws/a"}, t0 + 6s));
    const auto now = t0 + 4s;
    plan.queue.drop_if([&](const Queue::Held& held) { return now - held.arrived >= 3s; });
    CHECK(plan.held() == std::vector<std::string>{"late 1", "late 2"});
  }

  TEST_CASE("why a held call waits is kept with it")
  {
    Queue queue(ReadsWaitForChanges::no);
    Queue::Held directories{"relative write"};
    directories.wait = Queue::Wait::directories;
    queue.hold(std::move(directories));
    CHECK(queue.any_waits(Queue::Wait::directories));
    CHECK_FALSE(queue.any_waits(Queue::Wait::session));
    // Undescribed, it holds back no later call.
    const Files files{"/ws/a"};
    CHECK_FALSE(queue.must_wait(FileUse::change, CallFiles(files)));
    queue.clear();
    CHECK_FALSE(queue.holds_calls());
  }
}
