// The writes of other fsguard sessions ("shared_ledger"): every session that
// shares a ledger tells it the writes it let through, so that a `changed`
// veto can name the session whose write is on disk. Advisory: it only
// names a cause, and never decides a write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/file_state.hpp"

namespace fsguard {

// A write another fsguard session let through.
struct OtherWrite {
  std::string client; // that session's clientInfo.name, as it was given
  std::int64_t pid = 0; // of its fsguard process
  std::int64_t at_ns = 0; // when it was recorded (wall clock)
};

class SharedLedger {
public:
  virtual ~SharedLedger() = default;

  // Tells the ledger that this session's client `client` wrote `path`
  // (canonical), leaving content `hash`, at `at_ns` (wall clock). Failures
  // are the ledger's to report; the write stands either way.
  virtual void record(const std::string& path, const ContentHash& hash, std::int64_t at_ns,
                      std::string_view client) = 0;

  // The latest write of `path` by another session that left `hash` and was
  // recorded after `since_ns`; nothing if there is none, or the ledger
  // cannot tell.
  virtual std::optional<OtherWrite> who_wrote(const std::string& path, const ContentHash& hash,
                                              std::int64_t since_ns) = 0;
};

// The cause of a change `write` made, as a veto says it at `now_ns`:
// "by another agent session (claude-code, pid 4242) 40 s ago". The client's
// name is cut to 64 bytes, and control characters in it are dropped: it
// comes from another process, and goes into text the agent reads.
std::string describe_other_write(const OtherWrite& write, std::int64_t now_ns);

} // namespace fsguard
