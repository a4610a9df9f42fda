#include "tracker/read_response.hpp"

namespace fsguard {

namespace {

constexpr std::string_view k_separator = "\n---\n";

bool starts_with_at(std::string_view text, std::size_t at, std::string_view prefix)
{
  return text.size() >= at && text.substr(at).starts_with(prefix);
}

bool is_header(std::string_view text, std::size_t at, const std::string& path)
{
  return starts_with_at(text, at, path + ":\n") || starts_with_at(text, at, path + ": Error - ");
}

// Where part `index` ends, searching from `from`: the one separator followed
// by the next path's header, or the end of `text` for the last part. npos if
// there is no such separator, or more than one (a file's content mimics a
// header, so the split is ambiguous).
std::size_t part_end(std::string_view text, std::size_t from, std::size_t index,
                     const std::vector<std::string>& requested)
{
  if (index + 1 == requested.size()) {
    return text.size();
  }
  const std::string& next = requested[index + 1];
  std::size_t found = std::string_view::npos;
  for (std::size_t at = text.find(k_separator, from); at != std::string_view::npos;
       at = text.find(k_separator, at + 1)) {
    if (is_header(text, at + k_separator.size(), next)) {
      if (found != std::string_view::npos) {
        return std::string_view::npos;
      }
      found = at;
    }
  }
  return found;
}

} // namespace

std::vector<bool> parts_read(std::string_view text, const std::vector<std::string>& requested)
{
  std::vector<bool> read(requested.size(), false);
  std::size_t at = 0;
  for (std::size_t index = 0; index < requested.size(); ++index) {
    const std::string& path = requested[index];
    if (!is_header(text, at, path)) {
      break;
    }
    const bool succeeded = starts_with_at(text, at, path + ":\n");
    const std::size_t end = part_end(text, at, index, requested);
    if (end == std::string_view::npos) {
      break;
    }
    read[index] = succeeded;
    at = end + k_separator.size();
  }
  return read;
}

} // namespace fsguard
