#include "proxy/app/adopt_toml.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "proxy/app/adopt_replacements.hpp"

namespace fsguard {

namespace {

// One value in the text: where it lies, and what it is when fsguard needs
// to know (a one-line string, or an array of strings).
struct TomlValue {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::optional<std::string> string;               // a one-line basic or literal string
  std::optional<std::vector<std::string>> strings; // an array of such strings, no comments
};

// A key with its value: the whole dotted path from the document's root.
struct TomlLeaf {
  std::vector<std::string> path;
  TomlValue value;
  std::size_t key_parts = 0;       // parts written in the key (the rest: the table header)
  bool in_array_table = false;     // under a [[header]]
  std::size_t statement_end = 0;   // just past the statement's line end (0 in an inline table)
  std::size_t statement_begin = 0; // where its key starts
};

class TomlReader {
public:
  explicit TomlReader(std::string_view text) : m_text(text) {}

  // Reads the whole document into `leaves`; an error names the line.
  Result<std::vector<TomlLeaf>, std::string> read()
  {
    std::vector<std::string> table;
    bool array_table = false;
    while (true) {
      skip_blank_lines();
      if (m_at == m_text.size()) {
        break;
      }
      const std::size_t begin = m_at;
      if (peek() == '[') {
        array_table = m_text.substr(m_at).starts_with("[[");
        m_at += array_table ? 2 : 1;
        skip_space();
        auto key = read_key();
        if (!key) {
          return key.error();
        }
        table = *key;
        skip_space();
        if (!take(array_table ? "]]" : "]")) {
          return fail("a table header that does not end in ]");
        }
      } else {
        auto key = read_key();
        if (!key) {
          return key.error();
        }
        skip_space();
        if (!take("=")) {
          return fail("a key without =");
        }
        skip_space();
        std::vector<std::string> path = table;
        path.insert(path.end(), key->begin(), key->end());
        TomlLeaf leaf{path, {}, key->size(), array_table, 0, begin};
        const std::size_t first_leaf = m_leaves.size();
        m_leaves.push_back(leaf);
        auto value = read_value(path, array_table);
        if (!value) {
          return value.error();
        }
        m_leaves[first_leaf].value = *value;
        const bool inline_table = m_leaves.size() > first_leaf + 1;
        if (inline_table) {
          m_leaves.erase(m_leaves.begin() + static_cast<long>(first_leaf)); // its keys stand for it
        }
        skip_space();
        if (!end_line()) {
          return fail("more after a value");
        }
        if (!inline_table) {
          m_leaves.back().statement_end = m_at;
        }
        continue;
      }
      skip_space();
      if (!end_line()) {
        return fail("more after a table header");
      }
    }
    return m_leaves;
  }

  // The line `offset` is on, counting from 1.
  std::size_t line_of(std::size_t offset) const
  {
    const auto before = m_text.substr(0, offset);
    return static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  }

private:
  char peek() const { return m_at < m_text.size() ? m_text[m_at] : '\0'; }

  bool take(std::string_view expected)
  {
    if (m_text.substr(m_at).starts_with(expected)) {
      m_at += expected.size();
      return true;
    }
    return false;
  }

  std::string fail(std::string_view what) const
  {
    return "line " + std::to_string(line_of(m_at)) + " is TOML fsguard cannot read ("
           + std::string(what) + ")";
  }

  void skip_space()
  {
    while (peek() == ' ' || peek() == '\t') {
      ++m_at;
    }
  }

  void skip_comment()
  {
    if (peek() == '#') {
      while (m_at < m_text.size() && m_text[m_at] != '\n') {
        ++m_at;
      }
    }
  }

  // Takes an optional comment and the line's end; false if something else follows.
  bool end_line()
  {
    skip_comment();
    take("\r");
    return m_at == m_text.size() || take("\n");
  }

  void skip_blank_lines()
  {
    for (;;) {
      skip_space();
      skip_comment();
      if (!take("\r\n") && !take("\n")) {
        return;
      }
    }
  }

  // Blank space, line ends and comments inside an array; `commented` is set
  // when a comment was among them.
  void skip_array_space(bool& commented)
  {
    for (;;) {
      skip_space();
      if (peek() == '#') {
        commented = true;
        skip_comment();
      }
      if (!take("\r\n") && !take("\n")) {
        return;
      }
    }
  }

