// What fsguard knows of the upstream's files when it cannot see them
// ("verify": "upstream"): the text of a file as the upstream's own read tool
// gave it to fsguard just before a change of it is decided. A Disk, so that
// the tracker decides exactly as it does on a real disk; it has no stat to
// vouch for anything, so every check compares content.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/upstream_message.hpp"
#include "tracker/disk.hpp"
#include "tracker/string_key_hash.hpp"
#include "tracker/tool_map.hpp"

namespace fsguard {

// What the upstream said of one file when fsguard read it.
struct UpstreamRead {
  enum class Outcome { text, missing, failed };
  Outcome outcome = Outcome::failed;
  std::string text;   // text: the file's content as the read tool shows it
  std::string reason; // failed: why, in the server's words
};

// The tool fsguard reads whole files with through the upstream, and the
// argument that names the file.
struct VerifyTool {
  std::string name;
  std::string path_argument;
};

// The tool of `tools` that reads a whole file as text and shows nothing but
// its text (read_text_file where there is one), if any.
std::optional<VerifyTool> verify_tool(const ToolMap& tools);

// The request line (ending in "\n") of fsguard's read `id` of `path` with
// `tool`, carrying `envelope` (SessionEra::own_envelope()) as its _meta.
std::string verify_request(const std::string& id, const VerifyTool& tool,
                           const std::string& path, const nlohmann::json& envelope = nullptr);

// What the upstream's `answer` to such a read says of the file. A
// successful answer is decoded without asking for its tree.
UpstreamRead read_outcome(UpstreamMessage& answer);

// The digest of `text` as a read tool showed it: XXH3-128 of its bytes, and
// as not valid UTF-8 when it holds U+FFFD (which a server shows in place of
// bytes that are not UTF-8; a write of the text would destroy them).
ContentDigest shown_text_digest(std::string_view text);

class UpstreamView final : public Disk {
public:
  using Clock = std::chrono::steady_clock;

  // `clock` is the disk fsguard was given, asked only for the time.
  explicit UpstreamView(Disk& clock) : m_clock(clock) {}

  // fsguard asked the upstream for `file` (canonical) with request `key` at `now`.
  void asked(const std::string& file, std::string key, Clock::time_point now);
  // Whether a read of `file` is asked and not answered yet.
  bool asking(const std::string& file) const { return m_asked.contains(file); }
  // Takes the answer `read` to request `key`; returns its file, if that
  // answer is still awaited (a later read of the file replaces an earlier one).
  std::optional<std::string> answered(const std::string& key, UpstreamRead read);
  // Whether the upstream's answer for `file` is at hand.
  bool knows(const std::string& file) const { return m_known.contains(file); }
  // The upstream's answer for `path` at hand; null if none.
  const UpstreamRead* known(const std::string& path) const;
  // Drops what the upstream said of `file`: it holds only for the decision
  // it was asked for.
  void forget(const std::string& file) { m_known.erase(file); }
  // Drops every answer at hand.
  void forget_all() { m_known.clear(); }
  // Drops the reads asked of `path` and of files below it, whose answers
  // may tell of a file that a change now replaces: their late answers are
  // ignored, and a call waiting for one asks again.
  void drop_asks_at(const std::string& path);
  // Takes `read` as what the upstream says of `file` (fsguard's own finding
  // when it could not ask).
  void learn(const std::string& file, UpstreamRead read) { m_known[file] = std::move(read); }
  // The files asked before `before` and still unanswered, now taken as failed.
  std::vector<std::string> expire(Clock::time_point before);

  Result<FileStat, DiskError> stat(const std::string& path) override;
  Result<ContentDigest, DiskError> hash(const std::string& path) override;
  // Every path is its own real path: fsguard cannot see the server's links.
  Result<std::string, DiskError> real_path(const std::string& path) override;
  // A normal `path` is left as it is.
  std::optional<DiskError> make_real_path(std::string&) override { return std::nullopt; }
  std::optional<std::int64_t> birth_seconds(const std::string&) override { return std::nullopt; }
  Result<std::string, DiskError> read(const std::string& path) override;
  ContentHash hash_of(std::string_view bytes) override;
  Result<std::vector<std::string>, DiskError> list_directory(const std::string& path) override;
  std::int64_t now_ns() override { return m_clock.now_ns(); }
  // The stat and digest of the one text the upstream gave.
  Result<Fingerprint, DiskError> fingerprint(const std::string& path) override;

private:
  struct Asked {
    std::string key;
    Clock::time_point at{};
  };
  // The failure of `path` when nothing (or a failure) is known of it.
  DiskError unknown(const std::string& path) const;

  std::unordered_map<std::string, Asked, StringKeyHash> m_asked;       // by file
  std::unordered_map<std::string, UpstreamRead, StringKeyHash> m_known; // by file
  std::int64_t m_stats = 0; // makes every stat differ, so none vouches for content
  Disk& m_clock;
};

} // namespace fsguard
