// Per-change proof that a file fsguard checks is the file the server will
// write, where the server may see other files under its paths (path_map,
// a container, a sandbox, another mount namespace: see
// proxy/guard/guard_identity.cpp): before a change, fsguard asks the
// server's get_file_info of the very path and compares it with its own
// stat (tracker/file_identity). This class keeps those questions and their
// answers, each for the calls sent before it was asked.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracker/file_identity.hpp"
#include "tracker/file_state.hpp"
#include "tracker/string_key_hash.hpp"

namespace fsguard {

// The request line (ending in "\n") of fsguard's get_file_info `id` of the
// server's `path`, with the 2026 era's `envelope` as params._meta (null:
// none, in a 2025-era session).
std::string identity_request(const std::string& id, const std::string& path,
                             const nlohmann::json& envelope);

// What the upstream's answer `response` to such a request reports, in the server's `format`.
ServerFileReport identity_outcome(const nlohmann::json& response, FileInfoFormat format);

// The server's report of a file, with what fsguard saw of it when it asked.
struct IdentityReport {
  ServerFileReport server;
  std::optional<FileStat> local_when_asked; // none: missing, or not stat'able
  std::uint64_t asked_moment = 0;           // the guard's moment when it asked
};

class IdentityChecks {
public:
  using Clock = std::chrono::steady_clock;

  // How many times a file that changed on fsguard's side while it was asked
  // about is asked again before the change is refused.
  static constexpr int k_most_asks = 3;

  // The id of fsguard's next question (the number never repeats).
  std::string next_id(std::string_view prefix) { return std::string(prefix) + std::to_string(++m_next); }

  // fsguard asked the server about `file` (what a report is kept under:
  // the server's path and fsguard's file) with request `key` at `now`, the
  // guard's `moment`, when its own stat showed `local`.
  void asked(const std::string& file, std::string key, Clock::time_point now,
             std::uint64_t moment, std::optional<FileStat> local);
  // Whether a question about `file` is asked and not answered yet.
  bool asking(const std::string& file) const { return m_asked.contains(file); }
  // Takes the answer `report` to request `key`, come at `now`; returns its
  // file, if that answer is still awaited.
  std::optional<std::string> answered(const std::string& key, ServerFileReport report,
                                      Clock::time_point now);
  // The report of `file` asked at or after the moment `sent_at` (a call's:
  // an older one, asked for a call since cancelled, proves nothing about
  // the file now); null if none.
  const IdentityReport* known(const std::string& file, std::uint64_t sent_at) const;
  // Drops the report of `file`: it holds only for the decision it was asked for.
  void forget(const std::string& file) { m_known.erase(file); }
  // Counts one more question about `file` for the decision at hand; false
  // when it was asked k_most_asks times already. forget_asks() starts over.
  bool ask_again(const std::string& file) { return ++m_asks[file] < k_most_asks; }
  void forget_asks(const std::string& file) { m_asks.erase(file); }
  // The files asked before `now` - `timeout` and still unanswered, now
  // reported unknown; reports that came before then and were never used
  // are dropped.
  std::vector<std::string> expire(Clock::time_point now, Clock::duration timeout);

private:
  struct Asked {
    std::string key;
    Clock::time_point at{};
    std::uint64_t moment = 0;
    std::optional<FileStat> local;
  };
  struct Known {
    IdentityReport report;
    // When it came (not when it was asked): a call waiting for another
    // file's report keeps this one a whole timeout.
    Clock::time_point at{};
  };
  std::unordered_map<std::string, Asked, StringKeyHash> m_asked; // by file
  std::unordered_map<std::string, Known, StringKeyHash> m_known; // by file
  std::unordered_map<std::string, int, StringKeyHash> m_asks;    // by file
  std::uint64_t m_next = 0;
};

} // namespace fsguard