  static void append_utf8(std::string& out, std::uint32_t code)
  {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  struct Decoded {
    std::string text;
  };

  // A one-line basic ("...") or literal ('...') string, decoded.
  Result<Decoded, std::string> read_string()
  {
    const char quote = peek();
    ++m_at;
    std::string value;
    while (m_at < m_text.size() && m_text[m_at] != quote) {
      const char c = m_text[m_at];
      if (c == '\n') {
        return fail("a string that does not end on its line");
      }
      ++m_at;
      if (c != '\\' || quote == '\'') {
        value += c;
        continue;
      }
      const char escaped = peek();
      ++m_at;
      switch (escaped) {
      case 'b': value += '\b'; break;
      case 't': value += '\t'; break;
      case 'n': value += '\n'; break;
      case 'f': value += '\f'; break;
      case 'r': value += '\r'; break;
      case 'e': value += '\x1B'; break;
      case '"': value += '"'; break;
      case '\\': value += '\\'; break;
      case 'u':
      case 'U': {
        const std::size_t digits = escaped == 'u' ? 4 : 8;
        if (m_at + digits > m_text.size()) {
          return fail("a short \\u escape");
        }
        std::uint32_t code = 0;
        for (std::size_t i = 0; i < digits; ++i) {
          const char h = m_text[m_at + i];
          const int digit = h >= '0' && h <= '9' ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                   : -1;
          if (digit < 0) {
            return fail("a \\u escape that is not hexadecimal");
          }
          code = code * 16 + static_cast<std::uint32_t>(digit);
        }
        m_at += digits;
        append_utf8(value, code);
        break;
      }
      default:
        return fail("an escape TOML does not have");
      }
    }
    if (!take(std::string_view(&quote, 1))) {
      return fail("a string that does not end");
    }
    return Decoded{value};
  }

  // A dotted key: bare, "basic" or 'literal' parts.
  Result<std::vector<std::string>, std::string> read_key()
  {
    std::vector<std::string> parts;
    for (;;) {
      if (peek() == '"' || peek() == '\'') {
        auto part = read_string();
        if (!part) {
          return part.error();
        }
        parts.push_back(part->text);
      } else {
        const std::size_t begin = m_at;
        while (m_at < m_text.size()
               && (std::isalnum(static_cast<unsigned char>(m_text[m_at])) != 0
                   || m_text[m_at] == '_' || m_text[m_at] == '-')) {
          ++m_at;
        }
        if (m_at == begin) {
          return fail("a key fsguard cannot read");
        }
        parts.emplace_back(m_text.substr(begin, m_at - begin));
      }
      skip_space();
      if (!take(".")) {
        return parts;
      }
      skip_space();
    }
  }

  // Skips to the end of a multi-line string that opened with `delimiter`.
  Result<bool, std::string> skip_multiline_string(std::string_view delimiter)
  {
    m_at += delimiter.size();
    while (m_at < m_text.size()) {
      if (delimiter == "\"\"\"" && m_text[m_at] == '\\') {
        m_at += 2;
        continue;
      }
      if (take(delimiter)) {
        while (peek() == delimiter.front()) { // up to two quotes may end the content
          ++m_at;
        }
        return true;
      }
      ++m_at;
    }
    return fail("a multi-line string that does not end");
  }

  // Any value; reads into leaves the keys of inline tables under `path`.
  Result<TomlValue, std::string> read_value(const std::vector<std::string>& path, bool array_table)
  {
    TomlValue value;
    value.begin = m_at;
    const std::string_view rest = m_text.substr(m_at);
    if (rest.starts_with("\"\"\"") || rest.starts_with("'''")) {
      if (auto skipped = skip_multiline_string(rest.substr(0, 3)); !skipped) {
        return skipped.error();
      }
    } else if (peek() == '"' || peek() == '\'') {
      auto string = read_string();
      if (!string) {
        return string.error();
      }
      value.string = string->text;
    } else if (peek() == '[') {
      ++m_at;
      bool commented = false;
      std::vector<std::string> strings;
      bool all_strings = true;
      for (;;) {
        skip_array_space(commented);
        if (take("]")) {
          break;
        }
        auto element = read_value(path, array_table);
        if (!element) {
          return element.error();
        }
        if (element->string) {
          strings.push_back(*element->string);
        } else {
          all_strings = false;
        }
        skip_array_space(commented);
        if (take(",")) {
          continue;
        }
        if (!take("]")) {
          return fail("an array that does not end");
        }
        break;
      }
      if (all_strings && !commented) {
        value.strings = std::move(strings);
      }
    } else if (peek() == '{') {
      ++m_at;
      skip_space();
      while (!take("}")) {
        const std::size_t begin = m_at;
        auto key = read_key();
        if (!key) {
          return key.error();
        }
        skip_space();
        if (!take("=")) {
          return fail("a key without = in an inline table");
        }
        skip_space();
        std::vector<std::string> inner = path;
        inner.insert(inner.end(), key->begin(), key->end());
        const std::size_t index = m_leaves.size();
        m_leaves.push_back({inner, {}, key->size(), array_table, 0, begin});
        auto inner_value = read_value(inner, array_table);
        if (!inner_value) {
          return inner_value.error();
        }
        if (m_leaves.size() == index + 1) {
          m_leaves[index].value = *inner_value;
        } else {
          m_leaves.erase(m_leaves.begin() + static_cast<long>(index));
        }
        skip_space();
        if (take(",")) {
          skip_space();
        } else if (peek() != '}') {
          return fail("an inline table that does not end");
        }
      }
    } else {
      // A number, boolean or date: up to what ends a value (a date may hold a space).
      constexpr std::string_view k_value_ends = ",]}#\r\n";
      while (m_at < m_text.size() && k_value_ends.find(m_text[m_at]) == std::string_view::npos) {
        ++m_at;
      }
      while (m_at > value.begin && (m_text[m_at - 1] == ' ' || m_text[m_at - 1] == '\t')) {
        --m_at;
      }
      if (m_at == value.begin) {
        return fail("a missing value");
      }
    }
    value.end = m_at;
    return value;
  }

  std::string_view m_text;
  std::size_t m_at = 0;
  std::vector<TomlLeaf> m_leaves;
};

// One [mcp_servers.NAME] entry: its command and args keys, if given.
struct TomlEntry {
  const TomlLeaf* command = nullptr;
  const TomlLeaf* args = nullptr;
  std::string problem; // a key given twice
};

std::string toml_array(const std::vector<std::string>& strings)
{
  std::string array = "[";
  for (std::size_t i = 0; i < strings.size(); ++i) {
    array += (i == 0 ? "" : ", ") + toml_string(strings[i]);
  }
  return array + "]";
}

} // namespace

std::string toml_string(std::string_view value)
{
  std::string quoted = "\"";
  for (const char c : value) {
    switch (c) {
    case '"': quoted += "\\\""; break;
    case '\\': quoted += "\\\\"; break;
    case '\b': quoted += "\\b"; break;
    case '\t': quoted += "\\t"; break;
    case '\n': quoted += "\\n"; break;
    case '\f': quoted += "\\f"; break;
    case '\r': quoted += "\\r"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
        static constexpr char k_hex[] = "0123456789ABCDEF";
        quoted += "\\u00";
        quoted += k_hex[(c >> 4) & 0xF];
        quoted += k_hex[c & 0xF];
      } else {
        quoted += c;
      }
    }
  }
  return quoted + "\"";
}

Result<AdoptedConfig, std::string> adopt_toml_config(std::string_view text,
                                                     const std::string& fsguard_path,
                                                     Rewrite rewrite)
{
  AdoptedConfig adopted{std::string(text), {}, {}, 0};
  TomlReader reader(text);
  // A file that names no filesystem server needs no change, however it is written.
  if (rewrite == Rewrite::adopt && !names_filesystem_server(text)) {
    adopted.server_lists = text.find("mcp_servers") != std::string_view::npos ? 1 : 0;
    return adopted;
  }
  auto leaves = reader.read();
  if (!leaves) {
    return leaves.error();
  }
  std::map<std::string, TomlEntry> entries;
  for (const auto& leaf : *leaves) {
    if (leaf.path.front() != "mcp_servers") {
      continue;
    }
    adopted.server_lists = 1;
    if (leaf.path.size() != 3 || leaf.in_array_table
        || (leaf.path[2] != "command" && leaf.path[2] != "args")) {
      continue;
    }
    TomlEntry& entry = entries[leaf.path[1]];
    const TomlLeaf*& slot = leaf.path[2] == "command" ? entry.command : entry.args;
    if (slot != nullptr) {
      entry.problem = "line " + std::to_string(reader.line_of(leaf.value.begin)) + " gives "
                      + leaf.path[2] + " a second time";
    }
    slot = &leaf;
  }

  std::vector<const TomlLeaf*> accounted;
  std::vector<Replacement> replacements;
  for (const auto& [name, entry] : entries) {
    const std::string label = "mcp_servers." + name;
    if (!entry.problem.empty()) {
      return label + ": " + entry.problem;
    }
    if (entry.command == nullptr || !entry.command->value.string) {
      continue; // not read: checked below with the other keys
    }
    if (entry.args != nullptr && !entry.args->value.strings) {
      continue;
    }
    ServerLaunch launch{*entry.command->value.string, {}};
    if (entry.args != nullptr) {
      launch.args = *entry.args->value.strings;
    }
    if (rewrite == Rewrite::undo) {
      if (const auto inner = unguarded_launch(launch, fsguard_path); inner && entry.args) {
        replacements.push_back({entry.command->value.begin, entry.command->value.end,
                                toml_string(inner->command)});
        replacements.push_back(
          {entry.args->value.begin, entry.args->value.end, toml_array(inner->args)});
        adopted.adopted.push_back(label);
      }
      continue;
    }
    const auto kind = classify_launch(launch, fsguard_path);
    if (kind == LaunchKind::other) {
      continue;
    }
    accounted.push_back(entry.command);
    if (entry.args != nullptr) {
      accounted.push_back(entry.args);
    }
    if (kind == LaunchKind::fsguard) {
      adopted.guarded.push_back(label);
      continue;
    }
    if (const auto why = cannot_guard(launch); !why.empty()) {
      return label + " starts a filesystem server, but " + why;
    }
    const ServerLaunch guarded = guarded_launch(launch, fsguard_path);
    const TomlLeaf& command = *entry.command;
    replacements.push_back({command.value.begin, command.value.end, toml_string(guarded.command)});
    if (entry.args != nullptr) {
      replacements.push_back(
        {entry.args->value.begin, entry.args->value.end, toml_array(guarded.args)});
    } else {
      // A new args line under the command line, written as the command is.
      if (command.key_parts != 1 || command.statement_end == 0) {
        return label + " has no args, and its command is not a plain key of its table; add "
               "args by hand";
      }
      const auto previous_newline = text.rfind('\n', command.statement_begin);
      const std::size_t line_begin =
        previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
      const std::string indent(text.substr(line_begin, command.statement_begin - line_begin));
      const auto through_command = text.substr(0, command.statement_end);
      const std::string_view line_end = through_command.ends_with("\r\n") ? "\r\n" : "\n";
      const bool ended = through_command.ends_with('\n');
      replacements.push_back({command.statement_end, command.statement_end,
                              (ended ? "" : std::string(line_end)) + indent + "args = "
                                + toml_array(guarded.args) + (ended ? std::string(line_end) : "")});
    }
    adopted.adopted.push_back(label);
    if (const auto note = launch_note(launch); !note.empty()) {
      adopted.notes.push_back(label + " " + note);
    }
  }

  // No other value among the servers may name a filesystem server.
  for (const auto& leaf : *leaves) {
    if (rewrite == Rewrite::undo || leaf.path.front() != "mcp_servers"
        || std::find(accounted.begin(), accounted.end(), &leaf) != accounted.end()) {
      continue;
    }
    const auto value = text.substr(leaf.value.begin, leaf.value.end - leaf.value.begin);
    if (names_filesystem_server(value)) {
      std::string key;
      for (const auto& part : leaf.path) {
        key += (key.empty() ? "" : ".") + part;
      }
      return "line " + std::to_string(reader.line_of(leaf.value.begin)) + " (" + key
             + ") names a filesystem server in a form fsguard does not rewrite (only the string "
               "command and the array of strings args of a [mcp_servers.NAME] table, without "
               "comments inside); put fsguard in front of it by hand (docs/clients.md)";
    }
  }

  apply_replacements(adopted.text, std::move(replacements));
  return adopted;
}

} // namespace fsguard
