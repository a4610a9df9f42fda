// fuzz_ledger's model of the agent: what it knew of each file and since
// when, and what it knew when it sent each call; and the judgment, from
// that alone, whether a change destroys only content it knew. It learns
// only what the session driver says it was shown.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent_knowledge.hpp"

namespace fsguard::fuzz {

class AgentModel {
public:
  using Clock = std::chrono::steady_clock;
  using Files = std::map<std::string, Known>;
  // A move the agent sent: source, destination.
  using Move = std::pair<std::string, std::string>;

  // `files`: every path a file can have, for moves of directories.
  explicit AgentModel(std::vector<std::string> files) : m_files(std::move(files)) {}

  // The contents the agent knows `file` to hold now.
  const Known& known(const std::string& file) { return m_known[file]; }

  // The agent learns that `file` holds `content`, as `how` says.
  void learn(const std::string& file, const std::string& content, Knowledge how)
  {
    m_known[file][content] |= how;
  }

  // fsguard showed the agent in its own text (a diff, a note) at `now` that
  // `file` holds `content`: the agent knows it whole k_take_in_time later,
  // from that text alone.
  void show(const std::string& file, const std::string& content, Clock::time_point now);

  // What was shown long enough before `now`, the agent knows now.
  void take_in(Clock::time_point now);

  // A content of `file` the agent knows, or is taking in, for which
  // `wanted` holds.
  std::optional<std::string>
  find(const std::string& file,
       const std::function<bool(const std::string&, const Knowledge&)>& wanted) const;

  // The agent was shown `file` at the disk's time `now_ns`, whole or not.
  void viewed(const std::string& file, bool whole, std::int64_t now_ns);

  // With read_ttl_s `ttl`, whether the agent's last view of `file` (a whole
  // one if `whole_needed`) is recent enough at `now_ns` to change it.
  bool recent(const std::string& file, bool whole_needed, std::chrono::seconds ttl,
              std::int64_t now_ns);

  // The agent sends call `key`, with `moves` sent and not yet done (it
  // knows where they put the files): what it knows now is what the call
  // rests on. Returns that.
  const Files& send(const std::string& key, const std::vector<Move>& moves);

  // What the agent knew of `file` when it sent call `key`.
  const Known& known_when_sent(const std::string& key, const std::string& file)
  {
    return m_when_sent[key][file];
  }

  // The move of call `key`, from `source` to `destination`, is done: what
  // the agent knew of the old names, and its views, are of the new ones,
  // and so for every call it sent after the move.
  void moved(const std::string& key, const std::string& source, const std::string& destination);

  // Whether a change leaving `leaves` (nothing: not known) in `file`, which
  // holds `now`, sent as call `key`, destroys only content the agent knew
  // whole: `now` as it saw it itself, or content that keeps, byte for byte,
  // the change since a version it saw itself (keeps_change).
  bool replaces_only_known(const std::string& key, const std::string& file,
                           const std::string& now, const std::optional<std::string>& leaves);

  // Whether the edit of `old_text` into `new_text` of `file`, which holds
  // `now`, sent as call `key`, changes only content the agent had a view
  // of, or lands where it would have landed on such content and keeps
  // every line changed since (a rebase).
  bool edits_only_known(const std::string& key, const std::string& file, const std::string& now,
                        const std::string& old_text, const std::string& new_text);

  // Prints (to stderr) why a change of `file`, holding `now`, by call
  // `key` is unsafe, and what the agent knew of it. Returns false.
  bool unsafe(const std::string& key, const std::string& file, const std::string& now,
              const char* why);

private:
  struct Shown {
    Clock::time_point at; // when the agent knows it
    std::string file;
    std::string content;
  };
  // Adds what `known` holds of `source` and the files below it to the same
  // names under `destination`.
  void transfer(Files& known, const std::string& source, const std::string& destination) const;
  bool below(const std::string& file, const std::string& source) const
  {
    return file == source || file.starts_with(source + "/");
  }

  std::vector<std::string> m_files;
  Files m_known;
  std::vector<Shown> m_taking_in;
  std::map<std::string, ViewClock> m_views;     // by file
  std::map<std::string, Files> m_when_sent;     // by call key
  std::map<std::string, std::uint64_t> m_order; // by call key: the order they were sent in
  std::uint64_t m_next_order = 0;
};

} // namespace fsguard::fuzz
