// Which files a successful read response actually showed the agent.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsguard {

// For read_multiple_files: given the response `text` and the paths as the
// agent `requested` them, whether each part was read (true) or failed.
// server-filesystem joins "<path>:\n<content>\n" and "<path>: Error - <msg>"
// parts with "\n---\n" in request order. Anything unexpected counts as not
// read, from that part on. The work is linear in the size of `text` (and
// of `requested`); a split that would cost more counts nothing as read.
// `work`, if given, receives the bytes compared after separators, for tests.
std::vector<bool> parts_read(std::string_view text, const std::vector<std::string>& requested,
                             std::size_t* work = nullptr);

// The same split, giving the content each part showed (a view into `text`),
// or nothing for a part that failed or cannot be told apart.
std::vector<std::optional<std::string_view>>
parts_shown(std::string_view text, const std::vector<std::string>& requested,
            std::size_t* work = nullptr);

} // namespace fsguard
