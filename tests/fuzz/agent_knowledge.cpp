#include "agent_knowledge.hpp"

#include <algorithm>
#include <set>

namespace fsguard::fuzz {

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = text.find('\n', at);
    const std::size_t stop = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(at, stop - at));
    at = stop;
  }
  return lines;
}

std::string joined_lines(const std::vector<std::string>& lines)
{
  std::string text;
  for (const auto& line : lines) {
    text += line;
  }
  return text;
}

std::optional<std::string> replaced_once(std::string text, const std::string& old_text,
                                         const std::string& new_text)
{
  const auto at = text.find(old_text);
  if (old_text.empty() || at == std::string::npos || text.find(old_text, at + 1) != std::string::npos) {
    return std::nullopt;
  }
  return text.replace(at, old_text.size(), new_text);
}

std::optional<std::string> merged_by_line(const std::string& base, const std::string& ours,
                                          const std::string& theirs)
{
  const auto b = lines_of(base);
  const auto o = lines_of(ours);
  const auto t = lines_of(theirs);
  if (b.size() != o.size() || b.size() != t.size()) {
    return std::nullopt;
  }
  std::vector<std::string> merged;
  for (std::size_t index = 0; index < b.size(); ++index) {
    if (o[index] == b[index]) {
      merged.push_back(t[index]);
    } else if (t[index] == b[index] || t[index] == o[index]) {
      merged.push_back(o[index]);
    } else {
      return std::nullopt;
    }
  }
  return joined_lines(merged);
}

bool keeps_change(const std::string& base, const std::string& now, const std::string& leaves)
{
  const auto base_lines = lines_of(base);
  const std::set<std::string> before(base_lines.begin(), base_lines.end());
  const auto left_lines = lines_of(leaves);
  const std::set<std::string> left(left_lines.begin(), left_lines.end());
  const auto now_lines = lines_of(now);
  return std::all_of(now_lines.begin(), now_lines.end(), [&](const std::string& line) {
    return before.contains(line) || left.contains(line);
  });
}

std::string fenced_diff_in(const std::string& text)
{
  const auto start = text.find("```diff\n");
  if (start == std::string::npos) {
    return {};
  }
  const auto end = text.find("\n```", start + 8);
  return end == std::string::npos ? std::string() : text.substr(start + 8, end + 1 - start - 8);
}

} // namespace fsguard::fuzz
