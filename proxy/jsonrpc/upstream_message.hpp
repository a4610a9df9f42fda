// An upstream line as fsguard reads it, once: its skim, the text of its
// first content block when that was decoded as it was skimmed, and its full
// parse, made only when something asks for it, and then once for all who
// ask. The guard reads answers through it, and never parses a line itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"

namespace fsguard {

class UpstreamMessage {
public:
  UpstreamMessage() = default;
  // Reads `line` at once (see read()): for tests and one-off readers.
  explicit UpstreamMessage(std::string_view line) { read(line); }
  // Its skim may point into its own strings: it stays where it is.
  UpstreamMessage(const UpstreamMessage&) = delete;
  UpstreamMessage& operator=(const UpstreamMessage&) = delete;

  // Starts reading `line` (without its newline), which must stay where it
  // is until the next begin() or clear(): what was read of the last line
  // is dropped.
  void begin(std::string_view line);

  // Decodes the text of the line's first content block, when the line is
  // an answer in the MCP SDK's bytes whose id lies at `id_from_ends`
  // (answer_id_from_ends()) and the text is at most `max_bytes` long (see
  // decode_sdk_answer_text()); the skim then need not scan it again.
  void decode_first_text(std::string_view id_from_ends, std::size_t max_bytes);

  // Skims the line begun; a line the skim cannot read (escaped or repeated
  // keys, or no object) is parsed instead, if it is nested no deeper than
  // k_max_nesting. False if it is not JSON.
  bool skim();

  // begin() and skim() at once.
  bool read(std::string_view line)
  {
    begin(line);
    return skim();
  }

  std::string_view line() const { return m_line; }
  const SkimmedMessage& skimmed() const { return m_skimmed; }

  // The text decoded by decode_first_text(), if it was; the guard may take
  // its bytes.
  DecodedAnswerText* first_text() { return m_first_text ? &*m_first_text : nullptr; }

  // The whole line parsed (discarded if it is not JSON): parsed the first
  // time it is asked for, and kept until the next line.
  const nlohmann::json& tree();

  // The method of a request, when its JSON text is a string; nothing
  // otherwise.
  std::optional<std::string> method() const;

  // Drops what was read of the line, and frees its tree.
  void clear();

private:
  std::string_view m_line;
  SkimmedMessage m_skimmed;
  std::optional<DecodedAnswerText> m_first_text;
  std::optional<nlohmann::json> m_tree;
  // The id's and method's JSON text of a line the skim could not read, as
  // its parse found them: m_skimmed points into them.
  std::string m_raw_id;
  std::string m_raw_method;
};

} // namespace fsguard
